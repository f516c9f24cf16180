// viewNotes speaks of FCCs that name a cluster, usable or not: "no FCC names cluster X" on a cluster whose FCCs are
// all unusable would send an operator looking for an FCC that is there, instead of at why it is unusable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { viewNotes } from '../../src/core/local-clusters.ts';
import { fcc, snapshotOf } from '../support/builders.ts';

const NONE_AT_ALL = 'the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten';

test('a configured cluster named only by unusable FCCs gets no note: its FCCs are there, the states say why', () => {
  for (const [what, unusable] of [
    ['not connected', fcc({ connected: false })],
    ['no pod CIDR', fcc({ aPod: null })],
    ['cluster2 as side B, not connected', fcc({ a: 'cluster4', b: 'cluster2', connected: false })],
  ] as const) {
    const snapshot = snapshotOf([unusable]);
    assert.equal(snapshot.forCluster('cluster2').pairs.length, 0, `${what}: no usable pair`);
    assert.ok(snapshot.forCluster('cluster2').states.length > 0, `${what}: but an FCC names cluster2`);
    assert.deepEqual(viewNotes(snapshot, 'cluster2', true), [], what);
  }
});

test('a configured cluster no FCC names, beside FCCs of other clusters, usable or not, gets the note with its name', () => {
  const snapshot = snapshotOf([fcc({ a: 'cluster4', b: 'cluster5' }), fcc({ name: 'down', a: 'cluster6', b: 'cluster7', connected: false })]);
  assert.deepEqual(viewNotes(snapshot, 'cluster2', true), ['no ForeignClusterConnection names cluster cluster2: its slices are left as they are']);
});

test('no FCC at all is its own note; before the first sync, and without --cluster-id, unusable FCCs give none', () => {
  assert.deepEqual(viewNotes(snapshotOf([]), 'cluster2', true), [NONE_AT_ALL]);
  assert.deepEqual(viewNotes(snapshotOf([fcc({ connected: false })]), 'cluster2', false), []);
  assert.deepEqual(viewNotes(snapshotOf([fcc({ connected: false })]), undefined, true), [], 'without --cluster-id every named cluster is local');
});
