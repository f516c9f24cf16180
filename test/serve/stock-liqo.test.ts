// The stock-Liqo path in cluster mode: the running `serve` process reads the hub's IPs and Configurations through
// --shortcuts-kubeconfig, resolves the addresses the hub's IPAM allocated, and its controller follows the hub's and
// the leaf's objects as they change. Test API servers speak the wire protocol and call the webhook on every write.
// (The same path against real kube-apiservers, Liqo's CRDs and Liqo's own writer: test/e2e.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configurationObject, connectionObject, fccObject, hubIpObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { DEFAULT_RESOURCES, FOREIGN_CLUSTER_CONNECTIONS, LIQO_IPS, startKubeApiServer, type KubeApiServer, type ResourceDefinition } from '../support/kube-api-server.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import { apiCallingWebhook, debugPairs, killServer, logRecords, metricValue, opsGet, storedAddresses, usablePairs, type WebhookedApi } from '../support/serve-cluster.ts';
import { createStockWorld } from '../support/stock-world.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const tls = ['--tls-cert', certs.certFile, '--tls-key', certs.keyFile];
const LONG = 15_000;

/** A hub serving Liqo's IPs as well, as a Liqo hub does. */
const WITH_IPS: readonly ResourceDefinition[] = [...DEFAULT_RESOURCES, LIQO_IPS];

/**
 * A leaf whose writes go through the webhook and a hub serving `hubResources`; `serve()` starts the product on them
 * (the hub read through --shortcuts-kubeconfig, no periodic resync), and everything is stopped afterwards.
 */
async function withStockClusters(hubResources: readonly ResourceDefinition[],
  run: (clusters: { leaf: WebhookedApi; hub: KubeApiServer; serve: () => Promise<RunningServer> }) => Promise<void>): Promise<void> {
  const leaf = await apiCallingWebhook(certs.ca);
  const hub = await startKubeApiServer({ resources: hubResources });
  let server: RunningServer | undefined;
  try {
    await run({ leaf, hub, serve: async () => {
      server = await startServer([...tls, '--kubeconfig', await leaf.api.kubeconfig(), '--shortcuts-kubeconfig', await hub.kubeconfig(),
        '--cluster-id', 'cluster2', '--resync-interval', '0']);
      leaf.callWebhookOf(server);
      return server;
    } });
  } finally {
    await killServer(server);
    await leaf.api.close();
    await hub.close();
  }
}

test('behind a stock hub, addresses its IPAM allocated are resolved to the pod\'s direct network, and follow the hub and the leaf', async () => {
  await withStockClusters(WITH_IPS, async ({ leaf, hub, serve }) => {
    await createStockWorld(leaf.api, hub);
    await leaf.api.create(sliceObject({ name: 'stored-before', addresses: [['10.71.0.12']] }));

    const server = await serve();
    await waitFor(async () => (await opsGet(server, '/readyz')).status === 200, { timeoutMs: LONG, description: '/readyz' });

    // The controller resolves the stored slice; the webhook resolves a new one, and only the endpoint's own pod.
    await waitFor(() => storedAddresses(leaf.api, 'stored-before') === '[["10.61.0.151"]]', { timeoutMs: LONG, description: 'the stored slice resolved' });
    await leaf.api.create(sliceObject({ name: 'created-later', addresses: [['10.71.0.12'], ['10.71.0.12']] }));
    assert.equal(storedAddresses(leaf.api, 'created-later'), '[["10.61.0.151"],["10.71.0.12"]]', 'web-1 is not the pod at 10.70.0.12');
    assert.equal(await metricValue(server, 'shortcut_webhook_hub_ips'), 1);
    assert.equal(await metricValue(server, 'shortcut_webhook_addresses_untouched_total{reason="no-hub-ip"}'), 1);
    assert.deepEqual((await debugPairs(server)).hub, { known: true, ips: 1, configurations: [
      { configuration: 'liqo-tenant-cluster3/cluster3', peer: 'cluster3', hubViewPodCIDRs: ['10.63.0.0/16'], peerPodCIDRs: ['10.60.0.0/16'] },
    ], directNetworks: [{ peer: 'cluster3', state: 'direct', detail: 'through liqo-tenant-cluster3/cluster3' }],
    // Liqo's own direct connections to the same peer would be repaired: the hub remapped it.
    directConnections: [{ peer: 'cluster3', state: 'repaired', reason: null, detail: 'the hub remapped cluster3 (10.63.0.0/16 -> 10.60.0.0/16): moved back' }] });

    // The tunnel to cluster3 goes down on the leaf: the controller restores the hub address.
    await leaf.api.updateStatus({ ...connectionObject('cluster3', 'Error') });
    await waitFor(() => storedAddresses(leaf.api, 'stored-before') === '[["10.71.0.12"]]', { timeoutMs: LONG, description: 'restored on tunnel down' });
    await leaf.api.updateStatus({ ...connectionObject('cluster3', 'Connected') });
    await waitFor(() => storedAddresses(leaf.api, 'stored-before') === '[["10.61.0.151"]]', { timeoutMs: LONG, description: 'resolved again' });

    // Each change of the direct network is logged once: up, down, up (the view's logger; the failover's own lines,
    // DirectNetworkLost and Restored, name the peer too).
    const said = logRecords(server).filter((r) => r['peer'] === 'cluster3' && r['state'] !== undefined).map((r) => r['state']);
    assert.deepEqual(said, ['direct', 'tunnel-down', 'direct']);

    // The hub reallocates 10.70.0.12 to another pod: the stored slice of web-0 never points at it.
    await hub.remove({ apiVersion: 'ipam.liqo.io/v1alpha1', kind: 'IP', namespace: 'demo', name: 'web-0' });
    await hub.create(hubIpObject({ pod: 'web-7', ip: '10.63.0.99', allocated: '10.70.0.12' }));
    await waitFor(() => storedAddresses(leaf.api, 'stored-before') === '[["10.71.0.12"]]', { timeoutMs: LONG, description: 'restored when the IP went to another pod' });
  });
});

