import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluatePairs, type PairState } from '../../src/core/pairs.ts';
import { decodeFcc } from '../../src/core/fcc.ts';
import { decodeConfiguration, leafViews, NO_LEAF_VIEWS } from '../../src/core/leaf-views.ts';
import { configurationObject, fcc, fccObject, tunnelValues } from '../support/builders.ts';

function reasons(states: readonly PairState[]): string[] {
  return states.map((state) => (state.usable ? 'usable' : state.reason));
}

test('a connected FCC gives the A side its podCIDR → remappedPodCIDR pair', () => {
  const { states, pairs } = evaluatePairs([fcc()], 'cluster2');
  assert.deepEqual(reasons(states), ['usable']);
  assert.equal(pairs.length, 1);
  assert.equal(pairs[0]?.hubPrefix.text, '10.63.0.0/16');
  assert.equal(pairs[0]?.shortcutPrefix.text, '10.61.0.0/16');
  assert.equal(pairs[0]?.peer, 'cluster3');
  assert.equal(pairs[0]?.fcc, 'liqo/cluster2-cluster3');
});

test('the B side of the same FCC gives cluster3 its own pair', () => {
  const { pairs } = evaluatePairs([fcc()], 'cluster3');
  assert.equal(pairs[0]?.hubPrefix.text, '10.60.0.0/16');
  assert.equal(pairs[0]?.peer, 'cluster2');
});

const single: readonly [string, Parameters<typeof fcc>[0], string, string][] = [
  ['an FCC of two other leaves is not this cluster\'s', {}, 'cluster4', 'not-this-cluster'],
  ['an FCC naming this cluster on both sides gives no pair', { a: 'cluster2', b: 'cluster2' }, 'cluster2', 'not-this-cluster'],
  ['a disconnected FCC is not used', { connected: false }, 'cluster2', 'not-connected'],
  ['a missing podCIDR is an invalid CIDR', { aPod: null }, 'cluster2', 'invalid-cidr'],
  ['a missing remappedPodCIDR is an invalid CIDR', { aRemapped: null }, 'cluster2', 'invalid-cidr'],
  ['an octal-looking podCIDR is an invalid CIDR', { aPod: '010.63.0.0/16' }, 'cluster2', 'invalid-cidr'],
  ['a shortened podCIDR is an invalid CIDR', { aPod: '10.63/16' }, 'cluster2', 'invalid-cidr'],
  ['a podCIDR with host bits set is an invalid CIDR', { aPod: '10.63.0.1/16' }, 'cluster2', 'invalid-cidr'],
  ['a remappedPodCIDR with host bits set is an invalid CIDR', { aRemapped: '10.61.1.0/16' }, 'cluster2', 'invalid-cidr'],
  ['an IPv6 podCIDR with host bits set is an invalid CIDR', { aPod: 'fd00::1/112', aRemapped: 'fd01::/112' }, 'cluster2', 'invalid-cidr'],
  ['an IPv6 pair without host bits is usable, whatever the case of its hex digits', { aPod: 'FD00::/112', aRemapped: 'fd01::/112' }, 'cluster2', 'usable'],
  ['an IPv4 source with an IPv6 target is a family mismatch', { aRemapped: 'fd00::/112' }, 'cluster2', 'family-mismatch'],
  ['a /16 source with a /24 target would lose host bits', { aRemapped: '10.61.0.0/24' }, 'cluster2', 'prefix-mismatch'],
  ['a broken B side does not spoil the A side', { bPod: 'garbage' }, 'cluster2', 'usable'],
];
for (const [name, spec, cluster, reason] of single) {
  test(name, () => assert.deepEqual(reasons(evaluatePairs([fcc(spec)], cluster).states), [reason]));
}

test('a CIDR with host bits set names the network it would have meant', () => {
  const [state] = evaluatePairs([fcc({ aPod: '10.63.0.1/16' })], 'cluster2').states;
  assert.ok(state && !state.usable);
  assert.equal(state.detail, 'status.foreignClusterANetworking.podCIDR "10.63.0.1/16" has host bits set: the network is 10.63.0.0/16');
});

