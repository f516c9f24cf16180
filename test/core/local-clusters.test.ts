// Which clusters count as local, and how objects are named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localClusters, localStates, statesOf, viewNotes } from '../../src/core/local-clusters.ts';
import { byRef, namespacedName, refOf } from '../../src/core/object-name.ts';
import { decodeConfiguration } from '../../src/core/leaf-views.ts';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { configurationObject, fcc, snapshotOf } from '../support/builders.ts';

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

test('without --cluster-id the leaf\'s peers (a Configuration each) are not local: one connected FCC counts once', () => {
  // Each target inside the leaf's view of its peer, as a target must be where that view is known (target-mismatch).
  const fccs = [fcc(), fcc({ name: 'other', a: 'cluster4', b: 'cluster5', aRemapped: '10.65.0.0/16' })];
  const configurations = [configurationObject({ peer: 'cluster3', remotePodView: '10.61.0.0/16' }), configurationObject({ peer: 'cluster5', remotePodView: '10.65.0.0/16' })];
  const peers = buildSnapshot({ version: 1, fccs, configurations: configurations.map((c) => decodeConfiguration(c)) });
  assert.deepEqual(localClusters(peers, undefined), ['cluster2', 'cluster4']);
  assert.deepEqual(describe(localStates(peers, undefined)), ['liqo/cluster2-cluster3:usable', 'liqo/other:usable']);
  // --cluster-id still names the local cluster whatever the Configurations say.
  assert.deepEqual(localClusters(peers, 'cluster3'), ['cluster3']);
});

test('an object is namespace/name, or its name alone when cluster-scoped', () => {
  assert.equal(namespacedName('demo', 'web'), 'demo/web');
  assert.equal(namespacedName(undefined, 'node-1'), 'node-1');
  assert.equal(namespacedName('', 'node-1'), 'node-1');
});

test('the view\'s notes: nothing before the first sync, then no FCC at all, then no FCC naming the configured cluster', () => {
  assert.deepEqual(viewNotes(snapshotOf([]), 'cluster2', false), []);
  assert.deepEqual(viewNotes(snapshotOf([]), 'cluster2', true), ['the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten']);
  assert.deepEqual(viewNotes(snapshotOf([]), undefined, true), ['the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten']);
  assert.deepEqual(viewNotes(snapshot, 'cluster9', true), ['no ForeignClusterConnection names cluster cluster9: its slices are left as they are']);
  assert.deepEqual(viewNotes(snapshot, 'cluster2', true), []);
  assert.deepEqual(viewNotes(snapshot, undefined, true), [], 'without --cluster-id every named cluster is local');
});

test('objects are ordered by namespace/name, and named from their metadata or a fallback', () => {
  const refs = ['b/x', 'a/y', 'a/x', 'a/x'].map((ref) => ({ ref }));
  assert.deepEqual([...refs].sort(byRef).map((r) => r.ref), ['a/x', 'a/x', 'a/y', 'b/x']);
  assert.equal(byRef({ ref: 'a' }, { ref: 'b' }), -1);
  assert.equal(byRef({ ref: 'b' }, { ref: 'a' }), 1);
  assert.equal(byRef({ ref: 'a' }, { ref: 'a' }), 0);
  assert.equal(refOf({ metadata: { namespace: 'demo', name: 'web' } }), 'demo/web');
  assert.equal(refOf({ metadata: { name: 'node-1' } }), 'node-1');
  assert.equal(refOf({ metadata: { namespace: 'demo' } }, '3'), 'demo/3');
  assert.equal(refOf({}, '3'), '3');
});
