// The snapshot store: when a published source state makes a new snapshot, and when it keeps the current one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFcc } from '../../src/core/fcc.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { decodeConfiguration } from '../../src/core/leaf-views.ts';
import { configurationObject, fcc, fccObject, sliceObject, tunnelValues } from '../support/builders.ts';
import { rewriteEndpointSlice } from '../../src/core/rewrite.ts';

function storeWithListener(): { store: SnapshotStore; notified: () => number } {
  const store = new SnapshotStore(() => 0);
  let notified = 0;
  store.subscribe(() => { notified++; });
  return { store, notified: () => notified };
}

test('the first list makes a snapshot and tells listeners, even when it is empty', () => {
  const { store, notified } = storeWithListener();
  const before = store.current();
  store.publishFccs([]);
  assert.equal(store.isSynced(), true);
  assert.equal(notified(), 1);
  assert.notEqual(store.current(), before);
});

test('a list that decodes as the current one keeps the snapshot: fields the view does not read change nothing', () => {
  const { store, notified } = storeWithListener();
  store.publishFccs([fcc(), fcc({ name: 'other', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' })]);
  const kept = store.current();
  const original = fccObject();
  const touched = { ...original, spec: { ...(original.spec as object), networking: { mtu: 1300 } },
    status: { ...(original.status as object), lastUpdated: '2026-01-01T00:00:00Z' } };
  store.publishFccs([decodeFcc(touched), fcc({ name: 'other', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' })]);
  assert.equal(store.current(), kept);
  assert.equal(notified(), 1);
});

test('every field the view reads makes a new snapshot when it changes', () => {
  const changes: [string, ReturnType<typeof fcc>][] = [
    ['isConnected', fcc({ connected: false })],
    ['foreignClusterB', fcc({ b: 'cluster4', name: 'cluster2-cluster3' })],
    ['a podCIDR', fcc({ aPod: '10.64.0.0/16' })],
    ['a remappedPodCIDR', fcc({ aRemapped: '10.62.0.0/16' })],
    ['a missing B side CIDR', fcc({ bPod: null })],
    ['the name', fcc({ name: 'renamed' })],
    ['the phase', { ...fcc(), phase: 'Failed' }],
  ];
  for (const [what, changed] of changes) {
    const { store, notified } = storeWithListener();
    store.publishFccs([fcc()]);
    const version = store.current().version;
    store.publishFccs([changed]);
    assert.equal(notified(), 2, what);
    assert.equal(store.current().version, version + 1, what);
  }
  const { store, notified } = storeWithListener();
  store.publishFccs([fcc()]);
  store.publishFccs([fcc(), fcc({ name: 'second' })]);
  store.publishFccs([fcc({ name: 'second' }), fcc()]);
  assert.equal(notified(), 3, 'an added FCC and a new order each make a snapshot');
});

test('tunnel states: the same states keep the snapshot, a changed one makes a new one', () => {
  const { store, notified } = storeWithListener();
  store.publishFccs([fcc()]);
  store.publishTunnels(tunnelValues([['cluster3', 'Connected']]));
  assert.equal(notified(), 2);
  assert.equal(store.current().forCluster('cluster2').states[0]?.usable, true);
  store.publishTunnels(tunnelValues([['cluster3', 'Connected']]));
  assert.equal(notified(), 2);
  store.publishTunnels(tunnelValues([['cluster3', 'Error']]));
  assert.equal(notified(), 3);
  const state = store.current().forCluster('cluster2').states[0];
  assert.equal(state !== undefined && !state.usable ? state.reason : undefined, 'tunnel-down');
  store.publishTunnels(tunnelValues([['cluster3', 'Error'], ['cluster4', 'Connected']]));
  assert.equal(notified(), 4, 'a new peer is a change');
  store.publishTunnels(tunnelValues([['cluster3', 'Error']]));
  assert.equal(notified(), 5, 'a peer gone is a change');
});

test('Configurations: the same views (a condition moved, another order) keep the snapshot, a moved view makes a new one', () => {
  const { store, notified } = storeWithListener();
  store.publishFccs([fcc({ aPod: '10.200.0.0/16', aRemapped: '10.61.0.0/16' })]);
  const hub = configurationObject({ peer: 'cluster1' });
  const peer = configurationObject({ peer: 'cluster3', remotePodView: '10.61.0.0/16' });
  store.publishConfigurations([decodeConfiguration(hub), decodeConfiguration(peer)]);
  assert.equal(notified(), 2);
  const state = store.current().forCluster('cluster2').states[0];
  assert.equal(state !== undefined && !state.usable ? state.reason : undefined, 'local-overlap');
  const touched = { ...hub, status: { ...(hub.status as object), conditions: [] } };
  store.publishConfigurations([decodeConfiguration(peer), decodeConfiguration(touched)]);
  assert.equal(notified(), 2, 'nothing read changed');
  store.publishConfigurations([decodeConfiguration(configurationObject({ peer: 'cluster1', remotePodView: '10.210.0.0/16' })), decodeConfiguration(peer)]);
  assert.equal(notified(), 3);
  assert.equal(store.current().forCluster('cluster2').states[0]?.usable, true);
});

test('a view lapsed by two pauses is fresh only once the relist asked after the second has settled, and says so once', async () => {
  const store = new SnapshotStore(() => 0);
  store.publishFccs([fcc()]);
  let told = 0;
  store.subscribe(() => { told++; });
  const relists: (() => void)[] = [];
  const relist = () => new Promise<void>((resolve) => { relists.push(resolve); });
  store.lapse(relist);
  store.lapse(relist);
  assert.equal(relists.length, 2);
  // The first pause's relist settles: its lists may have been sent before the second pause.
  relists[0]?.();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(store.isLapsed(), true, 'still lapsed: the second pause\'s relist has not settled');
  assert.equal(told, 0);
  relists[1]?.();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(store.isLapsed(), false);
  assert.equal(told, 1, 'listeners told once, when the lapse ends');
});

test('the view remembers the FCCs it held, as they were, so that the records they left are still trusted', () => {
  const store = new SnapshotStore();
  store.publishFccs([fcc()]);
  assert.deepEqual(store.current().formerFccs, []);
  // Its target changed, then the FCC deleted: both former versions are kept, once each; the current one is not former.
  store.publishFccs([fcc({ aRemapped: '10.71.0.0/16' })]);
  store.publishFccs([]);
  store.publishFccs([]);
  const former = store.current().formerFccs.map((f) => f.sideA?.remappedPodCIDR);
  assert.deepEqual(former, ['10.61.0.0/16', '10.71.0.0/16']);
  // The slice the first version rewrote is restored by the empty view that remembers it.
  const slice = { addresses: [['10.61.0.151']], annotations: { 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' } };
  const result = rewriteEndpointSlice(sliceObject(slice), store.current());
  assert.ok(!('skip' in result));
  assert.deepEqual(result.edits.map((edit) => `${edit.from}>${edit.to}`), ['10.61.0.151>10.63.0.151']);
});

test('the FCCs the view remembers are bounded: the oldest are forgotten first', () => {
  const store = new SnapshotStore();
  for (let i = 0; i < 1100; i++) store.publishFccs([fcc({ name: `fcc-${i}` })]);
  store.publishFccs([]);
  const former = store.current().formerFccs;
  assert.equal(former.length, 1024);
  assert.equal(former[former.length - 1]?.ref, 'liqo/fcc-1099');
});

test('restore-only (the undo): a connected FCC moves nothing, a record it vouches for is restored, a forged one is not', () => {
  const slice = (addresses: string[][], originals: string) => sliceObject({ addresses, annotations: { 'liqo.io/shortcut-original-addresses': originals } });
  const undo = new SnapshotStore(Date.now, { restoreOnly: true });
  undo.publishFccs([fcc()]);
  // The same FCC in a normal view moves a hub address; in restore-only nothing is moved.
  const normal = new SnapshotStore();
  normal.publishFccs([fcc()]);
  const fresh = sliceObject({ addresses: [['10.63.0.151']] });
  const moved = rewriteEndpointSlice(fresh, normal.current());
  assert.ok(!('skip' in moved));
  assert.deepEqual(moved.edits.map((edit) => edit.to), ['10.61.0.151']);
  const kept = rewriteEndpointSlice(fresh, undo.current());
  assert.ok(!('skip' in kept));
  assert.deepEqual(kept.edits, []);
  assert.deepEqual(undo.current().forCluster('cluster2').pairs, []);
  // The record the FCC wrote is still trusted, so the address goes back; one naming an address outside its spaces does not.
  const restored = rewriteEndpointSlice(slice([['10.61.0.151']], '{"10.61.0.151":"10.63.0.151"}'), undo.current());
  assert.ok(!('skip' in restored));
  assert.deepEqual(restored.edits.map((edit) => `${edit.from}>${edit.to}`), ['10.61.0.151>10.63.0.151']);
  const forged = rewriteEndpointSlice(slice([['10.61.0.151']], '{"10.61.0.151":"10.0.0.1"}'), undo.current());
  assert.ok(!('skip' in forged));
  assert.deepEqual(forged.edits, []);
});
