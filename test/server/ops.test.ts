import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeConfiguration, tunnelStates } from '../../src/core/leaf-views.ts';
import { configurationObject, connectionObject, fcc } from '../support/builders.ts';
import { startHarness } from '../support/webhook-harness.ts';

async function get(url: string): Promise<{ status: number; body: string; type: string | null }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text(), type: response.headers.get('content-type') };
}

test('readiness waits for the first sync of the view, liveness does not', async () => {
  const harness = await startHarness({ synced: false });
  try {
    assert.equal((await get(`${harness.opsUrl}/healthz`)).status, 200);
    const notReady = await get(`${harness.opsUrl}/readyz`);
    assert.equal(notReady.status, 503);
    assert.match(notReady.body, /not synced/);
    harness.store.publishFccs([]);
    const ready = await get(`${harness.opsUrl}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(ready.body, 'ok\nnote: the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten\n',
      'ready, and says why nothing will change');
    harness.store.publishFccs([fcc()]);
    assert.equal((await get(`${harness.opsUrl}/readyz`)).body, 'ok\n');
  } finally {
    await harness.close();
  }
});

test('/metrics speaks the Prometheus text format with every metric of the contract', async () => {
  const harness = await startHarness({ fccs: [fcc()] });
  try {
    const metrics = await get(`${harness.opsUrl}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.type ?? '', /text\/plain/);
    for (const name of ['admission_requests_total', 'admission_duration_seconds', 'addresses_rewritten_total',
      'addresses_restored_total', 'pairs', 'view_last_sync_timestamp_seconds', 'view_watch_restarts_total', 'slices_reconciled_total']) {
      assert.match(metrics.body, new RegExp(`^# TYPE shortcut_webhook_${name} `, 'm'));
    }
    const lastSync = /^shortcut_webhook_view_last_sync_timestamp_seconds (\S+)$/m.exec(metrics.body);
    assert.ok(lastSync && Math.abs(Number(lastSync[1]) - Date.now() / 1000) < 60);
  } finally {
    await harness.close();
  }
});

test('/debug/pairs shows usable pairs and unusable FCCs with reasons', async () => {
  const harness = await startHarness({ fccs: [fcc(), fcc({ b: 'cluster4', connected: false }), fcc({ a: 'cluster5', b: 'cluster6' })], clusterId: 'cluster2' });
  try {
    const body = JSON.parse((await get(`${harness.opsUrl}/debug/pairs`)).body);
    assert.equal(body.synced, true);
    assert.equal(body.fccs, 3);
    assert.deepEqual(body.clusters, [{
      clusterId: 'cluster2',
      pairs: [{ fcc: 'liqo/cluster2-cluster3', peer: 'cluster3', hubPrefix: '10.63.0.0/16', shortcutPrefix: '10.61.0.0/16' }],
      unusable: [
        { fcc: 'liqo/cluster2-cluster4', peer: 'cluster4', reason: 'not-connected', detail: 'status.isConnected is not true (phase Connecting)' },
        { fcc: 'liqo/cluster5-cluster6', peer: null, reason: 'not-this-cluster', detail: 'connects cluster5 and cluster6, not cluster2 and another cluster' },
      ],
    }]);
  } finally {
    await harness.close();
  }
});

test('without --cluster-id, /debug/pairs shows every cluster the FCCs name', async () => {
  const harness = await startHarness({ fccs: [fcc()] });
  try {
    const body = JSON.parse((await get(`${harness.opsUrl}/debug/pairs`)).body);
    assert.deepEqual(body.clusters.map((c: { clusterId: string }) => c.clusterId), ['cluster2', 'cluster3']);
  } finally {
    await harness.close();
  }
});

test('/debug/pairs says plainly when the source holds no FCC at all, or none for the configured cluster', async () => {
  const empty = await startHarness({ fccs: [], clusterId: 'cluster2' });
  const unnamed = await startHarness({ fccs: [fcc()], clusterId: 'cluster9' });
  const named = await startHarness({ fccs: [fcc()], clusterId: 'cluster2' });
  const notSynced = await startHarness({ synced: false });
  try {
    const notes = async (harness: typeof empty) => JSON.parse((await get(`${harness.opsUrl}/debug/pairs`)).body).notes;
    assert.deepEqual(await notes(empty), ['the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten']);
    assert.deepEqual(await notes(unnamed), ['no ForeignClusterConnection names cluster cluster9: its slices are left as they are']);
    assert.deepEqual(await notes(named), []);
    assert.deepEqual(await notes(notSynced), [], 'before the first sync the view knows nothing yet: readyz says so');
  } finally {
    await Promise.all([empty.close(), unnamed.close(), named.close(), notSynced.close()]);
  }
});

test('/debug/pairs shows the leaf\'s Liqo Connections and Configurations the decisions read', async () => {
  const harness = await startHarness({ fccs: [fcc({ aPod: '10.200.0.0/16', aRemapped: '10.201.0.0/16' })], clusterId: 'cluster2' });
  try {
    harness.store.publishTunnels(tunnelStates([connectionObject('cluster3', 'Connected')]));
    harness.store.publishConfigurations([decodeConfiguration(configurationObject({ peer: 'cluster1' }))]);
    const body = JSON.parse((await get(`${harness.opsUrl}/debug/pairs`)).body);
    assert.deepEqual(body.leaf, {
      connections: { cluster3: 'Connected' },
      configurations: [{ configuration: 'liqo-tenant-cluster1/cluster1', peer: 'cluster1', ownPodCIDRs: ['10.60.0.0/16'], peerPodCIDRs: ['10.200.0.0/16'], peerExternalCIDRs: ['10.71.0.0/16'] }],
    });
    assert.equal(body.clusters[0].unusable[0].reason, 'local-overlap');
    assert.match(body.clusters[0].unusable[0].detail, /where the leaf sees cluster1's pods/);
  } finally {
    await harness.close();
  }
});

test('pairs{state} has a local-overlap series from the start', async () => {
  const harness = await startHarness({ fccs: [] });
  try {
    assert.match(await harness.metrics.registry.metrics(), /^shortcut_webhook_pairs\{state="local-overlap"\} 0$/m);
    assert.match(await harness.metrics.registry.metrics(), /^shortcut_webhook_addresses_untouched_total\{reason="hub-external"\} 0$/m);
  } finally {
    await harness.close();
  }
});
