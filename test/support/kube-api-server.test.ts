// The test server is only worth something if it speaks the protocol the way kube-apiserver does, so it is driven here
// by @kubernetes/client-node itself: whatever these tests show client-node doing is what the product will see.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import {
  ApiException,
  CoordinationV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubeConfig,
  Watch,
  makeInformer,
  type KubernetesObject,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { startKubeApiServer, type KubeApiServer, type KubeApiServerOptions, type KubeObject } from './kube-api-server.ts';
import { waitFor } from './wait-for.ts';

const FCC = { group: 'networking.liqo.io', version: 'v1beta1', plural: 'foreignclusterconnections' } as const;
const FCC_PATH = '/apis/networking.liqo.io/v1beta1/foreignclusterconnections';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const REFLECTED = 'endpointslice.reflection.liqo.io';

function fcc(name: string, namespace = 'liqo', labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'networking.liqo.io/v1beta1',
    kind: 'ForeignClusterConnection',
    metadata: { name, namespace, labels },
    spec: { foreignClusterA: 'cluster2', foreignClusterB: 'cluster3', networking: { mtu: 1450 } },
    status: { isConnected: true, foreignClusterANetworking: { podCIDR: '10.63.0.0/16', remappedPodCIDR: '10.61.0.0/16' } },
  };
}

function slice(name: string, labels: Record<string, string> = { [MANAGED_BY]: REFLECTED }, address = '10.63.0.7'): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  };
}

async function setup(t: TestContext, options: KubeApiServerOptions = {}): Promise<{ server: KubeApiServer; kc: KubeConfig }> {
  const server = await startKubeApiServer(options);
  t.after(() => server.close());
  const kc = new KubeConfig();
  kc.loadFromFile(await server.kubeconfig());
  return { server, kc };
}

/** The ApiException of a rejected call, with its Status body parsed (client-node leaves it as text). */
async function rejection(call: Promise<unknown>): Promise<{ code: number; status: Record<string, unknown> | undefined }> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof ApiException, `expected an ApiException, got ${String(error)}`);
    const body: unknown = typeof error.body === 'string' && error.body !== '' ? JSON.parse(error.body) : undefined;
    const status = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body } : undefined;
    return { code: error.code, status };
  }
  assert.fail('the call succeeded');
}

async function fetchJson(url: string): Promise<Record<string, unknown>> {
  const body: unknown = await fetch(url).then((response) => response.json());
  assert.ok(typeof body === 'object' && body !== null && !Array.isArray(body));
  return { ...body };
}

function nameOf(object: KubernetesObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

function rvOf(object: KubeObject | KubernetesObject | undefined): string {
  const rv = object?.metadata?.resourceVersion;
  assert.ok(rv !== undefined, 'the object has a resourceVersion');
  return rv;
}

test('an informer over CustomObjectsApi sees FCCs added, modified and deleted in every namespace', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(fcc('a'));
  const custom = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer<KubernetesObject>(kc, FCC_PATH, () => custom.listClusterCustomObject({ ...FCC }));
  const seen: string[] = [];
  informer.on('add', (object) => seen.push(`add ${nameOf(object)}`));
  informer.on('update', (object) => seen.push(`update ${nameOf(object)}`));
  informer.on('delete', (object) => seen.push(`delete ${nameOf(object)}`));
  t.after(() => informer.stop());
  await informer.start();
  await waitFor(() => server.openWatches() === 1);

  await custom.createNamespacedCustomObject({ ...FCC, namespace: 'other', body: fcc('b', 'other') });
  await custom.patchNamespacedCustomObject({ ...FCC, namespace: 'liqo', name: 'a', body: [{ op: 'replace', path: '/spec/foreignClusterB', value: 'cluster4' }] });
  await custom.deleteNamespacedCustomObject({ ...FCC, namespace: 'other', name: 'b' });

  await waitFor(() => seen.length === 4);
  assert.deepEqual(seen, ['add liqo/a', 'add other/b', 'update liqo/a', 'delete other/b']);
  assert.deepEqual(informer.list().map(nameOf), ['liqo/a']);
  const stored = server.get({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'a' });
  assert.equal(informer.get('a', 'liqo')?.metadata?.resourceVersion, rvOf(stored));
});

