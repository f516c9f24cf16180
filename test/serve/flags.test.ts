// End to end, the running `shortcut-webhook serve` process and the flags that choose what it watches and does
// (SPEC §1, §2, §5, §6): --no-controller, --shortcuts-namespace, --shortcuts-kubeconfig, KUBECONFIG against
// --kubeconfig, and "each FCC's reason is logged once per change". The FCC source and the controller talk to test API
// servers speaking the real wire protocol, which call the process's webhook over HTTPS on every slice write.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import type { JsonObject } from '../../src/core/json.ts';
import { fccObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { startKubeApiServer, type RecordedRequest } from '../support/kube-api-server.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import {
  apiCallingWebhook, debugPairs, killServer, logRecords, metricValue, opsGet, storedAddresses, usablePairs,
} from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const tls = ['--tls-cert', certs.certFile, '--tls-key', certs.keyFile];
/** Generous: two processes and two API servers share a loaded 2-core machine. */
const LONG = 15_000;

const FCC_PATHS = /\/foreignclusterconnections(\/|$)/;
const isFccRequest = (r: RecordedRequest) => FCC_PATHS.test(r.path);
const isSliceRequest = (r: RecordedRequest) => r.path.includes('/endpointslices');

/** cluster2's side of an FCC with its own prefixes, so two FCCs never make the same (deduplicated) pair. */
function fccFor(name: string, namespace: string, hub: string, shortcut: string): JsonObject {
  return fccObject({ name, namespace, b: name.split('-')[1] ?? 'cluster3', aPod: hub, aRemapped: shortcut });
}

async function ready(server: RunningServer): Promise<void> {
  await waitFor(async () => (await opsGet(server, '/readyz')).status === 200, { timeoutMs: LONG, description: '/readyz answers 200' });
}

