// The immutable view a request reads: FCCs sorted, evaluated per cluster on first use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { fcc, tunnelValues } from '../support/builders.ts';

test('FCCs are sorted by reference and every named cluster is listed once, sorted', () => {
  const snapshot = buildSnapshot({ version: 7, fccs: [fcc({ name: 'z', a: 'cluster9', b: 'cluster1' }), fcc({ name: 'a' }),
    fcc({ name: 'self', a: 'cluster2', b: 'cluster2' })] });
  assert.equal(snapshot.version, 7);
  assert.deepEqual(snapshot.fccs.map((f) => f.ref), ['liqo/a', 'liqo/self', 'liqo/z']);
  assert.deepEqual(snapshot.clusterIds, ['cluster1', 'cluster2', 'cluster3', 'cluster9']);
  assert.ok(Object.isFrozen(snapshot) && Object.isFrozen(snapshot.fccs));
});

test('a cluster\'s view holds one state per FCC naming it, and is made once', () => {
  const snapshot = buildSnapshot({ version: 1, fccs: [fcc(), fcc({ name: 'other', a: 'cluster4', b: 'cluster5' })] });
  const view = snapshot.forCluster('cluster2');
  assert.deepEqual(view.states.map((s) => s.fcc), ['liqo/cluster2-cluster3']);
  assert.equal(view.pairs.length, 1);
  assert.equal(view.index.ipv4.remap(0x0a3f0001), 0x0a3d0001, '10.63.0.1 -> 10.61.0.1');
  assert.equal(snapshot.forCluster('cluster2'), view);
});

test('a cluster no FCC names gets the empty view', () => {
  const view = buildSnapshot({ version: 1, fccs: [fcc()] }).forCluster('cluster7');
  assert.deepEqual([view.states.length, view.pairs.length, view.index.ipv4.remap(0x0a3f0001)], [0, 0, undefined]);
});

test('statesFor gives every FCC in order, the ones not naming the cluster as not-this-cluster', () => {
  const snapshot = buildSnapshot({ version: 1, fccs: [fcc({ name: 'b', a: 'cluster4', b: 'cluster5' }), fcc({ name: 'a' }),
    fcc({ name: 'c', b: 'cluster6', aPod: '10.66.0.0/16', aRemapped: '10.67.0.0/16' })] });
  assert.deepEqual(snapshot.statesFor('cluster2').map((s) => `${s.fcc}:${s.usable ? 'usable' : s.reason}`),
    ['liqo/a:usable', 'liqo/b:not-this-cluster', 'liqo/c:usable']);
  assert.deepEqual(snapshot.statesFor('cluster8').map((s) => s.usable ? 'usable' : s.reason), ['not-this-cluster', 'not-this-cluster', 'not-this-cluster']);
});

test('tunnel states reach the evaluation: a peer whose Connection is down gives no pair', () => {
  const snapshot = buildSnapshot({ version: 1, fccs: [fcc()], tunnels: tunnelValues([['cluster3', 'Error']]) });
  assert.deepEqual(snapshot.forCluster('cluster2').states.map((s) => s.usable ? 'usable' : s.reason), ['tunnel-down']);
});
