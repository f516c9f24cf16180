// `shortcut-webhook status` against a live (test) API server: the path each peer's and each Service's traffic takes,
// from the stored objects and serve's own view of the cluster, read-only, page by page.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { JsonObject } from '../../src/core/json.ts';
import { connectionObject, fccObject, sliceObject } from '../support/builders.ts';
import { ENDPOINT_SLICES, FOREIGN_CLUSTER_CONNECTIONS, LEASES, startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { startRepeatingPager } from '../support/repeating-pager.ts';
import { runCli } from '../support/run-cli.ts';
import { within } from '../support/wait-for.ts';

/** A slice of Service `service` (builders' slices all belong to `web`). */
function ofService(slice: JsonObject, service: string): JsonObject {
  const metadata = slice['metadata'] as JsonObject;
  return { ...slice, metadata: { ...metadata, labels: { ...(metadata['labels'] as JsonObject), 'kubernetes.io/service-name': service } } };
}

/** The leaf's Connection to cluster3 with the time the API server records for its last status write. */
function connectionTo3(value: string): JsonObject {
  const connection = connectionObject('cluster3', value);
  return { ...connection, metadata: { ...(connection['metadata'] as JsonObject),
    managedFields: [{ manager: 'liqo-gateway', operation: 'Update', apiVersion: 'networking.liqo.io/v1beta1', subresource: 'status', time: '2026-11-27T10:00:00Z' }] } };
}

let server: KubeApiServer;
let kubeconfig: string;

before(async () => {
  server = await startKubeApiServer();
  await server.create(fccObject());
  await server.create(fccObject({ name: 'cluster2-cluster4', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16', connected: false }));
  // web-1 as the webhook wrote it; web-2 as Liqo wrote it, a write that slipped past the webhook (out of step).
  await server.create(sliceObject({ name: 'web-1', addresses: [['10.61.0.151'], ['10.200.0.9']], annotations: {
    'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' } }));
  await server.create(sliceObject({ name: 'web-2', addresses: [['10.63.0.7']] }));
  await server.create(ofService(sliceObject({ name: 'db-1', addresses: [['10.64.0.3']] }), 'db'));
  await server.create(sliceObject({ name: 'native', managedBy: 'endpointslice-controller.k8s.io' }));
  await server.create(connectionTo3('Connected'));
  kubeconfig = await server.kubeconfig();
});
after(async () => server.close());

const NOTE = '(shadowendpointslices.offloading.liqo.io is not served here (Liqo\'s CRDs are not installed): no ShadowEndpointSlice counted)';

test('status prints one line per peer: its path, why, its Connection and since when, and what takes each path', async () => {
  const run = await runCli(['status', '--kubeconfig', kubeconfig]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, [
    'cluster cluster2',
    'PEER            PATH    WHY              CONNECTION  SINCE                 SLICES  SHADOWS  SERVICES  DIRECT  HUB  NONE  OUT-OF-STEP',
    'cluster1 (hub)  hub     no-pair 1        -           -                     1       0        1         0       1    0     0',
    'cluster3        direct  rewritten 2      Connected   2026-11-27T10:00:00Z  2       0        1         2       0    0     1',
    'cluster4        hub     not-connected 1  -           -                     1       0        1         0       1    0     0',
    NOTE,
    '',
  ].join('\n'));
  assert.deepEqual([...new Set(server.requests.map((request) => request.method))], ['GET'], 'read-only');
});

test('-o json gives the same per peer, with the view\'s verdicts, the Connections and the totals', async () => {
  const run = await runCli(['status', '--kubeconfig', kubeconfig, '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout) as {
    cluster: string; peers: { peer: string; role: string; path: string; view: { fccs: { fcc: string; state: string }[] }; connections: { name: string; state: string; since: string }[];
      counts: { endpointSlices: number; addresses: Record<string, number>; outOfStep: { endpointSlices: number } } }[];
    totals: { endpointSlices: number; services: number; addresses: Record<string, number>; outOfStep: { endpointSlices: number; shadowEndpointSlices: number } };
  };
  assert.equal(report.cluster, 'cluster2');
  assert.deepEqual(report.peers.map((p) => [p.peer, p.role, p.path]), [['cluster1', 'hub', 'hub'], ['cluster3', 'peer', 'direct'], ['cluster4', 'peer', 'hub']]);
  assert.deepEqual(report.peers[2]?.view.fccs, [{ fcc: 'liqo/cluster2-cluster4', state: 'not-connected' }]);
  assert.deepEqual(report.peers[1]?.connections.map((c) => [c.name, c.state, c.since]), [['liqo-tenant-cluster3/gw-cluster3', 'Connected', '2026-11-27T10:00:00Z']]);
  // The native slice is not counted; the one stored as Liqo wrote it is, as out of step.
  assert.deepEqual(report.totals, { endpointSlices: 3, shadowEndpointSlices: 0, services: 2, addresses: { direct: 2, hub: 2, none: 0 }, outOfStep: { endpointSlices: 1, shadowEndpointSlices: 0 } });
});

test('-n NS SERVICE --addresses gives the Service\'s line and one per address, as explain decides them', async () => {
  const run = await runCli(['status', '--kubeconfig', kubeconfig, '-n', 'demo', 'web', '--addresses']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, [
    'cluster cluster2',
    'SERVICE   PATH   PEERS              WHY                     SLICES  SHADOWS  DIRECT  HUB  NONE  OUT-OF-STEP',
    'demo/web  mixed  cluster1,cluster3  rewritten 2, no-pair 1  2       0        2       1    0     1',
    '',
    'SERVICE   OBJECT                    INPUT        OUTPUT       PEER      PATH    REASON     IN STEP',
    'demo/web  endpointslice demo/web-1  10.61.0.151  10.61.0.151  cluster3  direct  rewritten  yes',
    'demo/web  endpointslice demo/web-1  10.200.0.9   10.200.0.9   cluster1  hub     no-pair    yes',
    'demo/web  endpointslice demo/web-2  10.63.0.7    10.61.0.7    cluster3  direct  rewritten  no',
    NOTE,
    '',
  ].join('\n'));
  const listed = server.requests.filter((r) => r.path === '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices' && !r.watch).at(-1);
  assert.equal(listed?.query['labelSelector'], 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io,kubernetes.io/service-name=web');
});

test('-A gives one line per Service of every namespace', async () => {
  const run = await runCli(['status', '--kubeconfig', kubeconfig, '-A', '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { services: { service: string; path: string; peers: string[]; why: { reason: string }[] }[] };
  assert.deepEqual(report.services.map((s) => [s.service, s.path, s.peers, s.why.map((w) => w.reason)]), [
    ['demo/db', 'hub', ['cluster4'], ['not-connected']],
    ['demo/web', 'mixed', ['cluster1', 'cluster3'], ['rewritten', 'no-pair']],
  ]);
});

test('a Service with no reflected slice is exit 1 with a message naming it', async () => {
  const run = await runCli(['status', '--kubeconfig', kubeconfig, '-n', 'demo', 'nope']);
  assert.equal(run.code, 1);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^shortcut-webhook status: no Service demo\/nope with reflected slices/m);
});

test('a list the leaf refuses (403) is exit 1 with a message naming the resource', async () => {
  server.failNext({ method: 'GET', pathIncludes: '/endpointslices', watch: false }, 403);
  const run = await runCli(['status', '--kubeconfig', kubeconfig]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /^shortcut-webhook status: cannot list endpointslices\.discovery\.k8s\.io in all namespaces: HTTP 403/m);
});

test('a Connection that goes to Error and back moves its peer\'s line to the hub path and back', async () => {
  const line = async (): Promise<string | undefined> => {
    const run = await runCli(['status', '--kubeconfig', kubeconfig]);
    assert.equal(run.code, 0, run.stderr);
    return run.stdout.split('\n').find((text) => text.startsWith('cluster3 '));
  };
  await server.updateStatus(connectionTo3('Error'));
  // Now web-1, stored through the shortcut, is the one out of step (the controller restores it); web-2 is in step.
  assert.match(await line() ?? '', /^cluster3 +hub +tunnel-down 2 +Error +2026-11-27T10:00:00Z +2 +0 +1 +0 +2 +0 +1$/);
  await server.updateStatus(connectionTo3('Connected'));
  assert.match(await line() ?? '', /^cluster3 +direct +rewritten 2 +Connected +2026-11-27T10:00:00Z +2 +0 +1 +2 +0 +0 +1$/);
});

test('status lists in pages of 500 and folds each: every slice is counted, across continue tokens', async () => {
  const big = await startKubeApiServer();
  try {
    await big.create(fccObject());
    const total = 1201;
    for (let i = 0; i < total; i++) await big.create(sliceObject({ name: `web-${String(i).padStart(4, '0')}`, addresses: [['10.63.0.7']] }));
    const run = await runCli(['status', '--kubeconfig', await big.kubeconfig(), '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as { totals: { endpointSlices: number; addresses: { direct: number } } };
    assert.equal(report.totals.endpointSlices, total);
    assert.equal(report.totals.addresses.direct, total);
    const lists = big.requests.filter((r) => r.path === '/apis/discovery.k8s.io/v1/endpointslices' && !r.watch);
    assert.deepEqual(lists.map((r) => r.query['limit']), ['500', '500', '500']);
    assert.deepEqual(lists.map((r) => r.query['continue'] !== undefined), [false, true, true]);
  } finally {
    await big.close();
  }
});

test('on a cluster without Liqo\'s CRDs the EndpointSlice path is still counted, and the notes say what is missing', async () => {
  const bare = await startKubeApiServer({ resources: [ENDPOINT_SLICES, LEASES, FOREIGN_CLUSTER_CONNECTIONS] });
  try {
    await bare.create(fccObject());
    await bare.create(sliceObject({ name: 'web-1', addresses: [['10.63.0.7']] }));
    const run = await runCli(['status', '--kubeconfig', await bare.kubeconfig()]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^cluster3 +direct +rewritten 1 +- +- +1 +0 +1 +1 +0 +0 +1$/m);
    assert.match(run.stdout, /^\(shadowendpointslices\.offloading\.liqo\.io is not served here/m);
    assert.match(run.stdout, /^\(connections\.networking\.liqo\.io is not served here \(Liqo's CRDs are not installed\): no Connection state\)$/m);
  } finally {
    await bare.close();
  }
});

test('on a cluster with no Liqo CRD at all, not even the FCCs\', status still counts the slices, all on the hub path, and says why', async () => {
  const bare = await startKubeApiServer({ resources: [ENDPOINT_SLICES, LEASES] });
  try {
    await bare.create(sliceObject({ name: 'web-1', addresses: [['10.63.0.7']] }));
    const run = await runCli(['status', '--kubeconfig', await bare.kubeconfig()]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^cluster1 \(hub\) +hub +no-fcc 1 +- +- +1 +0 +1 +0 +1 +0 +0$/m);
    assert.match(run.stdout, /^\(the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten\)$/m);
  } finally {
    await bare.close();
  }
});

test('an unreachable cluster is exit 1 at once, before any view is waited for', async () => {
  const gone = await startKubeApiServer();
  const config = await gone.kubeconfig({ dir: (await import('node:os')).tmpdir() });
  await gone.close();
  const run = await runCli(['status', '--kubeconfig', config]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /^shortcut-webhook status: cannot list endpointslices\.discovery\.k8s\.io in all namespaces: /m);
});

for (const [args, message] of [
  [['web'], /a SERVICE needs its namespace: -n NS web/],
  [['-A', '-n', 'demo'], /give -n NS or -A, not both/],
  [['--addresses'], /--addresses goes with -n NS \[SERVICE\] or -A/],
  [['-n', 'demo', 'a', 'b'], /takes at most one SERVICE/],
  [['-o', 'yaml'], /--output yaml: expected one of text, json/],
  [['--no-such'], /unknown flag --no-such/],
] as const) {
  test(`status ${args.join(' ')} is a usage error (exit 2)`, async () => {
    const run = await runCli(['status', ...args]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, message);
  });
}

test('an API server that gives the same continue token again is exit 1 saying so, not a list read for ever', async () => {
  const stuck = await startRepeatingPager('/apis/discovery.k8s.io/v1/endpointslices');
  try {
    const run = await within(runCli(['status', '--kubeconfig', stuck.kubeconfig]), { timeoutMs: 30_000, description: 'status' });
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stderr, /^shortcut-webhook status: the API server gave the same continue token twice in one list \(page-2\)/m);
  } finally {
    await stuck.close();
  }
});
