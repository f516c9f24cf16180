// `shortcut-webhook explain`: the --explain tables for slices stored in a cluster, from serve's own view of it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connectionObject, fccObject, sliceObject } from '../support/builders.ts';
import { DEFAULT_RESOURCES, FOREIGN_CLUSTER_CONNECTIONS, LIQO_IPS, startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { startRepeatingPager } from '../support/repeating-pager.ts';
import { runCli } from '../support/run-cli.ts';
import { createStockWorld } from '../support/stock-world.ts';
import { within } from '../support/wait-for.ts';

let server: KubeApiServer;
let kubeconfig: string;

before(async () => {
  server = await startKubeApiServer();
  await server.create(fccObject());
  await server.create(fccObject({ name: 'cluster2-cluster4', b: 'cluster4', bPod: '10.64.0.0/16', bRemapped: '10.62.0.0/16', connected: false }));
  await server.create(sliceObject({ name: 'web-1', addresses: [['10.63.0.151'], ['10.200.0.9']] }));
  await server.create(sliceObject({ name: 'web-2', addresses: [['10.63.0.7']] }));
  await server.create(sliceObject({ name: 'native', managedBy: 'endpointslice-controller.k8s.io' }));
  kubeconfig = await server.kubeconfig();
});
after(async () => server.close());

test('explain NAME prints the table rewrite --explain prints, for the slice as stored, and writes nothing', async () => {
  const run = await runCli(['explain', '-n', 'demo', 'web-1', '--kubeconfig', kubeconfig]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, [
    'endpointslice demo/web-1: cluster cluster2, IPv4',
    'INPUT        OUTPUT       FCC                     REASON',
    '10.63.0.151  10.61.0.151  liqo/cluster2-cluster3  rewritten',
    '10.200.0.9   10.200.0.9   -                       no-pair',
    '',
    'FCC states for cluster cluster2:',
    'FCC                     STATE          DETAIL',
    'liqo/cluster2-cluster3  usable         10.63.0.0/16 -> 10.61.0.0/16 (peer cluster3)',
    'liqo/cluster2-cluster4  not-connected  status.isConnected is not true (phase Connecting)',
    '',
  ].join('\n'));
  assert.deepEqual([...new Set(server.requests.map((request) => request.method))], ['GET'], 'read-only');
});

test('explain -l SELECTOR -o json explains every match, with the FCC and peer states', async () => {
  await server.create(connectionObject('cluster3', 'Connected'));
  const run = await runCli(['explain', '-n', 'demo', '-l', 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io',
    '-o', 'json', '--kubeconfig', kubeconfig]);
  assert.equal(run.code, 0, run.stderr);
  const explained = JSON.parse(run.stdout) as { slices: { slice: string; addresses: { output: string; reason: string }[] }[];
    fccs: { fcc: string; state: string }[]; peers: { peer: string; state: string }[] };
  assert.deepEqual(explained.slices.map((slice) => [slice.slice, slice.addresses.map((a) => a.reason)]),
    [['demo/web-1', ['rewritten', 'no-pair']], ['demo/web-2', ['rewritten']]]);
  assert.deepEqual(explained.fccs.map((fcc) => fcc.state), ['usable', 'not-connected']);
  assert.deepEqual(explained.peers, [{ peer: 'cluster3', state: 'Connected' }]);
});

test('without -n, explain reads the slice in the kubeconfig context\'s namespace, as kubectl does', async () => {
  const inDemo = await server.kubeconfig({ namespace: 'demo' });
  const run = await runCli(['explain', 'web-2', '--kubeconfig', inDemo, '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual((JSON.parse(run.stdout) as { slices: { slice: string }[] }).slices.map((slice) => slice.slice), ['demo/web-2']);
  assert.ok(server.requests.some((request) => request.path === '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices/web-2'));
});

test('-n NS reads the slice in NS, not in the kubeconfig context\'s namespace', async () => {
  const inOther = await server.kubeconfig({ namespace: 'elsewhere' });
  const run = await runCli(['explain', '-n', 'demo', 'web-2', '--kubeconfig', inOther, '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual((JSON.parse(run.stdout) as { slices: { slice: string }[] }).slices.map((slice) => slice.slice), ['demo/web-2']);
  assert.ok(!server.requests.some((request) => request.path.includes('/namespaces/elsewhere/')), 'nothing read in the context\'s namespace');
});

test('a slice that is not there, or a selector that matches nothing, is exit 1 with a message', async () => {
  const missing = await runCli(['explain', '-n', 'demo', 'nope', '--kubeconfig', kubeconfig]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^shortcut-webhook explain: no EndpointSlice demo\/nope$/m);
  const none = await runCli(['explain', '-n', 'demo', '-l', 'app=none', '--kubeconfig', kubeconfig]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no EndpointSlice in demo matches app=none/);
});

test('without a kubeconfig or a pod, explain says there is no cluster to read', async () => {
  const run = await runCli(['explain', 'web-1'], { env: {} });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /no cluster to read/);
});

test('a view that does not sync in time is exit 1 with a message, and the command still ends', async () => {
  const { runExplain } = await import('../../src/commands/explain.ts');
  const { PassThrough, Readable } = await import('node:stream');
  server.failNext({ pathIncludes: '/foreignclusterconnections', count: 1000 }, 500);
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  // The last test of the file: the failures stay injected until the server closes.
  const config = { namespace: 'demo', target: { kind: 'name', name: 'web-1' }, kubeconfig, shortcutsKubeconfigs: [],
    shortcutsNamespace: undefined, hubNamespaces: [], clusterId: undefined, connectionStaleAfterMs: 30_000, output: 'text', resource: 'endpointslices' } as const;
  const code = await runExplain(config, { stdout: new PassThrough(), stderr, stdin: Readable.from([]) }, {}, { syncTimeoutMs: 300 });
  assert.equal(code, 1);
  const text = Buffer.concat(chunks).toString();
  assert.match(text, /the ForeignClusterConnections could not be read within 0\.3s/);
  // The view's complaints are plain lines of this command, not JSON log records.
  assert.match(text, /^shortcut-webhook explain: warn: /m);
  assert.doesNotMatch(text, /^\{/m);
});

test('with --shortcuts-kubeconfig the hub\'s IPAM objects are read too, as serve reads them: a stock hub\'s address is resolved, even with no FCC CRD there', async () => {
  const leaf = await startKubeApiServer();
  const hub = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES.filter((r) => r !== FOREIGN_CLUSTER_CONNECTIONS), LIQO_IPS] });
  try {
    await createStockWorld(leaf, hub);
    await leaf.create(sliceObject({ name: 'web', addresses: [['10.71.0.12']] }));
    const run = await runCli(['explain', '-n', 'demo', 'web', '--kubeconfig', await leaf.kubeconfig(), '--shortcuts-kubeconfig', await hub.kubeconfig(), '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const { slices: [slice] } = JSON.parse(run.stdout) as { slices: { addresses: { input: string; output: string; reason: string; hubIp: string | null }[] }[] };
    assert.deepEqual(slice?.addresses.map((a) => [a.input, a.output, a.reason.split(':')[0], a.hubIp]), [['10.71.0.12', '10.61.0.151', 'rewritten', 'demo/web-0']]);
  } finally {
    await leaf.close();
    await hub.close();
  }
});

test('explain -l on an API server that gives the same continue token again is exit 1 saying so, not a list read for ever', async () => {
  const stuck = await startRepeatingPager('/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices');
  try {
    const run = await within(runCli(['explain', '-n', 'demo', '-l', 'app=web', '--kubeconfig', stuck.kubeconfig]), { timeoutMs: 30_000, description: 'explain' });
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stderr, /cannot read EndpointSlices in demo: the API server gave the same continue token twice in one list \(page-2\)/);
    assert.equal(stuck.lists(), 2);
  } finally {
    await stuck.close();
  }
});
