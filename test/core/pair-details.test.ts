// The words of SPEC §2's unusable states: what /debug/pairs, the log and `explain` show a person, exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFcc } from '../../src/core/fcc.ts';
import { NO_LEAF_VIEWS } from '../../src/core/leaf-views.ts';
import { evaluatePairs, hubPrefixFor, UNUSABLE_REASONS, type PairState } from '../../src/core/pairs.ts';
import { fcc, fccObject, tunnelValues } from '../support/builders.ts';

function details(states: readonly PairState[]): string[] {
  return states.map((state) => (state.usable ? 'usable' : `${state.reason}: ${state.detail}`));
}

test('every unusable reason is listed once, for the pairs metric', () => {
  assert.deepEqual([...UNUSABLE_REASONS], ['not-connected', 'tunnel-down', 'connection-stale', 'invalid-cidr', 'family-mismatch',
    'prefix-mismatch', 'conflict', 'chain', 'local-overlap', 'target-mismatch', 'not-this-cluster']);
});

const single: readonly [string, Parameters<typeof fcc>[0], string][] = [
  ['not this cluster', { a: 'cluster4', b: 'cluster5' }, 'not-this-cluster: connects cluster4 and cluster5, not cluster2 and another cluster'],
  ['not connected', { connected: false }, 'not-connected: status.isConnected is not true (phase Connecting)'],
  ['no podCIDR', { aPod: null }, 'invalid-cidr: status.foreignClusterANetworking.podCIDR null is not a CIDR'],
  ['a bad podCIDR', { aPod: '10.63/16' }, 'invalid-cidr: status.foreignClusterANetworking.podCIDR "10.63/16" is not a CIDR'],
  ['no remappedPodCIDR', { aRemapped: null }, 'invalid-cidr: status.foreignClusterANetworking.remappedPodCIDR null is not a CIDR'],
  ['a bad remappedPodCIDR', { aRemapped: 'x' }, 'invalid-cidr: status.foreignClusterANetworking.remappedPodCIDR "x" is not a CIDR'],
  ['two families', { aRemapped: 'fd00::/112' }, 'family-mismatch: 10.63.0.0/16 is IPv4, fd00::/112 is IPv6'],
  ['two lengths', { aRemapped: '10.61.0.0/24' }, 'prefix-mismatch: 10.63.0.0/16 and 10.61.0.0/24 differ in prefix length, so host bits would be lost'],
];
for (const [name, spec, expected] of single) {
  test(`the detail of ${name} names the field and the value`, () => {
    assert.deepEqual(details(evaluatePairs([fcc(spec)], 'cluster2').states), [expected]);
  });
}

test('the B side is read from foreignClusterBNetworking, and named so', () => {
  assert.deepEqual(details(evaluatePairs([fcc({ bPod: 'y' })], 'cluster3').states),
    ['invalid-cidr: status.foreignClusterBNetworking.podCIDR "y" is not a CIDR']);
  assert.deepEqual(details(evaluatePairs([fcc({ bRemapped: null })], 'cluster3').states),
    ['invalid-cidr: status.foreignClusterBNetworking.remappedPodCIDR null is not a CIDR']);
});

test('missing parts read as ? and unset, never as undefined', () => {
  const bare = decodeFcc({ metadata: { name: 'bare', namespace: 'liqo' }, spec: { foreignClusterA: 'cluster2', foreignClusterB: 'cluster3' } });
  assert.deepEqual(details(evaluatePairs([bare], 'cluster2').states), ['not-connected: status.isConnected is not true (phase unset)']);
  const oneSided = decodeFcc({ metadata: { name: 'one', namespace: 'liqo' }, spec: { foreignClusterA: 'cluster2' } });
  assert.deepEqual(details(evaluatePairs([oneSided], 'cluster2').states), ['not-this-cluster: connects cluster2 and ?, not cluster2 and another cluster']);
  const otherSided = decodeFcc({ metadata: { name: 'other', namespace: 'liqo' }, spec: { foreignClusterB: 'cluster2' } });
  assert.deepEqual(details(evaluatePairs([otherSided], 'cluster2').states), ['not-this-cluster: connects ? and cluster2, not cluster2 and another cluster']);
  const noSide = decodeFcc({ ...fccObject(), status: { isConnected: true } });
  assert.deepEqual(details(evaluatePairs([noSide], 'cluster2').states), ['invalid-cidr: status.foreignClusterANetworking.podCIDR null is not a CIDR']);
  const noRemapped = decodeFcc({ ...fccObject(), status: { isConnected: true, foreignClusterANetworking: { podCIDR: '10.63.0.0/16' } } });
  assert.deepEqual(details(evaluatePairs([noRemapped], 'cluster2').states), ['invalid-cidr: status.foreignClusterANetworking.remappedPodCIDR null is not a CIDR']);
});