test('an informer on one namespace sees only that namespace', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(fcc('a', 'liqo'));
  await server.create(fcc('b', 'elsewhere'));
  const custom = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer<KubernetesObject>(kc, '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections',
    () => custom.listNamespacedCustomObject({ ...FCC, namespace: 'liqo' }));
  const seen: string[] = [];
  informer.on('add', (object) => seen.push(`add ${nameOf(object)}`));
  t.after(() => informer.stop());
  await informer.start();
  await waitFor(() => server.openWatches() === 1);

  await server.create(fcc('c', 'elsewhere'));
  await server.create(fcc('d', 'liqo'));

  await waitFor(() => seen.length === 2);
  assert.deepEqual(seen, ['add liqo/a', 'add liqo/d']);
  const watchRequest = server.requests.find((r) => r.watch);
  assert.equal(watchRequest?.path, '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections');
  assert.equal(watchRequest?.status, 200, 'an open watch is logged with its status');
});

test('a watch resumed from a resourceVersion replays exactly the changes after it, then goes live', async (t) => {
  const { server, kc } = await setup(t);
  const first = await server.create(slice('s1'));
  await server.update({ ...slice('s1', { [MANAGED_BY]: REFLECTED }, '10.63.0.8') });
  await server.create(fcc('unrelated'));
  await server.create(slice('s2'));
  const events: string[] = [];
  const controller = await new Watch(kc).watch('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
    { resourceVersion: rvOf(first) },
    (type: string, object: KubernetesObject) => events.push(`${type} ${object.metadata?.name ?? ''} ${object.metadata?.resourceVersion ?? ''}`),
    () => undefined);
  t.after(() => controller.abort());

  await waitFor(() => events.length === 2);
  assert.deepEqual(events, [`MODIFIED s1 ${Number(rvOf(first)) + 1}`, `ADDED s2 ${Number(rvOf(first)) + 3}`]);

  const removed = await server.remove({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'default', name: 's2' });
  await waitFor(() => events.length === 3);
  assert.equal(events[2], `DELETED s2 ${rvOf(removed)}`);
  assert.equal(rvOf(removed), server.resourceVersion(), 'a deletion is a write with its own resourceVersion');
});

test('a resume from a compacted resourceVersion gets one in-stream ERROR carrying 410 Expired, then the end', async (t) => {
  const { server, kc } = await setup(t);
  const created = await server.create(slice('s1'));
  server.compact();
  const events: Array<{ type: string; object: Record<string, unknown> }> = [];
  let done: { err: unknown } | undefined;
  const stale = String(Number(rvOf(created)) - 1);
  await new Watch(kc).watch('/apis/discovery.k8s.io/v1/endpointslices', { resourceVersion: stale },
    (type: string, object: Record<string, unknown>) => events.push({ type, object }),
    (err: unknown) => { done = { err }; });

  await waitFor(() => done !== undefined);
  assert.equal(done?.err, null, 'the HTTP request itself succeeded: the error travels inside the stream');
  assert.equal(events.length, 1);
  assert.equal(events[0]?.type, 'ERROR');
  assert.deepEqual(events[0]?.object, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: `too old resource version: ${stale} (${rvOf(created)})`, reason: 'Expired', code: 410,
  });
  assert.equal(server.requests.at(-1)?.status, 200);
});

test('an informer whose resourceVersion was compacted away relists and keeps going', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(fcc('a'));
  const custom = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer<KubernetesObject>(kc, FCC_PATH, () => custom.listClusterCustomObject({ ...FCC }));
  const added: string[] = [];
  const errors: unknown[] = [];
  informer.on('add', (object) => added.push(nameOf(object)));
  informer.on('error', (error) => errors.push(error));
  t.after(() => informer.stop());
  await informer.start();
  await waitFor(() => server.openWatches() === 1);

  await server.create(slice('s1')); // another resource moves the global resourceVersion past the informer's
  server.compact();
  server.endWatches(); // the informer re-watches from its own, now compacted, resourceVersion
  const fccLists = (): number => server.requests.filter((r) => r.path === FCC_PATH && !r.watch).length;
  await waitFor(() => fccLists() === 2 && server.openWatches() === 1);

  await server.create(fcc('late'));
  await waitFor(() => added.includes('liqo/late'));
  assert.deepEqual(added, ['liqo/a', 'liqo/late']);
  assert.deepEqual(errors, []);
});

