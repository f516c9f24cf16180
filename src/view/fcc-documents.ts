// Documents → what the shortcut view reads. From `--shortcuts` (as `kubectl get fcc,connections.networking.liqo.io,
// configurations.networking.liqo.io -A -o yaml` prints them): FCCs and the leaf's Liqo Connections and
// Configurations. From `--hub` (as `kubectl --context hub get ips.ipam.liqo.io,configurations.networking.liqo.io -A
// -o yaml` prints them): the hub's IPs and Configurations, and any FCCs. Single objects and Lists of them; anything
// else is reported and ignored.
import type { Document } from '../util/documents.ts';
import { decodeFcc, FCC_KIND, isFccObject, type ForeignClusterConnection } from '../core/fcc.ts';
import { decodeHubIp, IP_KIND, isHubIpObject, type HubIp } from '../core/hub-ipam.ts';
import { consumersOf, FOREIGN_CLUSTER_KIND, isForeignClusterObject } from '../core/hubs.ts';
import { field, isArray, isObject, stringField, type JsonObject } from '../core/json.ts';
import {
  CONFIGURATION_KIND, CONNECTION_KIND, decodeConfiguration, isConfigurationObject, isConnectionObject, tunnelStates,
  type LiqoConfiguration, type TunnelStates,
} from '../core/leaf-views.ts';

export interface FccDocuments {
  readonly fccs: readonly ForeignClusterConnection[];
  /** From the Connection documents; empty when there are none (the FCCs alone decide, as in cluster mode). */
  readonly tunnels: TunnelStates;
  /** The Configuration documents: the leaf's own views (local-overlap, hub-external, the stock path). */
  readonly configurations: readonly LiqoConfiguration[];
  /**
   * The leaf's consumers from its ForeignCluster documents (`kubectl get foreignclusters -o yaml`); undefined when
   * none were given: which hub an unbound `--hub` stands for is then not checked.
   */
  readonly consumers: readonly string[] | undefined;
  /** Documents that are none of these: said once in the log or on stderr, never fatal. */
  readonly ignored: readonly string[];
}

export interface HubDocuments {
  readonly fccs: readonly ForeignClusterConnection[];
  /** The IPs of offloaded pods with both addresses set. */
  readonly ips: readonly HubIp[];
  /** The hub's Configurations: where it sees each peer's pods. */
  readonly configurations: readonly LiqoConfiguration[];
  readonly ignored: readonly string[];
}

type Kind = 'fcc' | 'connection' | 'configuration' | 'ip' | 'foreign-cluster';

/** Every object of the documents, Lists unwrapped, with its kind and a name for messages. */
function objectsOf(documents: readonly Document[], visit: (kind: Kind | undefined, value: unknown, name: string) => void): void {
  const take = (value: unknown, name: string): void => {
    if (isFccObject(value)) return visit('fcc', value, name);
    if (isConnectionObject(value)) return visit('connection', value, name);
    if (isConfigurationObject(value)) return visit('configuration', value, name);
    if (isHubIpObject(value)) return visit('ip', value, name);
    if (isForeignClusterObject(value)) return visit('foreign-cluster', value, name);
    const listKind = isObject(value) ? stringField(value, 'kind') ?? '' : '';
    const items = isObject(value) && listKind.endsWith('List') ? field(value, 'items') : undefined;
    if (isObject(value) && isArray(items)) {
      items.forEach((item, i) => take(typedItem(value, listKind, item), `${name}/items/${i}`));
      return;
    }
    visit(undefined, value, name);
  };
  for (const document of documents) take(document.value, document.name);
}

/**
 * An item of a typed list (`IPList`, as the API itself answers a list) names neither its apiVersion nor its kind: the
 * list's say what it is. Items of a plain `List` (kubectl's) name their own, and what an item names is kept.
 */
function typedItem(list: JsonObject, listKind: string, item: unknown): unknown {
  if (listKind === 'List' || !isObject(item)) return item;
  const apiVersion = stringField(list, 'apiVersion');
  return {
    ...(apiVersion === undefined || Object.hasOwn(item, 'apiVersion') ? {} : { apiVersion }),
    ...(Object.hasOwn(item, 'kind') ? {} : { kind: listKind.slice(0, -'List'.length) }),
    ...item,
  };
}

function kindOf(value: unknown): string {
  const kind = isObject(value) ? stringField(value, 'kind') : undefined;
  return kind === undefined ? 'not a Kubernetes object' : `kind ${kind}`;
}

export function fccsFromDocuments(documents: readonly Document[]): FccDocuments {
  const fccs: ForeignClusterConnection[] = [];
  const connections: JsonObject[] = [];
  const configurations: LiqoConfiguration[] = [];
  const foreignClusters: JsonObject[] = [];
  const ignored: string[] = [];
  objectsOf(documents, (kind, value, name) => {
    if (kind === 'fcc' && isObject(value)) fccs.push(decodeFcc(value, name));
    else if (kind === 'foreign-cluster' && isObject(value)) foreignClusters.push(value);
    else if (kind === 'connection' && isObject(value)) connections.push(value);
    else if (kind === 'configuration' && isObject(value)) configurations.push(decodeConfiguration(value, name));
    else if (kind === 'ip') ignored.push(`${name}: an ${IP_KIND} of the hub's IPAM belongs in the --hub files, not with the leaf's objects`);
    else ignored.push(`${name}: ${kindOf(value)}, not a ${FCC_KIND}, ${CONNECTION_KIND}, ${CONFIGURATION_KIND} or ${FOREIGN_CLUSTER_KIND}`);
  });
  return {
    fccs, tunnels: tunnelStates(connections), configurations,
    consumers: foreignClusters.length === 0 ? undefined : consumersOf(foreignClusters), ignored,
  };
}

export function hubFromDocuments(documents: readonly Document[]): HubDocuments {
  const fccs: ForeignClusterConnection[] = [];
  const ips: HubIp[] = [];
  const configurations: LiqoConfiguration[] = [];
  const ignored: string[] = [];
  objectsOf(documents, (kind, value, name) => {
    if (kind === 'fcc' && isObject(value)) fccs.push(decodeFcc(value, name));
    else if (kind === 'configuration' && isObject(value)) configurations.push(decodeConfiguration(value, name));
    else if (kind === 'ip' && isObject(value)) {
      const ip = decodeHubIp(value, name);
      // Liqo's other IPs (the API server proxy's, a gateway's) carry no pod labels: not an offloaded pod, not a problem.
      if (ip !== undefined) ips.push(ip);
    } else if (kind === 'foreign-cluster') ignored.push(`${name}: a ${FOREIGN_CLUSTER_KIND} of the hub is not read (the leaf's own, in --shortcuts, say which hubs it has)`);
    else if (kind === 'connection') ignored.push(`${name}: a ${CONNECTION_KIND} of the hub is not read (the leaf's own say whether its tunnels are up)`);
    else ignored.push(`${name}: ${kindOf(value)}, not an ${IP_KIND}, ${CONFIGURATION_KIND} or ${FCC_KIND}`);
  });
  return { fccs, ips, configurations, ignored };
}
