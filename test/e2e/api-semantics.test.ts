// What the product relies on from the API server, asked of the real one: the answers test/support/kube-api-server.ts
// imitates for the unit tests (its own tests assert the same values), checked where they come from.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fccObject, sliceObject } from '../support/builders.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { skipReason } from './support/skip.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { KubeClient, type KubeObject, type WatchEvent } from './support/kube-client.ts';
import { pathOf } from './support/objects.ts';
import { waitFor } from '../support/wait-for.ts';

const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
const FCCS = '/apis/networking.liqo.io/v1beta1/namespaces/default/foreignclusterconnections';

function slice(name: string): KubeObject {
  const object = sliceObject({ name, namespace: 'default', addresses: [['10.63.0.7']] }) as KubeObject;
  delete object.metadata?.resourceVersion;
  return object;
}

describe(`the API semantics the product relies on, on kube-apiserver ${kubernetesVersion()}`, { skip: skipReason() }, () => {
  let cp: ControlPlane;
  let admin: KubeClient;

  before(async () => {
    cp = await startControlPlane();
    admin = cp.admin;
    const crd = (await import('./support/objects.ts')).shippedManifests().find((o) => o.kind === 'CustomResourceDefinition');
    assert.ok(crd);
    await admin.ok('POST', pathOf(crd), crd);
    await waitFor(async () => (await admin.request('GET', FCCS)).status === 200, { timeoutMs: 30_000, description: 'the FCC CRD is served' });
  });

  after(async () => {
    await cp?.stop();
  });

  test('a JSON Patch whose test of resourceVersion fails answers 422 Invalid and stores nothing', async () => {
    const created = await admin.ok('POST', SLICES, slice('json-patch'));
    const rv = created.metadata?.resourceVersion;
    const patched = await admin.ok('PATCH', `${SLICES}/json-patch`, [
      { op: 'test', path: '/metadata/resourceVersion', value: rv },
      { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.7' },
    ], { contentType: 'application/json-patch+json' });
    assert.equal(patched.metadata?.generation, 2);
    const stale = await admin.request('PATCH', `${SLICES}/json-patch`, [
      { op: 'test', path: '/metadata/resourceVersion', value: rv },
      { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.99.0.7' },
    ], { contentType: 'application/json-patch+json' });
    assert.equal(stale.status, 422);
    assert.equal(stale.body.reason, 'Invalid');
    assert.equal((await admin.get(`${SLICES}/json-patch`)).metadata?.resourceVersion, patched.metadata?.resourceVersion);
    const replaced = await admin.request('PATCH', `${SLICES}/json-patch`, [{ op: 'replace', path: '/metadata/resourceVersion', value: rv }],
      { contentType: 'application/json-patch+json' });
    assert.equal(replaced.status, 409, 'a stale resourceVersion written by the patch is an optimistic-lock conflict');
  });

  test('a patch that changes nothing keeps the resourceVersion and emits no watch event', async () => {
    const created = await admin.ok('POST', SLICES, slice('no-op'));
    const events: WatchEvent[] = [];
    const watch = await admin.watch(`${SLICES}?fieldSelector=metadata.name%3Dno-op`, created.metadata?.resourceVersion ?? '', (e) => events.push(e));
    try {
      const same = await admin.ok('PATCH', `${SLICES}/no-op`, [{ op: 'replace', path: '/endpoints/0/addresses/0', value: '10.63.0.7' }],
        { contentType: 'application/json-patch+json' });
      assert.equal(same.metadata?.resourceVersion, created.metadata?.resourceVersion);
      const changed = await admin.ok('PATCH', `${SLICES}/no-op`, [{ op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.7' }],
        { contentType: 'application/json-patch+json' });
      await waitFor(() => events.some((e) => e.type === 'MODIFIED'), { timeoutMs: 10_000 });
      assert.deepEqual(events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata?.resourceVersion}`),
        [`MODIFIED ${changed.metadata?.resourceVersion}`]);
    } finally {
      watch.stop();
    }
  });

  test('a create drops .status of a resource with a status subresource, and the main endpoint leaves .status alone', async () => {
    const fcc = fccObject({ namespace: 'default' });
    const created = await admin.ok('POST', FCCS, fcc);
    assert.equal(created.status, undefined);
    const withStatus = await admin.ok('PUT', `${FCCS}/${created.metadata?.name}/status`, { ...created, status: fcc.status });
    assert.deepEqual(withStatus.status, fcc.status);
    const ignored = await admin.ok('PATCH', `${FCCS}/${created.metadata?.name}`, { status: { isConnected: false } },
      { contentType: 'application/merge-patch+json' });
    assert.equal((ignored.status as { isConnected: boolean }).isConnected, true);
    assert.equal(ignored.metadata?.resourceVersion, withStatus.metadata?.resourceVersion, 'nothing stored');
  });

  test('a custom resource PUT without a resourceVersion answers 422, a stale one 409', async () => {
    const fcc = fccObject({ namespace: 'default', name: 'put' });
    const created = await admin.ok('POST', FCCS, fcc);
    const withoutRv = await admin.request('PUT', `${FCCS}/put`, fcc);
    assert.equal(withoutRv.status, 422);
    assert.equal(withoutRv.body.reason, 'Invalid');
    await admin.ok('PUT', `${FCCS}/put`, { ...created, spec: { ...(created.spec as object), foreignClusterB: 'cluster9' } });
    const stale = await admin.request('PUT', `${FCCS}/put`, created);
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
  });

  test('limit and continue page through a label-selected list', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) await admin.ok('POST', SLICES, slice(name));
    const selector = encodeURIComponent('endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io');
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page: { items: KubeObject[]; metadata: { continue?: string } } = await admin.get(
        `${SLICES}?labelSelector=${selector}&limit=2${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`);
      names.push(...page.items.map((item) => item.metadata?.name ?? ''));
      token = page.metadata.continue || undefined;
      pages++;
    } while (token !== undefined);
    assert.ok(pages >= 2);
    assert.ok(['page-a', 'page-b', 'page-c'].every((name) => names.includes(name)));
    assert.equal(new Set(names).size, names.length);
  });

  test('a watch from a resourceVersion the server no longer holds ends with 410', async () => {
    const events: WatchEvent[] = [];
    let status: number | undefined;
    try {
      const watch = await admin.watch(FCCS, '1', (e) => events.push(e));
      await watch.ended;
    } catch (error) {
      status = Number(/HTTP (\d+)/.exec(String(error))?.[1]);
    }
    const inStream = events.find((e) => e.type === 'ERROR')?.object as { code?: number } | undefined;
    assert.equal(status ?? inStream?.code, 410, `HTTP ${status}, events ${JSON.stringify(events)}`);
  });

  test('a Lease is released with holderIdentity null and MicroTime renewTime, as the leader elector writes it', async () => {
    const path = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    const created = await admin.ok('POST', path, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: now, acquireTime: now, leaseTransitions: 0 } });
    const released = await admin.ok('PUT', `${path}/l`, { ...created, spec: { ...(created.spec as object), holderIdentity: null, leaseDurationSeconds: 1 } });
    assert.equal((released.spec as { holderIdentity?: string }).holderIdentity, undefined);
    const lost = await admin.request('PUT', `${path}/l`, { ...created, spec: { ...(created.spec as object), holderIdentity: 'c' } });
    assert.equal(lost.status, 409);
  });

  test('an unknown bearer token answers 401, a resource nobody serves 404', async () => {
    const stranger = new KubeClient(cp.url, cp.ca, { token: 'wrong' });
    try {
      assert.equal((await stranger.request('GET', SLICES)).status, 401);
    } finally {
      stranger.close();
    }
    assert.equal((await admin.request('GET', '/apis/networking.liqo.io/v1beta1/connections')).status, 404);
  });
});