test('--no-controller: stored slices are left alone while writes are still rewritten, and the log says so', async () => {
  // Absence is shown by events, not by waiting: the quiet process takes the first sync and a change of pairs (each
  // of which makes a controller schedule a pass, as the control run beside it shows in its debug log), then stops on
  // SIGTERM. Once it has exited, whatever it would ever have written has been written.
  const control = await apiCallingWebhook(certs.ca);
  const quiet = await apiCallingWebhook(certs.ca);
  let withController: RunningServer | undefined;
  let withoutController: RunningServer | undefined;
  try {
    for (const { api } of [control, quiet]) {
      await api.create(fccObject());
      await api.create(sliceObject({ name: 'stored-before', addresses: [['10.63.0.1']] }));
    }
    // A 1 s resync: with a controller there would be a pass on the first sync and then every second.
    const common = [...tls, '--cluster-id', 'cluster2', '--resync-interval', '1s', '--log-level', 'debug'];
    [withController, withoutController] = await Promise.all([
      startServer([...common, '--kubeconfig', await control.api.kubeconfig()]),
      startServer([...common, '--kubeconfig', await quiet.api.kubeconfig(), '--no-controller']),
    ]);
    control.callWebhookOf(withController);
    quiet.callWebhookOf(withoutController);

    await waitFor(() => storedAddresses(control.api, 'stored-before') === '[["10.61.0.1"]]',
      { timeoutMs: LONG, description: 'the control run (controller on) patches the stored slice' });
    // The pass counts its writes and says it is done after its PATCH is stored: read below once it has.
    await waitFor(() => logRecords(withController!).some((r) => r.msg === 'reconcile pass done'),
      { timeoutMs: LONG, description: 'the control run\'s first pass ended' });
    assert.ok(control.api.requests.some((r) => r.method === 'PATCH' && isSliceRequest(r)), 'the control run patched through the API');

    const server = withoutController;
    const messages = logRecords(server).map((r) => r.msg);
    assert.equal(messages.filter((m) => m === 'controller off (--no-controller)').length, 1, server.lines.join('\n'));
    assert.ok(!messages.some((m) => m?.startsWith('controller off: no local cluster API')), 'a local cluster is configured');
    await ready(server);
    // Positive control: the webhook sees the pair and rewrites a write made through the API server.
    await quiet.api.create(sliceObject({ name: 'created-later', addresses: [['10.63.0.9']] }));
    assert.equal(storedAddresses(quiet.api, 'created-later'), '[["10.61.0.9"]]', 'the CREATE was patched by the webhook');
    // A change of the usable pairs is the other trigger of a pass; the webhook shows that the view has taken it.
    const fcc = quiet.api.get({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' });
    assert.ok(fcc);
    const status = fcc.status as { foreignClusterANetworking: object };
    await quiet.api.updateStatus({ ...fcc, status: { ...status, foreignClusterANetworking: { podCIDR: '10.63.0.0/16', remappedPodCIDR: '10.62.0.0/16' } } });
    await waitFor(async () => (await usablePairs(server)).join() === 'liqo/cluster2-cluster3:10.63.0.0/16->10.62.0.0/16',
      { timeoutMs: LONG, description: 'the quiet run sees the new pair' });
    await quiet.api.create(sliceObject({ name: 'created-after-change', addresses: [['10.63.0.10']] }));
    assert.equal(storedAddresses(quiet.api, 'created-after-change'), '[["10.62.0.10"]]');

    for (const result of ['patched', 'unchanged']) {
      assert.equal(await metricValue(server, `shortcut_webhook_slices_reconciled_total{result="${result}"}`) || 0, 0, result);
    }
    assert.ok(await metricValue(withController, 'shortcut_webhook_slices_reconciled_total{result="patched"}') >= 1);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.equal(storedAddresses(quiet.api, 'stored-before'), '[["10.63.0.1"]]', 'the stored slice was not patched');
    assert.deepEqual(quiet.api.requests.filter(isSliceRequest).map((r) => `${r.method} ${r.path}`), [],
      'the process neither lists nor patches slices');
    const scheduled = (run: RunningServer) => logRecords(run).filter((r) => r.msg === 'reconcile pass scheduled').length;
    assert.equal(scheduled(server), 0, 'no pass was ever scheduled');
    assert.ok(scheduled(withController) >= 1, 'the signal exists when a controller runs');
    assert.ok(logRecords(withController).some((r) => r.msg === 'reconcile pass done'));
  } finally {
    await Promise.all([killServer(withController), killServer(withoutController)]);
    await Promise.all([control.api.close(), quiet.api.close()]);
  }
});

test('--shortcuts-namespace: FCCs are listed and watched in that namespace only, and others are never used', async () => {
  const { api, callWebhookOf } = await apiCallingWebhook(certs.ca);
  let server: RunningServer | undefined;
  try {
    // Different prefixes on each side, so that an FCC used by mistake shows up as an extra pair.
    await api.create(fccFor('cluster2-cluster3', 'other', '10.63.0.0/16', '10.61.0.0/16'));
    await api.create(fccFor('cluster2-cluster4', 'liqo', '10.64.0.0/16', '10.62.0.0/16'));
    server = await startServer([...tls, '--kubeconfig', await api.kubeconfig(), '--cluster-id', 'cluster2',
      '--resync-interval', '0', '--shortcuts-namespace', 'liqo']);
    callWebhookOf(server);
    await ready(server);
    assert.deepEqual(await usablePairs(server), ['liqo/cluster2-cluster4:10.64.0.0/16->10.62.0.0/16']);
    assert.equal((await debugPairs(server)).fccs, 1, 'the FCC of namespace other is not in the view at all');

    // Seen by the watch, not the first list: one FCC outside the namespace, then one inside as the marker that the
    // watch has delivered everything up to it.
    await api.create(fccFor('cluster2-cluster5', 'other', '10.65.0.0/16', '10.66.0.0/16'));
    await api.create(fccFor('cluster2-cluster6', 'liqo', '10.67.0.0/16', '10.68.0.0/16'));
    await waitFor(async () => (await usablePairs(server!)).length >= 2,
      { timeoutMs: LONG, description: 'the watch delivers the FCC created in liqo' });
    assert.deepEqual(await usablePairs(server), [
      'liqo/cluster2-cluster4:10.64.0.0/16->10.62.0.0/16', 'liqo/cluster2-cluster6:10.67.0.0/16->10.68.0.0/16',
    ]);
    assert.equal(await metricValue(server, 'shortcut_webhook_pairs{state="usable"}'), 2);

    // The webhook, through the API server: only the prefixes of namespace liqo are rewritten.
    await api.create(sliceObject({ name: 'web', addresses: [['10.63.0.1'], ['10.64.0.1'], ['10.65.0.1'], ['10.67.0.1']] }));
    assert.equal(storedAddresses(api, 'web'), '[["10.63.0.1"],["10.62.0.1"],["10.65.0.1"],["10.68.0.1"]]');

    const fccRequests = api.requests.filter(isFccRequest);
    assert.ok(fccRequests.some((r) => !r.watch) && fccRequests.some((r) => r.watch), 'FCCs were listed and watched');
    for (const request of fccRequests) {
      assert.equal(request.path, '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections', `${request.method} ${request.path}`);
    }
    const watching = logRecords(server).find((r) => r.msg === 'watching ForeignClusterConnections');
    assert.equal(watching?.['namespace'], 'liqo');
  } finally {
    await killServer(server);
    await api.close();
  }
});

test('--shortcuts-kubeconfig: FCCs come from the hub; slices, Connections and the Lease stay on the local cluster', async () => {
  const local = await apiCallingWebhook(certs.ca);
  const hub = await startKubeApiServer();
  let server: RunningServer | undefined;
  try {
    await hub.create(fccFor('cluster2-cluster3', 'liqo', '10.63.0.0/16', '10.61.0.0/16'));
    await local.api.create(fccFor('cluster2-cluster4', 'liqo', '10.64.0.0/16', '10.62.0.0/16'));
    await local.api.create(sliceObject({ name: 'stored-before', addresses: [['10.63.0.1'], ['10.64.0.1']] }));
    const hubKubeconfig = await hub.kubeconfig();
    server = await startServer([...tls, '--kubeconfig', await local.api.kubeconfig(), '--shortcuts-kubeconfig', hubKubeconfig,
      '--cluster-id', 'cluster2', '--resync-interval', '0'], { POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'webhook-0' });
    local.callWebhookOf(server);
    await ready(server);
    assert.deepEqual(await usablePairs(server), ['liqo/cluster2-cluster3:10.63.0.0/16->10.61.0.0/16']);

    // The controller, on the local cluster, with the hub's pair only.
    await waitFor(() => storedAddresses(local.api, 'stored-before') === '[["10.61.0.1"],["10.64.0.1"]]',
      { timeoutMs: LONG, description: 'the stored local slice is converged with the hub\'s FCC' });
    await local.api.create(sliceObject({ name: 'created-later', addresses: [['10.63.0.2'], ['10.64.0.2']] }));
    assert.equal(storedAddresses(local.api, 'created-later'), '[["10.61.0.2"],["10.64.0.2"]]');
    const lease = await waitFor(() => local.api.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' }),
      { timeoutMs: LONG, description: 'the Lease on the local cluster' });
    assert.equal((lease.spec as { holderIdentity?: string }).holderIdentity, 'webhook-0');

    // A watch is open on the hub: an FCC created there later is used too.
    await hub.create(fccFor('cluster2-cluster5', 'liqo', '10.65.0.0/16', '10.66.0.0/16'));
    await waitFor(async () => (await usablePairs(server!)).length === 2, { timeoutMs: LONG, description: 'the watch on the hub' });

    const hubRequests = hub.requests.map((r) => `${r.method} ${r.path}`);
    assert.ok(hub.requests.some((r) => r.watch), 'FCCs are watched on the hub');
    // Besides FCCs, the hub's IPAM objects the stock-Liqo path resolves with: read, never written.
    const hubIpam = (r: { path: string }) => /^\/apis\/(ipam\.liqo\.io\/v1alpha1\/ips|networking\.liqo\.io\/v1beta1\/configurations)(\?|$)/.test(r.path);
    assert.deepEqual(hub.requests.filter((r) => !(isFccRequest(r) || hubIpam(r)) || r.method !== 'GET').map((r) => `${r.method} ${r.path}`), [],
      `only FCC and IPAM reads on the hub (no mirroring, no slices, Connections or Leases): ${hubRequests.join(', ')}`);
    assert.ok(hub.requests.some((r) => r.path.startsWith('/apis/ipam.liqo.io/v1alpha1/ips')), 'the hub\'s IPs are read on the hub');
    assert.deepEqual(local.api.requests.filter(isFccRequest).map((r) => `${r.method} ${r.path}`), [], 'no FCC requests on the local cluster');
    assert.ok(local.api.requests.some((r) => r.path.endsWith('/connections')), 'Liqo Connections are read on the local cluster');
    assert.ok(local.api.requests.some((r) => r.method === 'PATCH' && isSliceRequest(r)), 'slices are patched on the local cluster');
    assert.equal(hub.list({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' }).length, 0);
    assert.equal(local.api.list({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection' }).length, 1, 'nothing mirrored');
    const watching = logRecords(server).find((r) => r.msg === 'watching ForeignClusterConnections');
    assert.equal(watching?.['from'], hubKubeconfig);
  } finally {
    await killServer(server);
    await Promise.all([local.api.close(), hub.close()]);
  }
});

test('KUBECONFIG selects the cluster when --kubeconfig is not given', async () => {
  const { api, callWebhookOf } = await apiCallingWebhook(certs.ca);
  let server: RunningServer | undefined;
  try {
    await api.create(fccObject());
    await api.create(sliceObject({ name: 'stored-before', addresses: [['10.63.0.1']] }));
    const kubeconfig = await api.kubeconfig();
    server = await startServer([...tls, '--cluster-id', 'cluster2', '--resync-interval', '0'], { KUBECONFIG: kubeconfig });
    callWebhookOf(server);
    await ready(server);
    assert.deepEqual(await usablePairs(server), ['liqo/cluster2-cluster3:10.63.0.0/16->10.61.0.0/16'], 'FCCs read through KUBECONFIG');
    await waitFor(() => storedAddresses(api, 'stored-before') === '[["10.61.0.1"]]',
      { timeoutMs: LONG, description: 'the controller reconciles the KUBECONFIG cluster' });
    assert.equal(logRecords(server).find((r) => r.msg === 'watching ForeignClusterConnections')?.['from'], kubeconfig);
  } finally {
    await killServer(server);
    await api.close();
  }
});

test('--kubeconfig wins over KUBECONFIG', async () => {
  const chosen = await apiCallingWebhook(certs.ca);
  const decoy = await startKubeApiServer();
  let server: RunningServer | undefined;
  try {
    await chosen.api.create(fccObject());
    await chosen.api.create(sliceObject({ name: 'stored-before', addresses: [['10.63.0.1']] }));
    // The decoy has its own FCC and slice: using it for either the FCCs or the controller would show.
    await decoy.create(fccFor('cluster2-cluster4', 'liqo', '10.64.0.0/16', '10.62.0.0/16'));
    await decoy.create(sliceObject({ name: 'stored-before', addresses: [['10.64.0.1']] }));
    server = await startServer([...tls, '--kubeconfig', await chosen.api.kubeconfig(), '--cluster-id', 'cluster2', '--resync-interval', '0'],
      { KUBECONFIG: await decoy.kubeconfig() });
    chosen.callWebhookOf(server);
    await ready(server);
    assert.deepEqual(await usablePairs(server), ['liqo/cluster2-cluster3:10.63.0.0/16->10.61.0.0/16']);
    // The controller's pass on the chosen cluster comes after start-up, when a wrong choice would already have spoken.
    await waitFor(() => storedAddresses(chosen.api, 'stored-before') === '[["10.61.0.1"]]',
      { timeoutMs: LONG, description: 'the controller reconciles the --kubeconfig cluster' });
    assert.deepEqual(decoy.requests.map((r) => `${r.method} ${r.path}`), [], 'nothing asked of the KUBECONFIG cluster');
    assert.equal(storedAddresses(decoy, 'stored-before'), '[["10.64.0.1"]]');
  } finally {
    await killServer(server);
    await Promise.all([chosen.api.close(), decoy.close()]);
  }
});

test('file mode does not follow KUBECONFIG: the controller stays off and that cluster is never asked', async () => {
  const api = await startKubeApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-serve-flags-'));
  let server: RunningServer | undefined;
  try {
    await api.create(sliceObject({ name: 'stored-before', addresses: [['10.63.0.1']] }));
    const shortcuts = join(dir, 'fcc.yaml');
    writeFileSync(shortcuts, stringify(fccObject()));
    server = await startServer([...tls, '--shortcuts', shortcuts, '--cluster-id', 'cluster2', '--resync-interval', '1s'],
      { KUBECONFIG: await api.kubeconfig() });
    await ready(server);
    const messages = logRecords(server).map((r) => r.msg);
    assert.equal(messages.filter((m) => m?.startsWith('controller off: no local cluster API')).length, 1, server.lines.join('\n'));
    // Connections are read before the first snapshot and a controller passes right after it: by readiness, a
    // followed KUBECONFIG would already have been asked.
    assert.deepEqual(api.requests.map((r) => `${r.method} ${r.path}`), []);
    assert.equal(storedAddresses(api, 'stored-before'), '[["10.63.0.1"]]');
  } finally {
    await killServer(server);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an FCC\'s unusable reason is logged once per change, not on every edit of the shortcut files', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-serve-reasons-'));
  const file = join(dir, 'fccs.yaml');
  // By rename, as editors and ConfigMap volumes do: a poll never reads half a file.
  const writeFccs = (...fccs: JsonObject[]) => {
    writeFileSync(join(dir, '.fccs.tmp'), fccs.map((f) => stringify(f)).join('---\n'));
    renameSync(join(dir, '.fccs.tmp'), file);
  };
  const down = fccObject({ connected: false });
  writeFccs(down);
  const server = await startServer([...tls, '--shortcuts', file, '--cluster-id', 'cluster2']);
  const records = () => logRecords(server);
  const about = (fcc: string, msg: string, reason?: string) =>
    records().filter((r) => r['fcc'] === fcc && r.msg === msg && (reason === undefined || r['reason'] === reason));
  const loads = () => records().filter((r) => r.msg === 'shortcut view loaded from files').length;
  /** An edit was read when its own "loaded" line is there; the pair log of that read comes before it in the stream. */
  const edited = async (count: number, what: string) =>
    waitFor(() => loads() >= count, { timeoutMs: LONG, description: `the edit is read: ${what}` });
  try {
    await edited(1, 'first read');
    assert.equal(about('liqo/cluster2-cluster3', 'shortcut unusable', 'not-connected').length, 1, server.lines.join('\n'));

    // Liqo touches status.lastUpdated all the time; the gateway's MTU is not the webhook's business either.
    writeFccs({ ...down, spec: { ...(down.spec as object), networking: { mtu: 1400 } },
      status: { ...(down.status as object), lastUpdated: '2025-07-07T08:00:00Z' } });
    await edited(2, 'lastUpdated and mtu');
    // A new snapshot for sure (a second FCC, and a new phase for the first), still not connected: the logger
    // compares this FCC's state and must stay quiet about it.
    const stillDown = { ...down, status: { ...(down.status as object), phase: 'Pending', lastUpdated: '2025-07-07T08:01:00Z' } };
    const other = fccFor('cluster2-cluster4', 'liqo', '10.64.0.0/16', '10.62.0.0/16');
    writeFccs(stillDown, other);
    await edited(3, 'a second FCC and a new phase');
    assert.equal(about('liqo/cluster2-cluster4', 'shortcut usable').length, 1, 'the logger ran on that snapshot');
    assert.equal(about('liqo/cluster2-cluster3', 'shortcut unusable').length, 1, 'the unchanged reason was not logged again');

    // A new reason is a change: one more line, and it says what it was before.
    writeFccs(fccFor('cluster2-cluster3', 'liqo', '10.63.0.0/16', '10.61.0.0/24'), other);
    await edited(4, 'a prefix mismatch');
    const mismatch = about('liqo/cluster2-cluster3', 'shortcut unusable', 'prefix-mismatch');
    assert.equal(mismatch.length, 1, server.lines.join('\n'));
    assert.equal(mismatch[0]?.['before'], 'not-connected');
    assert.equal(about('liqo/cluster2-cluster3', 'shortcut unusable').length, 2);
    assert.equal(about('liqo/cluster2-cluster4', 'shortcut usable').length, 1);
    assert.equal(await metricValue(server, 'shortcut_webhook_pairs{state="prefix-mismatch"}'), 1);

    // The FCC now joins two other clusters: still there, so its reason is said; one deleted is only gone.
    writeFccs(fccObject({ name: 'cluster2-cluster3', namespace: 'liqo', a: 'cluster5', b: 'cluster3' }));
    await edited(5, 'the FCC moves to other clusters, the second is deleted');
    const moved = about('liqo/cluster2-cluster3', 'shortcut unusable', 'not-this-cluster');
    assert.equal(moved.length, 1, server.lines.join('\n'));
    assert.equal(moved[0]?.['before'], 'prefix-mismatch');
    assert.equal(about('liqo/cluster2-cluster4', 'shortcut gone').length, 1);
    assert.equal(about('liqo/cluster2-cluster3', 'shortcut gone').length, 0);
  } finally {
    await killServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
});
