// The README's examples as two live clusters: the leaf holds examples/stock-liqo/leaf.yaml (its Configurations and
// Connection), the stock EndpointSlice and the direct-connections ShadowEndpointSlice; the hub holds the IPs and
// Configurations of examples/stock-liqo/hub.yaml and examples/direct-connections/hub.yaml. The leaf stores the slices
// as they are once the webhook has reviewed Liqo's writes (the offline harness, rewrite, with the same files), as on a
// leaf where it runs. `status` against them is what the README shows, so the example cannot drift from the files or
// from the command.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { rewriteDocument } from '../../src/offline/rewrite-documents.ts';
import { loadShortcutFiles } from '../../src/view/shortcut-files.ts';
import { DEFAULT_RESOURCES, FOREIGN_CLUSTER_CONNECTIONS, LIQO_IPS, startKubeApiServer, type KubeApiServer, type ResourceDefinition } from '../support/kube-api-server.ts';

/** Liqo v1.2.0's CRD (apis/offloading/v1beta1/shadowendpointslice_types.go): namespaced, no status. */
export const SHADOW_ENDPOINT_SLICES: ResourceDefinition = {
  group: 'offloading.liqo.io', version: 'v1beta1', plural: 'shadowendpointslices', singular: 'shadowendpointslice',
  kind: 'ShadowEndpointSlice', namespaced: true, shortNames: ['shes', 'sheps', 'seps'],
};

/**
 * When the leaf's Connection status was last written, as the API server records it in managedFields (kubectl hides
 * them, so the example file has none): what `status` shows as SINCE.
 */
export const CONNECTION_STATUS_TIME = '2026-11-20T10:00:00Z';

const root = new URL('../../', import.meta.url);

function objectsOf(file: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(new URL(file, root), 'utf8')).flatMap((document) => {
    const value = document.toJS() as Record<string, unknown> | null;
    if (value === null) return [];
    return value['kind'] === 'List' ? (value['items'] as Record<string, unknown>[]) : [value];
  });
}

function withStatusTime(object: Record<string, unknown>): Record<string, unknown> {
  if (object['kind'] !== 'Connection') return object;
  const metadata = object['metadata'] as Record<string, unknown>;
  return { ...object, metadata: { ...metadata, managedFields: [{ manager: 'liqo-gateway', operation: 'Update', apiVersion: 'networking.liqo.io/v1beta1', subresource: 'status', time: CONNECTION_STATUS_TIME }] } };
}

export interface ReadmeWorld {
  readonly leaf: KubeApiServer;
  readonly hub: KubeApiServer;
  close(): Promise<void>;
}

export async function startReadmeWorld(): Promise<ReadmeWorld> {
  const leaf = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES, SHADOW_ENDPOINT_SLICES] });
  const hub = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES.filter((r) => r !== FOREIGN_CLUSTER_CONNECTIONS), LIQO_IPS] });
  const path = (file: string) => fileURLToPath(new URL(file, root));
  const loaded = await loadShortcutFiles({
    shortcuts: [path('examples/stock-liqo/leaf.yaml')], hub: [path('examples/stock-liqo/hub.yaml'), path('examples/direct-connections/hub.yaml')],
  });
  if (!loaded.ok) throw new Error(loaded.message);
  const snapshot = buildSnapshot({ version: 1, ...loaded.value });
  for (const object of objectsOf('examples/stock-liqo/leaf.yaml')) await leaf.create(withStatusTime(object));
  for (const file of ['examples/stock-liqo/endpointslice.yaml', 'examples/direct-connections/shadowendpointslice.yaml']) {
    for (const object of objectsOf(file)) {
      const reviewed = rewriteDocument({ name: file, value: object }, snapshot);
      if (typeof reviewed === 'string') throw new Error(reviewed);
      await leaf.create(reviewed.output as Record<string, unknown>);
    }
  }
  for (const file of ['examples/stock-liqo/hub.yaml', 'examples/direct-connections/hub.yaml']) {
    for (const object of objectsOf(file)) await hub.create(object);
  }
  return { leaf, hub, close: async () => { await leaf.close(); await hub.close(); } };
}
