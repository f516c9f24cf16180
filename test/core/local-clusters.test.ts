// Which clusters count as local, and how objects are named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localClusters, localStates, statesOf } from '../../src/core/local-clusters.ts';
import { namespacedName } from '../../src/core/object-name.ts';
import { fcc, snapshotOf } from '../support/builders.ts';

const snapshot = snapshotOf([fcc(), fcc({ name: 'other', a: 'cluster4', b: 'cluster5' })]);
const describe = (states: readonly { fcc: string; usable: boolean }[]) => states.map((s) => `${s.fcc}:${s.usable ? 'usable' : 'unusable'}`);

test('with --cluster-id only that cluster is local, and it sees every FCC, others as not-this-cluster', () => {
  assert.deepEqual(localClusters(snapshot, 'cluster2'), ['cluster2']);
  assert.deepEqual(describe(statesOf(snapshot, { cluster: 'cluster2', configured: 'cluster2' })), ['liqo/cluster2-cluster3:usable', 'liqo/other:unusable']);
  assert.deepEqual(describe(localStates(snapshot, 'cluster2')), ['liqo/cluster2-cluster3:usable', 'liqo/other:unusable']);
});

test('without --cluster-id every cluster an FCC names is local, each with only its own FCCs', () => {
  assert.deepEqual(localClusters(snapshot, undefined), ['cluster2', 'cluster3', 'cluster4', 'cluster5']);
  assert.deepEqual(describe(statesOf(snapshot, { cluster: 'cluster4', configured: undefined })), ['liqo/other:usable']);
  assert.deepEqual(describe(localStates(snapshot, undefined)),
    ['liqo/cluster2-cluster3:usable', 'liqo/cluster2-cluster3:usable', 'liqo/other:usable', 'liqo/other:usable']);
});

test('an object is namespace/name, or its name alone when cluster-scoped', () => {
  assert.equal(namespacedName('demo', 'web'), 'demo/web');
  assert.equal(namespacedName(undefined, 'node-1'), 'node-1');
  assert.equal(namespacedName('', 'node-1'), 'node-1');
});