test('a peer whose Connection is not Connected is tunnel-down, and one without a Connection is left to the FCC', () => {
  const tunnels = tunnelValues([['cluster3', 'Error'], ['cluster5', 'Connected']]);
  const states = evaluatePairs([fcc(), fcc({ b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' }),
    fcc({ b: 'cluster5', aPod: '10.65.0.0/16', aRemapped: '10.66.0.0/16' })], 'cluster2', { tunnels, views: NO_LEAF_VIEWS }).states;
  assert.deepEqual(reasons(states), ['tunnel-down', 'usable', 'usable']);
});

test('not-connected takes precedence over broken CIDRs', () => {
  assert.deepEqual(reasons(evaluatePairs([fcc({ connected: false, aPod: 'x' })], 'cluster2').states), ['not-connected']);
});

test('two identical pairs count once', () => {
  const { states, pairs } = evaluatePairs([fcc({ name: 'one' }), fcc({ name: 'two' })], 'cluster2');
  assert.deepEqual(reasons(states), ['usable', 'usable']);
  assert.equal(pairs.length, 1);
});

test('overlapping sources with different targets are both unusable', () => {
  const states = evaluatePairs([
    fcc({ b: 'cluster3' }),
    fcc({ b: 'cluster4', aPod: '10.63.0.0/24', aRemapped: '10.70.0.0/24' }),
    fcc({ b: 'cluster5', aPod: '10.80.0.0/16', aRemapped: '10.81.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['conflict', 'conflict', 'usable']);
});

test('one source with two different targets is a conflict', () => {
  const states = evaluatePairs([fcc({ b: 'cluster3' }), fcc({ b: 'cluster4', aRemapped: '10.62.0.0/16' })], 'cluster2').states;
  assert.deepEqual(reasons(states), ['conflict', 'conflict']);
});

test('every pair of a nested run of overlaps is marked, not only neighbours', () => {
  const states = evaluatePairs([
    fcc({ b: 'c1', aPod: '10.0.0.0/8', aRemapped: '11.0.0.0/8' }),
    fcc({ b: 'c2', aPod: '10.1.0.0/16', aRemapped: '12.1.0.0/16' }),
    fcc({ b: 'c3', aPod: '10.2.0.0/16', aRemapped: '12.2.0.0/16' }),
    fcc({ b: 'c4', aPod: '10.3.0.0/16', aRemapped: '12.3.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['conflict', 'conflict', 'conflict', 'conflict']);
});

test('a pair whose target overlaps another pair\'s source is a chain; the other pair stays usable', () => {
  const states = evaluatePairs([
    fcc({ b: 'cluster3', aPod: '10.63.0.0/16', aRemapped: '10.64.0.0/16' }),
    fcc({ b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.65.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['chain', 'usable']);
});

test('two pairs that feed each other are both chains', () => {
  const states = evaluatePairs([
    fcc({ b: 'cluster3', aPod: '10.63.0.0/16', aRemapped: '10.64.0.0/16' }),
    fcc({ b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.63.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['chain', 'chain']);
});

test('an identity pair is usable: its target is its own source', () => {
  const { states, pairs } = evaluatePairs([fcc({ a: 'rome', b: 'milan', aPod: '10.203.0.0/16', aRemapped: '10.203.0.0/16' })], 'rome');
  assert.deepEqual(reasons(states), ['usable']);
  assert.equal(pairs.length, 1);
});

test('IPv4 and IPv6 pairs never conflict or chain with each other', () => {
  const states = evaluatePairs([
    fcc({ b: 'cluster3', aPod: '0.0.0.0/0', aRemapped: '0.0.0.0/0' }),
    fcc({ b: 'cluster4', aPod: '::/0', aRemapped: '::/0' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['usable', 'usable']);
});

test('unusable states carry a detail a person can act on', () => {
  const [state] = evaluatePairs([fcc({ aRemapped: '10.61.0.0/24' })], 'cluster2').states;
  assert.ok(state && !state.usable);
  assert.match(state.detail, /10\.63\.0\.0\/16 and 10\.61\.0\.0\/24/);
});

test('two pairs into overlapping targets are both unusable: one shortcut address cannot stand for two hub addresses', () => {
  const states = evaluatePairs([
    fcc({ b: 'cluster3', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ b: 'cluster5', aPod: '10.65.0.0/16', aRemapped: '10.66.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['conflict', 'conflict', 'usable']);
});

test('a chain into an identity pair\'s space leaves the identity pair usable: only pairs left standing conflict by target', () => {
  const states = evaluatePairs([
    fcc({ b: 'cluster3', aPod: '10.50.0.0/16', aRemapped: '10.50.0.0/16' }),
    fcc({ b: 'cluster4', aPod: '10.51.0.0/16', aRemapped: '10.50.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['usable', 'chain']);
});

test('a chain is found against conflicting pairs too, so resolving a conflict never uncovers one', () => {
  const states = evaluatePairs([
    fcc({ b: 'x', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ b: 'y', aPod: '10.61.0.0/24', aRemapped: '10.70.0.0/24' }),
    fcc({ b: 'z', aPod: '10.61.0.0/24', aRemapped: '10.71.0.0/24' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['chain', 'conflict', 'conflict']);
});

test('a chain is found whether the other source encloses the target or lies inside it', () => {
  const inside = evaluatePairs([
    fcc({ b: 'x', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ b: 'y', aPod: '10.61.7.0/24', aRemapped: '10.80.7.0/24' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(inside), ['chain', 'usable']);
  const enclosing = evaluatePairs([
    fcc({ b: 'x', aPod: '10.63.7.0/24', aRemapped: '10.61.7.0/24' }),
    fcc({ b: 'y', aPod: '10.61.0.0/16', aRemapped: '10.80.0.0/16' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(enclosing), ['chain', 'usable']);
});

test('a chain is found when the other source starts at the very last address of the target', () => {
  const states = evaluatePairs([
    fcc({ b: 'x', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ b: 'y', aPod: '10.61.255.255/32', aRemapped: '10.80.0.1/32' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['chain', 'usable']);
  const v6 = evaluatePairs([
    fcc({ b: 'x', aPod: 'fd00:63::/32', aRemapped: 'fd00:61::/32' }),
    fcc({ b: 'y', aPod: 'fd00:61:ffff:ffff:ffff:ffff:ffff:ffff/128', aRemapped: 'fd00:80::1/128' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(v6), ['chain', 'usable']);
});

test('a source just past the last address of a target is no chain', () => {
  const states = evaluatePairs([
    fcc({ b: 'x', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ b: 'y', aPod: '10.62.0.0/32', aRemapped: '10.80.0.1/32' }),
  ], 'cluster2').states;
  assert.deepEqual(reasons(states), ['usable', 'usable']);
});

test('thousands of disjoint /24 pairs are all usable', () => {
  const fccs = Array.from({ length: 5000 }, (_, i) => fcc({ name: `p${i}`, b: `peer${i}`,
    aPod: `10.${i >> 8}.${i & 255}.0/24`, aRemapped: `11.${i >> 8}.${i & 255}.0/24` }));
  const { pairs } = evaluatePairs(fccs, 'cluster2');
  assert.equal(pairs.length, 5000);
});

test('only isConnected === true counts as connected, not a truthy look-alike', () => {
  for (const lookAlike of ['true', 1, 'True', {}]) {
    const object = fccObject();
    const withStatus = { ...object, status: { ...(object.status as Record<string, unknown>), isConnected: lookAlike } };
    const decoded = decodeFcc(JSON.parse(JSON.stringify(withStatus)));
    assert.deepEqual(reasons(evaluatePairs([decoded], 'cluster2').states), ['not-connected'], JSON.stringify(lookAlike));
  }
  assert.deepEqual(reasons(evaluatePairs([decodeFcc(fccObject())], 'cluster2').states), ['usable']);
});

/** cluster2's own Liqo views: the hub cluster1, and cluster3 over the shortcut seen at 10.61/16. */
const cluster2Views = leafViews([
  decodeConfiguration(configurationObject({ peer: 'cluster1' })),
  decodeConfiguration(configurationObject({ peer: 'cluster3', remotePod: '10.63.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' })),
]);

test('a pair whose source overlaps the leaf\'s own pods, its view of another cluster\'s pods or of an external CIDR is local-overlap', () => {
  const { states, pairs } = evaluatePairs([
    fcc({ name: 'own-pods', b: 'cluster4', aPod: '10.60.0.0/16', aRemapped: '10.64.0.0/16' }),
    fcc({ name: 'hub-pods', b: 'cluster5', aPod: '10.200.0.0/16', aRemapped: '10.65.0.0/16' }),
    fcc({ name: 'hub-external', b: 'cluster6', aPod: '10.71.0.0/16', aRemapped: '10.66.0.0/16' }),
    fcc({ name: 'worked' }),
  ], 'cluster2', { tunnels: new Map(), views: cluster2Views });
  assert.deepEqual(reasons(states), ['local-overlap', 'local-overlap', 'local-overlap', 'usable']);
  assert.deepEqual(pairs.map((pair) => pair.fcc), ['liqo/worked']);
});

test('an identity pair on the leaf\'s view of its own peer stays usable', () => {
  const { states } = evaluatePairs([fcc({ aPod: '10.61.0.0/16', aRemapped: '10.61.0.0/16' })], 'cluster2', { tunnels: new Map(), views: cluster2Views });
  assert.deepEqual(reasons(states), ['usable']);
});

test('a pair unusable for local-overlap is out before conflicts: a pair it overlapped keeps its own state', () => {
  const { states } = evaluatePairs([
    fcc({ name: 'overlapping', b: 'cluster4', aPod: '10.60.0.0/15', aRemapped: '10.64.0.0/15' }),
    fcc({ name: 'other', b: 'cluster5', aPod: '10.61.0.0/16', aRemapped: '10.66.0.0/16' }),
  ], 'cluster2', { tunnels: new Map(), views: leafViews([decodeConfiguration(configurationObject({ peer: 'cluster1', localPod: '10.60.0.0/16' }))]) });
  assert.deepEqual(reasons(states), ['local-overlap', 'usable']);
});

test('tunnel-down and the FCC\'s own checks take precedence over local-overlap', () => {
  const own = { b: 'cluster4', aPod: '10.60.0.0/16', aRemapped: '10.64.0.0/16' };
  assert.deepEqual(reasons(evaluatePairs([fcc(own)], 'cluster2', { views: cluster2Views, tunnels: tunnelValues([['cluster4', 'Error']]) }).states), ['tunnel-down']);
  assert.deepEqual(reasons(evaluatePairs([fcc({ ...own, aRemapped: '10.64.0.0/24' })], 'cluster2', { tunnels: new Map(), views: cluster2Views }).states), ['prefix-mismatch']);
});

test('without the leaf\'s views no pair is local-overlap', () => {
  assert.deepEqual(reasons(evaluatePairs([fcc({ b: 'cluster4', aPod: '10.60.0.0/16', aRemapped: '10.64.0.0/16' })], 'cluster2').states), ['usable']);
});
