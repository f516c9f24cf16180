// `shortcut-webhook explain --shadows`: the repair of ShadowEndpointSlices stored on a leaf, from serve's own view.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configurationObject, hubIpObject, shadowObject } from '../support/builders.ts';
import { DEFAULT_RESOURCES, FOREIGN_CLUSTER_CONNECTIONS, LIQO_IPS, startKubeApiServer, type ResourceDefinition } from '../support/kube-api-server.ts';
import { runCli } from '../support/run-cli.ts';
import { createStockWorld } from '../support/stock-world.ts';

/** Liqo v1.2.0's CRD (apis/offloading/v1beta1/shadowendpointslice_types.go): namespaced, no status. */
const SHADOW_ENDPOINT_SLICES: ResourceDefinition = {
  group: 'offloading.liqo.io', version: 'v1beta1', plural: 'shadowendpointslices', singular: 'shadowendpointslice',
  kind: 'ShadowEndpointSlice', namespaced: true, shortNames: ['shes', 'sheps', 'seps'],
};

test('explain --shadows prints per listed address what the repair makes of it, for the shadows as stored, and writes nothing', async () => {
  const leaf = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES, SHADOW_ENDPOINT_SLICES] });
  const hub = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES.filter((r) => r !== FOREIGN_CLUSTER_CONNECTIONS), LIQO_IPS] });
  try {
    await createStockWorld(leaf, hub);
    await hub.create(configurationObject({ peer: 'cluster4', remotePod: '10.60.0.0/16', remotePodView: '10.64.0.0/16' }));
    await hub.create(hubIpObject({ pod: 'api-1', ip: '10.64.0.7', allocated: '10.70.0.21' }));
    await leaf.create(shadowObject({
      name: 'api',
      endpoints: [{ addresses: ['10.63.0.40'], pod: 'api-0' }, { addresses: ['10.64.0.7'], pod: 'api-1' }, { addresses: ['10.200.0.31'], pod: 'api-2' }],
      data: { clusterAddresses: { cluster3: ['10.63.0.40'], cluster4: ['10.64.0.7'] } },
    }));
    const args = ['explain', '--shadows', '-n', 'demo', '--kubeconfig', await leaf.kubeconfig(), '--shortcuts-kubeconfig', await hub.kubeconfig()];
    const run = await runCli([...args, 'api', '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const explained = JSON.parse(run.stdout) as { slices: { kind: string; slice: string; listed: { input: string; output: string; cluster: string; outcome: string; reason: string | null }[] }[] };
    assert.deepEqual(explained.slices.map((s) => [s.kind, s.slice]), [['ShadowEndpointSlice', 'demo/api']]);
    assert.deepEqual(explained.slices[0]?.listed.map(({ input, output, cluster, outcome, reason }) => [input, output, cluster, outcome, reason]), [
      ['10.63.0.40', '10.60.0.40', 'cluster3', 'repaired', null],
      ['10.64.0.7', '10.70.0.21', 'cluster4', 'hub-path', 'no-shortcut'],
    ]);
    const table = await runCli([...args, '-l', 'kubernetes.io/service-name=web']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^shadowendpointslice demo\/api: ShadowEndpointSlice, cluster cluster2, hub cluster1, IPv4$/m);
    const missing = await runCli([...args, 'nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no ShadowEndpointSlice demo\/nope/);
    assert.deepEqual([...new Set(leaf.requests.map((request) => request.method))], ['GET'], 'read-only');
  } finally {
    await leaf.close();
    await hub.close();
  }
});