test('a hub that serves no Liqo IPs leaves its addresses hub-external, says why once, and stays ready', async () => {
  await withStockClusters(DEFAULT_RESOURCES, async ({ leaf, serve }) => {
    await leaf.api.create(configurationObject({ peer: 'cluster1' }));
    const server = await serve();
    const readyz = await waitFor(async () => {
      const answer = await opsGet(server, '/readyz');
      return answer.status === 200 && answer.text.includes('IPAM') ? answer : undefined;
    }, { timeoutMs: LONG, description: '/readyz ready, with a note on the hub\'s IPAM' });
    assert.match(readyz.text, /note: the hub's IPAM objects are not known \(the hub serves no ips\.ipam\.liqo\.io\): addresses it allocated stay hub-external/);
    await leaf.api.create(sliceObject({ name: 'web', addresses: [['10.71.0.12']] }));
    assert.equal(storedAddresses(leaf.api, 'web'), '[["10.71.0.12"]]');
    assert.equal(await metricValue(server, 'shortcut_webhook_addresses_untouched_total{reason="hub-external"}'), 1);
    const said = logRecords(server).filter((r) => String(r.msg).includes('IPAM objects cannot be read'));
    assert.equal(said.length, 1, JSON.stringify(said));
    assert.deepEqual((await debugPairs(server)).hub, { known: false, why: 'the hub serves no ips.ipam.liqo.io' });
  });
});

test('a stock hub without the FCC CRD: no FCCs, said once; the replica is ready and resolves, and FCCs count once the CRD arrives', async () => {
  // Upstream Liqo alone: the hub serves Liqo's IPs and Configurations, and no ForeignClusterConnections at all.
  await withStockClusters(WITH_IPS.filter((r) => r !== FOREIGN_CLUSTER_CONNECTIONS), async ({ leaf, hub, serve }) => {
    await createStockWorld(leaf.api, hub);
    const server = await serve();
    const running = server;
    const readyz = await waitFor(async () => {
      const answer = await opsGet(running, '/readyz');
      return answer.status === 200 ? answer : undefined;
    }, { timeoutMs: LONG, description: '/readyz ready without FCCs' });
    assert.doesNotMatch(readyz.text, /stale|not synced/);
    await leaf.api.create(sliceObject({ name: 'web', addresses: [['10.71.0.12']] }));
    assert.equal(storedAddresses(leaf.api, 'web'), '[["10.61.0.151"]]');
    const said = logRecords(running).filter((r) => String(r.msg).includes('no ForeignClusterConnections to read'));
    assert.equal(said.length, 1, JSON.stringify(said));

    // The shortcut operator is installed later: its FCCs are read without a restart.
    hub.registerResource(FOREIGN_CLUSTER_CONNECTIONS);
    await hub.create(fccObject({ aPod: '10.64.0.0/16', aRemapped: '10.61.0.0/16' }));
    // Looked for at the list backoff's pace (doubling up to 30 s, jittered): the wait allows two of its longest steps.
    await waitFor(async () => (await usablePairs(running)).length === 1, { timeoutMs: 65_000, description: 'the FCC is read once its CRD is there' });

    // The CRD is deleted again under the open watch: no FCCs, still ready (a watch's 404 lists again, and the list
    // says the CRD is gone), not a source failing for good.
    hub.unregisterResource({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection' });
    await waitFor(async () => (await usablePairs(running)).length === 0, { timeoutMs: LONG, description: 'no FCCs once the CRD is gone' });
    assert.equal((await opsGet(running, '/readyz')).status, 200);
    assert.equal(logRecords(running).filter((r) => String(r.msg).includes('no ForeignClusterConnections to read')).length, 2, 'said again');
  });
});

test('a hub whose first IP list fails by chance (a 500): the first view waits for the retry, so a stored resolved slice is never restored and resolved again', async () => {
  await withStockClusters(WITH_IPS, async ({ leaf, hub, serve }) => {
    await createStockWorld(leaf.api, hub);
    await leaf.api.create(sliceObject({ name: 'resolved', addresses: [['10.61.0.151']], annotations: {
      'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.71.0.12"}' } }));
    hub.failNext({ method: 'GET', pathIncludes: '/ips', count: 1 }, 500);
    const server = await serve();
    const running = server;
    await waitFor(async () => (await metricValue(running, 'shortcut_webhook_slices_reconciled_total{result="unchanged"}')) >= 1,
      { timeoutMs: LONG, description: 'the first pass found the slice in step' });
    assert.equal(leaf.api.requests.filter((r) => r.method === 'PATCH').length, 0, 'no restore, no second rewrite');
    assert.equal(storedAddresses(leaf.api, 'resolved'), '[["10.61.0.151"]]');
    assert.equal(await metricValue(running, 'shortcut_webhook_hub_ips'), 1);
  });
});
