// The address → pair index on its own: hash tables per prefix length, checked against a plain scan of the pairs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseCidr, remapAddress, type Cidr, type Ipv4Cidr } from '../../src/core/cidr.ts';
import { ipv4, ipv6 } from '../../src/core/ip.ts';
import { indexPairs } from '../../src/core/pair-index.ts';
import type { ShortcutPair } from '../../src/core/pairs.ts';

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  assert.ok(parsed, text);
  return parsed;
}

function pair(hub: string, shortcut: string, fcc = `liqo/${hub}`): ShortcutPair {
  return { fcc, peer: 'cluster3', hubPrefix: cidr(hub), shortcutPrefix: cidr(shortcut) };
}

/** An IPv4 pair's prefixes, typed as such. */
function v4Pair(p: ShortcutPair): { source: Ipv4Cidr; target: Ipv4Cidr } {
  assert.ok(p.hubPrefix.family === 'IPv4' && p.shortcutPrefix.family === 'IPv4');
  return { source: p.hubPrefix, target: p.shortcutPrefix };
}

const v4 = (text: string): number => {
  const value = ipv4.parseCanonical(text);
  assert.ok(value !== undefined, text);
  return value;
};

test('an empty index finds nothing, in either family', () => {
  const index = indexPairs([]);
  assert.equal(index.ipv4.remap(v4('10.63.0.1')), undefined);
  assert.equal(index.ipv4.inTarget(v4('10.61.0.1')), false);
  assert.equal(index.ipv6.sourceOf(1n), undefined);
});

test('finds the pair at both ends of its source and not one address past either end', () => {
  const index = indexPairs([pair('10.63.0.0/16', '10.61.0.0/16')]);
  assert.equal(index.ipv4.remap(v4('10.63.0.0')), v4('10.61.0.0'));
  assert.equal(index.ipv4.remap(v4('10.63.255.255')), v4('10.61.255.255'));
  assert.equal(index.ipv4.remap(v4('10.62.255.255')), undefined);
  assert.equal(index.ipv4.remap(v4('10.64.0.0')), undefined);
  assert.equal(index.ipv4.inTarget(v4('10.61.0.0')), true);
  assert.equal(index.ipv4.inTarget(v4('10.61.255.255')), true);
  assert.equal(index.ipv4.inTarget(v4('10.60.255.255')), false);
  assert.equal(index.ipv4.inTarget(v4('10.62.0.0')), false);
});

test('addresses with the top bit set, /0 and /32 prefixes are looked up like any other', () => {
  const index = indexPairs([pair('200.1.2.3/32', '200.9.9.9/32'), pair('240.0.0.0/8', '250.0.0.0/8')]);
  assert.equal(index.ipv4.remap(v4('200.1.2.3')), v4('200.9.9.9'));
  assert.equal(index.ipv4.remap(v4('200.1.2.4')), undefined);
  assert.equal(index.ipv4.remap(v4('240.255.255.255')), v4('250.255.255.255'));
  const all = indexPairs([pair('0.0.0.0/0', '0.0.0.0/0')]);
  assert.equal(all.ipv4.remap(v4('255.255.255.255')), v4('255.255.255.255'));
  assert.equal(all.ipv4.inTarget(v4('0.0.0.0')), true);
});

test('the longest prefix length is probed first and each length finds its own pairs', () => {
  const index = indexPairs([pair('10.63.0.0/16', '10.61.0.0/16'), pair('10.70.1.0/24', '10.71.1.0/24')]);
  assert.equal(index.ipv4.sourceOf(v4('10.70.1.9'))?.pair.fcc, 'liqo/10.70.1.0/24');
  assert.equal(index.ipv4.sourceOf(v4('10.63.7.9'))?.pair.fcc, 'liqo/10.63.0.0/16');
  assert.equal(index.ipv4.remap(v4('10.70.2.9')), undefined);
});

test('IPv6 pairs keep the host bits and stay apart from IPv4', () => {
  const index = indexPairs([pair('fd00:1::/32', 'fd00:2::/32'), pair('10.63.0.0/16', '10.61.0.0/16')]);
  const value = ipv6.parseCanonical('fd00:1::a:b');
  assert.ok(value !== undefined);
  assert.equal(ipv6.format(index.ipv6.remap(value) ?? 0n), 'fd00:2::a:b');
  assert.equal(index.ipv6.inTarget(ipv6.parseCanonical('fd00:2:ffff::1') ?? 0n), true);
  assert.equal(index.ipv6.remap(ipv6.parseCanonical('fd00:3::1') ?? 0n), undefined);
});

test('agrees with a scan of the pairs for many disjoint pairs, whatever their number (collisions and wrap-around included)', () => {
  // Disjoint /24 sources in 10/8 and targets in 11/8, at most 2,000: enough to fill tables past any probe chain.
  const pairsArbitrary = fc.uniqueArray(fc.integer({ min: 0, max: 65_535 }), { minLength: 1, maxLength: 2000 })
    .map((blocks) => blocks.map((block) => pair(`10.${block >> 8}.${block & 255}.0/24`, `11.${block >> 8}.${block & 255}.0/24`)));
  fc.assert(fc.property(pairsArbitrary, fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 50 }), (pairs, extra) => {
    const index = indexPairs(pairs);
    const spans = pairs.map((p) => ({ p, ...v4Pair(p) }));
    const probes = [...extra, ...spans.flatMap(({ source, target }) => [source.network, source.last, target.network + 7])];
    for (const address of probes) {
      const hit = spans.find(({ source }) => address >= source.network && address <= source.last);
      const expected = hit === undefined ? undefined : remapAddress(ipv4, address, hit.source, hit.target);
      assert.equal(index.ipv4.remap(address), expected, ipv4.format(address));
      assert.equal(index.ipv4.sourceOf(address)?.pair, hit?.p);
      const inTarget = spans.some(({ target }) => address >= target.network && address <= target.last);
      assert.equal(index.ipv4.inTarget(address), inTarget, ipv4.format(address));
    }
  }), { numRuns: 40 });
});
