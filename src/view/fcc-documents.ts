// Documents → what the shortcut view reads: FCCs and, as `kubectl get fcc,connections.networking.liqo.io,
// configurations.networking.liqo.io -A -o yaml` prints them next to the FCCs, the leaf's Liqo Connections and
// Configurations. Single objects and Lists of them; anything else is reported and ignored.
import type { Document } from '../util/documents.ts';
import { decodeFcc, FCC_KIND, isFccObject, type ForeignClusterConnection } from '../core/fcc.ts';
import { field, isArray, isObject, stringField, type JsonObject } from '../core/json.ts';
import {
  CONFIGURATION_KIND, CONNECTION_KIND, decodeConfiguration, isConfigurationObject, isConnectionObject, tunnelStates,
  type LiqoConfiguration, type TunnelStates,
} from '../core/leaf-views.ts';

export interface FccDocuments {
  readonly fccs: readonly ForeignClusterConnection[];
  /** From the Connection documents; empty when there are none (the FCCs alone decide, as in cluster mode). */
  readonly tunnels: TunnelStates;
  /** The Configuration documents: the leaf's own views (local-overlap, hub-external). */
  readonly configurations: readonly LiqoConfiguration[];
  /** Documents that are none of these: said once in the log or on stderr, never fatal. */
  readonly ignored: readonly string[];
}

export function fccsFromDocuments(documents: readonly Document[]): FccDocuments {
  const fccs: ForeignClusterConnection[] = [];
  const connections: JsonObject[] = [];
  const configurations: LiqoConfiguration[] = [];
  const ignored: string[] = [];
  const take = (value: unknown, name: string): void => {
    if (isFccObject(value)) {
      fccs.push(decodeFcc(value, name));
      return;
    }
    if (isConnectionObject(value)) {
      connections.push(value);
      return;
    }
    if (isConfigurationObject(value)) {
      configurations.push(decodeConfiguration(value, name));
      return;
    }
    const items = isObject(value) && (stringField(value, 'kind') ?? '').endsWith('List') ? field(value, 'items') : undefined;
    if (isArray(items)) {
      items.forEach((item, i) => take(item, `${name}/items/${i}`));
      return;
    }
    const kind = isObject(value) ? stringField(value, 'kind') : undefined;
    ignored.push(`${name}: ${kind === undefined ? 'not a Kubernetes object' : `kind ${kind}`}, not a ${FCC_KIND}, ${CONNECTION_KIND} or ${CONFIGURATION_KIND}`);
  };
  for (const document of documents) take(document.value, document.name);
  return { fccs, tunnels: tunnelStates(connections), configurations, ignored };
}
