// What changed between two evaluations of a cluster's FCCs: the log's "once per change" and the controller's trigger.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pairChanges, pairSignature } from '../../src/core/pair-changes.ts';
import { fcc, snapshotOf } from '../support/builders.ts';

const states = (...fccs: Parameters<typeof fcc>[0][]) => snapshotOf(fccs.map((spec) => fcc(spec))).forCluster('cluster2').states;

test('nothing changed: no change', () => {
  assert.deepEqual(pairChanges(states({}), states({})), []);
});

test('an FCC that appears, changes reason, or goes is one change each, with what it was', () => {
  const before = states({ name: 'stays' }, { name: 'flips', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' },
    { name: 'goes', b: 'cluster5', connected: false });
  const after = states({ name: 'stays' }, { name: 'flips', b: 'cluster4', connected: false }, { name: 'comes', b: 'cluster6', connected: false });
  const changes = pairChanges(before, after).map((c) => [c.fcc, c.before ?? null, c.after === undefined ? null : c.after.usable ? 'usable' : c.after.reason]);
  // In the order of `after` (snapshots sort FCCs by reference), then those gone.
  assert.deepEqual(changes, [
    ['liqo/comes', null, 'not-connected'],
    ['liqo/flips', 'usable 10.64.0.0/16->10.62.0.0/16', 'not-connected'],
    ['liqo/goes', 'not-connected', null],
  ]);
});

test('a usable pair whose prefixes move is a change; one whose detail alone changes is not', () => {
  assert.equal(pairChanges(states({}), states({ aRemapped: '10.71.0.0/16' })).length, 1);
  assert.equal(pairChanges(states({ aPod: 'x' }), states({ aPod: 'y' })).length, 0, 'invalid-cidr both times');
});

test('the signature is the usable rules only, sorted: equal signatures, equal rewrites', () => {
  const one = snapshotOf([fcc({ name: 'a' }), fcc({ name: 'b', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' })]);
  const other = snapshotOf([fcc({ name: 'b', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' }), fcc({ name: 'a' }),
    fcc({ name: 'c', b: 'cluster5', connected: false })]);
  assert.equal(pairSignature(one.forCluster('cluster2')), '10.63.0.0/16>10.61.0.0/16,10.64.0.0/16>10.62.0.0/16');
  assert.equal(pairSignature(other.forCluster('cluster2')), pairSignature(one.forCluster('cluster2')));
  assert.equal(pairSignature(snapshotOf([]).forCluster('cluster2')), '');
});