test('lists filter by label selector through CustomObjectsApi and DiscoveryV1Api', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(slice('reflected'));
  await server.create(slice('local', { [MANAGED_BY]: 'endpointslice-controller.k8s.io' }));
  await server.create(slice('unlabelled', {}));
  await server.create(fcc('gold', 'liqo', { tier: 'gold' }));
  await server.create(fcc('old-gold', 'liqo', { tier: 'gold', legacy: 'true' }));
  await server.create(fcc('silver', 'liqo', { tier: 'silver' }));
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);

  const reflected = await discovery.listNamespacedEndpointSlice({ namespace: 'default', labelSelector: `${MANAGED_BY}=${REFLECTED}` });
  assert.deepEqual(reflected.items.map((item) => item.metadata?.name), ['reflected']);
  const notReflected = await discovery.listEndpointSliceForAllNamespaces({ labelSelector: `${MANAGED_BY}!=${REFLECTED}` });
  assert.deepEqual(notReflected.items.map((item) => item.metadata?.name), ['local', 'unlabelled']);
  assert.equal(reflected.metadata?.resourceVersion, server.resourceVersion());

  const gold: unknown = await custom.listClusterCustomObject({ ...FCC, labelSelector: 'tier in (gold),!legacy' });
  assert.ok(typeof gold === 'object' && gold !== null && 'items' in gold && Array.isArray(gold.items));
  assert.deepEqual(gold.items.map((item: KubernetesObject) => item.metadata?.name), ['gold']);
  assert.ok('kind' in gold && gold.kind === 'ForeignClusterConnectionList');
  assert.equal(gold.items[0]?.kind, 'ForeignClusterConnection', 'items of a custom resource list keep their kind');

  const raw = await fetchJson(`${server.url}/apis/discovery.k8s.io/v1/endpointslices`);
  assert.equal(raw['kind'], 'EndpointSliceList');
  assert.ok(Array.isArray(raw['items']));
  assert.equal(raw['items'][0]?.kind, undefined, 'items of a built-in typed list carry no kind');

  const bad = await rejection(discovery.listNamespacedEndpointSlice({ namespace: 'default', labelSelector: 'a=(b' }));
  assert.equal(bad.code, 400);
});

test('limit and continue page through one consistent snapshot', async (t) => {
  const { server, kc } = await setup(t);
  for (const name of ['s1', 's2', 's3', 's4', 's5']) await server.create(slice(name));
  const discovery = kc.makeApiClient(DiscoveryV1Api);

  const first = await discovery.listNamespacedEndpointSlice({ namespace: 'default', limit: 2 });
  assert.deepEqual(first.items.map((item) => item.metadata?.name), ['s1', 's2']);
  assert.equal(first.metadata?.remainingItemCount, 3);
  await server.create(slice('s0')); // written between pages: not part of the snapshot
  await server.remove({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'default', name: 's4' });
  const second = await discovery.listNamespacedEndpointSlice({ namespace: 'default', limit: 2, _continue: first.metadata?._continue ?? '' });
  assert.deepEqual(second.items.map((item) => item.metadata?.name), ['s3', 's4']);
  const third = await discovery.listNamespacedEndpointSlice({ namespace: 'default', limit: 2, _continue: second.metadata?._continue ?? '' });
  assert.deepEqual(third.items.map((item) => item.metadata?.name), ['s5']);
  assert.equal(third.metadata?._continue, undefined);
  assert.equal(third.metadata?.resourceVersion, first.metadata?.resourceVersion);

  server.compact();
  const expired = await rejection(discovery.listNamespacedEndpointSlice({ namespace: 'default', limit: 2, _continue: first.metadata?._continue ?? '' }));
  assert.equal(expired.code, 410);
  assert.equal(expired.status?.['reason'], 'Expired');
});