test('a tunnel that is not Connected is named with its state, or as without status', () => {
  assert.deepEqual(details(evaluatePairs([fcc()], 'cluster2', { tunnels: tunnelValues([['cluster3', 'Connecting']]), views: NO_LEAF_VIEWS }).states),
    ["tunnel-down: the leaf's Liqo Connection to cluster3 is Connecting, not Connected"]);
  assert.deepEqual(details(evaluatePairs([fcc()], 'cluster2', { tunnels: tunnelValues([['cluster3', '']]), views: NO_LEAF_VIEWS }).states),
    ["tunnel-down: the leaf's Liqo Connection to cluster3 is without status, not Connected"]);
  assert.deepEqual(details(evaluatePairs([fcc()], 'cluster2', { tunnels: tunnelValues([['cluster3', 'Connected']]), views: NO_LEAF_VIEWS }).states), ['usable']);
});

test('conflicts and chains name the other FCC and both prefixes', () => {
  const sources = evaluatePairs([
    fcc({ name: 'x', b: 'x', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ name: 'y', b: 'y', aPod: '10.63.0.0/16', aRemapped: '10.62.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(details(sources), [
    'conflict: source 10.63.0.0/16 overlaps 10.63.0.0/16 of liqo/y, which maps it elsewhere',
    'conflict: source 10.63.0.0/16 overlaps 10.63.0.0/16 of liqo/x, which maps it elsewhere',
  ]);
  const targets = evaluatePairs([
    fcc({ name: 'x', b: 'x', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ name: 'y', b: 'y', aPod: '10.64.0.0/16', aRemapped: '10.61.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(details(targets), [
    'conflict: target 10.61.0.0/16 overlaps 10.61.0.0/16 of liqo/y: one shortcut address would stand for two hub addresses',
    'conflict: target 10.61.0.0/16 overlaps 10.61.0.0/16 of liqo/x: one shortcut address would stand for two hub addresses',
  ]);
  const chain = evaluatePairs([
    fcc({ name: 'x', b: 'x', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ name: 'y', b: 'y', aPod: '10.61.0.0/16', aRemapped: '10.80.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(details(chain), [
    'chain: target 10.61.0.0/16 overlaps source 10.61.0.0/16 of liqo/y: rewritten addresses would be rewritten again',
    'usable',
  ]);
});

test('hubPrefixFor gives the local side\'s podCIDR, usable or not, and nothing for another cluster', () => {
  assert.equal(hubPrefixFor(fcc({ connected: false }), 'cluster2')?.text, '10.63.0.0/16');
  assert.equal(hubPrefixFor(fcc(), 'cluster3')?.text, '10.60.0.0/16');
  assert.equal(hubPrefixFor(fcc(), 'cluster9'), undefined);
  assert.equal(hubPrefixFor(fcc({ aPod: null }), 'cluster2'), undefined);
});

test('usable pairs come out sorted by source, whatever the order of the FCCs', () => {
  const { pairs } = evaluatePairs([
    fcc({ name: 'c', b: 'c', aPod: 'fd00:63::/32', aRemapped: 'fd00:61::/32' }),
    fcc({ name: 'b', b: 'b', aPod: '10.65.0.0/16', aRemapped: '10.66.0.0/16' }),
    fcc({ name: 'a', b: 'a', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ name: 'd', b: 'd', aPod: '10.63.1.0/24', aRemapped: '10.90.1.0/24' }),
  ], 'cluster2');
  assert.deepEqual(pairs.map((p) => p.hubPrefix.text), ['10.65.0.0/16', 'fd00:63::/32']);
});