test('a list at an exact past resourceVersion shows the objects as they were then', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(slice('s1'));
  const then = server.resourceVersion();
  await server.create(slice('s2'));
  await server.update({ ...slice('s1', {}) });
  const discovery = kc.makeApiClient(DiscoveryV1Api);

  const past = await discovery.listNamespacedEndpointSlice({ namespace: 'default', resourceVersion: then, resourceVersionMatch: 'Exact' });
  assert.deepEqual(past.items.map((item) => [item.metadata?.name, item.metadata?.labels]), [['s1', { [MANAGED_BY]: REFLECTED }]]);
  assert.equal(past.metadata?.resourceVersion, then);
  const notOlder = await discovery.listNamespacedEndpointSlice({ namespace: 'default', resourceVersion: then, resourceVersionMatch: 'NotOlderThan' });
  assert.equal(notOlder.metadata?.resourceVersion, server.resourceVersion());
  assert.equal(notOlder.items.length, 2);

  server.compact();
  const expired = await rejection(discovery.listNamespacedEndpointSlice({ namespace: 'default', resourceVersion: then, resourceVersionMatch: 'Exact' }));
  assert.equal(expired.code, 410);
  assert.equal(expired.status?.['message'], 'The resourceVersion for the provided list is too old.');
});

test('a JSON Patch applies when its test on resourceVersion holds, and answers 422 Invalid when it fails', async (t) => {
  const { server, kc } = await setup(t);
  const created = await server.create(slice('s1'));
  const discovery = kc.makeApiClient(DiscoveryV1Api);

  const patched = await discovery.patchNamespacedEndpointSlice({
    name: 's1', namespace: 'default', body: [
      { op: 'test', path: '/metadata/resourceVersion', value: rvOf(created) },
      { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.7' },
      { op: 'add', path: '/metadata/annotations', value: { 'liqo.io/shortcut-addresses': '10.61.0.7' } },
    ],
  });
  assert.deepEqual(patched.endpoints[0]?.addresses, ['10.61.0.7']);
  assert.equal(patched.metadata?.resourceVersion, String(Number(rvOf(created)) + 1));
  assert.equal(patched.metadata?.generation, 2, 'a change outside metadata moves the generation');
  assert.equal(server.requests.at(-1)?.contentType, 'application/json-patch+json');

  const stale = await rejection(discovery.patchNamespacedEndpointSlice({
    name: 's1', namespace: 'default', body: [
      { op: 'test', path: '/metadata/resourceVersion', value: rvOf(created) },
      { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.99.0.7' },
    ],
  }));
  assert.deepEqual(stale, {
    code: 422,
    status: {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422,
    },
  });
  assert.equal(server.resourceVersion(), rvOf(patched), 'the failed patch stored nothing');

  const replaced = await rejection(discovery.patchNamespacedEndpointSlice({
    name: 's1', namespace: 'default', body: [{ op: 'replace', path: '/metadata/resourceVersion', value: rvOf(created) }],
  }));
  assert.equal(replaced.code, 409, 'a stale resourceVersion written by the patch is an optimistic-lock conflict');
});

test('a patch that changes nothing keeps the resourceVersion and emits no watch event', async (t) => {
  const { server, kc } = await setup(t);
  const created = await server.create(slice('s1'));
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const events: string[] = [];
  const controller = await new Watch(kc).watch('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
    { resourceVersion: rvOf(created) },
    (type: string, object: KubernetesObject) => events.push(`${type} ${object.metadata?.resourceVersion ?? ''}`), () => undefined);
  t.after(() => controller.abort());
  await waitFor(() => server.openWatches() === 1);

  const same = await discovery.patchNamespacedEndpointSlice({
    name: 's1', namespace: 'default', body: [{ op: 'replace', path: '/endpoints/0/addresses/0', value: '10.63.0.7' }],
  });
  assert.equal(same.metadata?.resourceVersion, rvOf(created));
  assert.equal(server.resourceVersion(), rvOf(created));

  const changed = await discovery.patchNamespacedEndpointSlice({
    name: 's1', namespace: 'default', body: [{ op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.7' }],
  });
  await waitFor(() => events.length >= 1);
  assert.deepEqual(events, [`MODIFIED ${rvOf(changed)}`], 'the first event is the real change');
});

test('a PUT with a stale resourceVersion answers 409; a custom resource PUT without one answers 422', async (t) => {
  const { server, kc } = await setup(t);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const created = await discovery.createNamespacedEndpointSlice({ namespace: 'default', body: slice('s1') });
  const fresh = await discovery.replaceNamespacedEndpointSlice({
    name: 's1', namespace: 'default', body: { ...created, endpoints: [{ addresses: ['10.61.0.7'] }] },
  });
  assert.notEqual(rvOf(fresh), rvOf(created));

  const stale = await rejection(discovery.replaceNamespacedEndpointSlice({ name: 's1', namespace: 'default', body: created }));
  assert.equal(stale.code, 409);
  assert.equal(stale.status?.['reason'], 'Conflict');

  await server.create(fcc('a'));
  const withoutRv = await rejection(custom.replaceNamespacedCustomObject({ ...FCC, namespace: 'liqo', name: 'a', body: fcc('a') }));
  assert.equal(withoutRv.code, 422);
  assert.equal(withoutRv.status?.['reason'], 'Invalid');

  const duplicate = await rejection(discovery.createNamespacedEndpointSlice({ namespace: 'default', body: slice('s1') }));
  assert.equal(duplicate.code, 409);
  assert.equal(duplicate.status?.['reason'], 'AlreadyExists');
});

test('Leases support the optimistic concurrency leader election relies on', async (t) => {
  const { kc } = await setup(t);
  const leases = kc.makeApiClient(CoordinationV1Api);
  const lease = {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'shortcut-webhook', namespace: 'liqo' },
    spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15, renewTime: new Date() },
  };
  const created = await leases.createNamespacedLease({ namespace: 'liqo', body: lease });
  assert.equal(created.metadata?.generation, undefined);
  const taken = await leases.replaceNamespacedLease({
    name: 'shortcut-webhook', namespace: 'liqo', body: { ...created, spec: { ...created.spec, holderIdentity: 'pod-b' } },
  });
  assert.equal(taken.spec?.holderIdentity, 'pod-b');
  const lost = await rejection(leases.replaceNamespacedLease({
    name: 'shortcut-webhook', namespace: 'liqo', body: { ...created, spec: { ...created.spec, holderIdentity: 'pod-c' } },
  }));
  assert.equal(lost.code, 409);
  const again = await rejection(leases.createNamespacedLease({ namespace: 'liqo', body: lease }));
  assert.equal(again.status?.['reason'], 'AlreadyExists');
});

test('a wrong or missing bearer token answers 401', async (t) => {
  const { server, kc } = await setup(t, { token: 'right' });
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  assert.deepEqual((await discovery.listNamespacedEndpointSlice({ namespace: 'default' })).items, []);

  for (const token of [null, 'wrong']) {
    const anonymous = new KubeConfig();
    anonymous.loadFromFile(await server.kubeconfig({ token }));
    const denied = await rejection(anonymous.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({ namespace: 'default' }));
    assert.equal(denied.code, 401);
    assert.equal(server.requests.at(-1)?.status, 401);
  }
  const raw = await fetchJson(`${server.url}/apis/discovery.k8s.io/v1/endpointslices`);
  assert.deepEqual(raw, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
});

test('an unregistered resource answers 404 with a Status, and unregistering ends its watches', async (t) => {
  const { server, kc } = await setup(t);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const missing = await rejection(custom.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets' }));
  assert.equal(missing.code, 404);
  assert.equal(missing.status?.['reason'], 'NotFound');

  let ended: { err: unknown } | undefined;
  await new Watch(kc).watch(FCC_PATH, {}, () => undefined, (err: unknown) => { ended = { err }; });
  await waitFor(() => server.openWatches() === 1);
  server.unregisterResource({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection' });
  await waitFor(() => ended !== undefined);
  assert.equal(ended?.err, null);
  assert.equal((await rejection(custom.listClusterCustomObject({ ...FCC }))).code, 404);

  const notFound = await rejection(kc.makeApiClient(DiscoveryV1Api).readNamespacedEndpointSlice({ name: 'nope', namespace: 'default' }));
  assert.equal(notFound.status?.['message'], 'endpointslices.discovery.k8s.io "nope" not found');
});

test('the status subresource changes only .status, and the main endpoint leaves .status alone', async (t) => {
  const { kc } = await setup(t);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const created: KubeObject = await custom.createNamespacedCustomObject({ ...FCC, namespace: 'liqo', body: fcc('a') });
  assert.equal(created['status'], undefined, 'a client cannot set status on create');

  const withStatus: KubeObject = await custom.patchNamespacedCustomObjectStatus(
    { ...FCC, namespace: 'liqo', name: 'a', body: [{ op: 'add', path: '/status', value: { isConnected: true } },
      { op: 'replace', path: '/spec/foreignClusterA', value: 'ignored' }] });
  assert.deepEqual(withStatus['status'], { isConnected: true });
  assert.deepEqual(withStatus['spec'], fcc('a')['spec']);
  assert.equal(withStatus.metadata?.generation, 1);

  const main: KubeObject = await custom.patchNamespacedCustomObject(
    { ...FCC, namespace: 'liqo', name: 'a', body: [{ op: 'replace', path: '/status', value: { isConnected: false } },
      { op: 'replace', path: '/spec/foreignClusterA', value: 'cluster9' }] });
  assert.deepEqual(main['status'], { isConnected: true });
  assert.deepEqual(main['spec'], { foreignClusterA: 'cluster9', foreignClusterB: 'cluster3', networking: { mtu: 1450 } });
  assert.equal(main.metadata?.generation, 2);
});

test('a label-selected watch shows an object that leaves the selection as DELETED and one that enters as ADDED', async (t) => {
  const { server, kc } = await setup(t);
  const created = await server.create(slice('s1'));
  await server.create(slice('s2', {}));
  const events: string[] = [];
  const controller = await new Watch(kc).watch('/apis/discovery.k8s.io/v1/endpointslices',
    { resourceVersion: server.resourceVersion(), labelSelector: `${MANAGED_BY}=${REFLECTED}` },
    (type: string, object: KubernetesObject) => events.push(`${type} ${object.metadata?.name ?? ''} ${object.metadata?.resourceVersion ?? ''}`),
    () => undefined);
  t.after(() => controller.abort());
  await waitFor(() => server.openWatches() === 1);

  const left = await server.update({ ...created, metadata: { ...created.metadata, labels: {} } });
  const entered = await server.update({ ...slice('s2') });
  await waitFor(() => events.length === 2);
  assert.deepEqual(events, [`DELETED s1 ${rvOf(left)}`, `ADDED s2 ${rvOf(entered)}`]);
});

test('bookmarks arrive when asked for, and timeoutSeconds ends the stream cleanly', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(slice('s1'));
  const events: Array<{ type: string; rv: string | undefined }> = [];
  let ended: { err: unknown } | undefined;
  await new Watch(kc).watch('/apis/discovery.k8s.io/v1/endpointslices',
    { resourceVersion: server.resourceVersion(), allowWatchBookmarks: true, timeoutSeconds: 1 },
    (type: string, object: KubernetesObject) => events.push({ type, rv: object.metadata?.resourceVersion }),
    (err: unknown) => { ended = { err }; });
  await waitFor(() => server.openWatches() === 1);
  await server.create(fcc('moves-the-global-version'));
  server.bookmark();
  await waitFor(() => events.length === 1);
  assert.deepEqual(events[0], { type: 'BOOKMARK', rv: server.resourceVersion() });
  await waitFor(() => ended !== undefined, { timeoutMs: 3000 });
  assert.equal(ended?.err, null);
});

test('a dropped watch reaches client-node as an error, which stops its informer', async (t) => {
  const { server, kc } = await setup(t);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const informer = makeInformer<KubernetesObject>(kc, FCC_PATH, () => custom.listClusterCustomObject({ ...FCC }));
  const errors: unknown[] = [];
  informer.on('error', (error) => errors.push(error));
  t.after(() => informer.stop());
  await informer.start();
  await waitFor(() => server.openWatches() === 1);

  server.dropWatches();
  await waitFor(() => errors.length === 1);
  const [error] = errors;
  assert.ok(error instanceof Error && 'code' in error);
  assert.equal(error.code, 'ERR_STREAM_PREMATURE_CLOSE');
  assert.equal(server.openWatches(), 0);
});

test('failNext injects one failure, and setAvailable(false) fails every request until it is lifted', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(slice('s1'));
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const patch = (): Promise<V1EndpointSlice> => discovery.patchNamespacedEndpointSlice(
    { name: 's1', namespace: 'default', body: [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }] });

  server.failNext({ method: 'PATCH', pathIncludes: '/endpointslices/s1' }, 503);
  const unavailable = await rejection(patch());
  assert.equal(unavailable.code, 503);
  assert.equal(unavailable.status?.['reason'], 'ServiceUnavailable');
  server.failNext({ method: 'PATCH' }, 409);
  assert.equal((await rejection(patch())).status?.['reason'], 'Conflict');
  assert.equal((await patch()).metadata?.labels?.['touched'], 'yes');
  assert.equal(server.requests.filter((r) => r.method === 'PATCH').length, 3);

  server.setAvailable(false);
  assert.equal((await rejection(discovery.listNamespacedEndpointSlice({ namespace: 'default' }))).code, 503);
  server.setAvailable(false, { mode: 'reset' });
  await assert.rejects(discovery.listNamespacedEndpointSlice({ namespace: 'default' }), { code: 'ECONNRESET' });
  server.setAvailable(true);
  assert.equal((await discovery.listNamespacedEndpointSlice({ namespace: 'default' })).items.length, 1);
});

test('holdNext keeps one matching request until released, then serves it, an injected failure included', async (t) => {
  const { server, kc } = await setup(t);
  await server.create(slice('s1'));
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const held = server.holdNext({ method: 'PATCH', pathIncludes: '/endpointslices/s1' });
  server.failNext({ method: 'PATCH' }, 409);
  let settled = false;
  const patch = rejection(discovery.patchNamespacedEndpointSlice(
    { name: 's1', namespace: 'default', body: [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }] })).finally(() => { settled = true; });
  await held.arrived;
  // Other requests go on meanwhile, and so do the test's own writes.
  assert.equal((await discovery.listNamespacedEndpointSlice({ namespace: 'default' })).items.length, 1);
  await server.create(slice('s2'));
  assert.equal(settled, false, 'the held request is not answered');
  held.release();
  assert.equal((await patch).status?.['reason'], 'Conflict', 'the failure injected while it was held');
  assert.equal(server.requests.filter((r) => r.method === 'PATCH').length, 1);
});

test('the mutate hook sees every create and update, and what it returns is stored', async (t) => {
  const operations: string[] = [];
  const { server, kc } = await setup(t, {
    mutate: (object, { operation, old }) => {
      operations.push(`${operation} ${object.metadata?.name ?? ''} old=${old?.metadata?.resourceVersion ?? '-'}`);
      if (object.kind !== 'EndpointSlice') return object;
      return { ...object, metadata: { ...object.metadata, annotations: { 'liqo.io/shortcut-addresses': '10.61.0.7' } } };
    },
  });
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const created = await discovery.createNamespacedEndpointSlice({ namespace: 'default', body: slice('s1') });
  assert.deepEqual(created.metadata?.annotations, { 'liqo.io/shortcut-addresses': '10.61.0.7' });
  await discovery.patchNamespacedEndpointSlice({ name: 's1', namespace: 'default', body: [{ op: 'remove', path: '/metadata/annotations' }] });
  assert.deepEqual(server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'default', name: 's1' })?.metadata?.annotations,
    { 'liqo.io/shortcut-addresses': '10.61.0.7' }, 'the hook put the annotation back: a no-op write');
  assert.equal(server.resourceVersion(), rvOf(created));
  assert.deepEqual(operations, ['CREATE s1 old=-', `UPDATE s1 old=${rvOf(created)}`]);
});

