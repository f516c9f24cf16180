// Address → pair lookup that does not slow down with the number of pairs: one hash table per prefix length in use.
// A lookup masks the address to each of those lengths and probes the table of that length, so its cost grows with
// the number of distinct prefix lengths (one or two in practice: Liqo hands out /16s or /24s), never with the
// number of pairs. The first design, a binary search over sorted ranges, cost 1.7 times as much per address at
// 10,000 pairs as at one (bench/, the whole rewrite of a slice); a Map per length still 1.3 to 1.4 times, all of it
// cache misses on objects spread over the heap. IPv4, the common case, therefore probes flat typed arrays, where one
// cache line holds all a hit needs: 1.04 times.
import { remapAddress } from './cidr.ts';
import { ipv6 } from './ip.ts';
import type { ShortcutPair } from './pairs.ts';

/** Lookups within one address family. */
export interface Span<V> { readonly network: V; readonly last: V; readonly prefixLength: number }

/** A usable pair with its prefixes as integers of one family, ready for arithmetic. */
export interface FamilyPair<V> { readonly source: Span<V>; readonly target: Span<V>; readonly pair: ShortcutPair }

export interface FamilyIndex<V extends number | bigint> {
  /** The usable pair whose hub prefix holds the address (sources are disjoint, so at most one). */
  sourceOf(value: V): FamilyPair<V> | undefined;
  /** The address moved into that pair's shortcut prefix, host bits kept; undefined when no usable pair holds it. */
  remap(value: V): V | undefined;
  /** True when the address lies in some usable pair's shortcut prefix: the flag of docs/reference.md "The rewrite". */
  inTarget(value: V): boolean;
}

export interface PairIndex {
  readonly ipv4: FamilyIndex<number>;
  readonly ipv6: FamilyIndex<bigint>;
}

/** Blocks grouped by prefix length, longest first; within a length the first block of a network wins. */
function byLength<V, T>(items: readonly T[], span: (item: T) => Span<V>): [number, Map<V, T>][] {
  const lengths = new Map<number, Map<V, T>>();
  for (const item of items) {
    const { prefixLength, network } = span(item);
    let table = lengths.get(prefixLength);
    if (table === undefined) lengths.set(prefixLength, table = new Map());
    // Sources are disjoint, so only targets repeat, and of them only membership is asked.
    if (!table.has(network)) table.set(network, item);
  }
  return [...lengths.entries()].sort(([a], [b]) => b - a);
}

/** Words per slot of an IPv4 level: network, 1 + the item's position (0: empty slot), target network, padding. */
const STRIDE = 4;

/**
 * The IPv4 blocks of one prefix length in an open-addressing table at most half full, networks as signed 32-bit
 * integers. A slot is 16 bytes, so a probe and the remap read one cache line.
 */
class Ipv4Level {
  private readonly netmask: number;
  private readonly shift: number;
  private readonly wrap: number;
  private readonly slots: Int32Array;

  constructor(prefixLength: number, blocks: readonly { readonly network: number; readonly target: number }[]) {
    let bits = 1;
    while (1 << bits < blocks.length * 2) bits++;
    this.netmask = prefixLength === 0 ? 0 : -1 << (32 - prefixLength);
    this.shift = 32 - bits;
    this.wrap = (1 << bits) - 1;
    this.slots = new Int32Array((1 << bits) * STRIDE);
    blocks.forEach(({ network, target }, position) => {
      let slot = this.home(network | 0);
      while (this.slots[slot * STRIDE + 1] !== 0) slot = (slot + 1) & this.wrap;
      this.slots[slot * STRIDE] = network | 0;
      this.slots[slot * STRIDE + 1] = position + 1;
      this.slots[slot * STRIDE + 2] = target | 0;
    });
  }

  private home(key: number): number {
    return Math.imul(key, 0x9e3779b1) >>> this.shift;
  }

  /** Where the block holding `value` is recorded (an offset into the slots), or -1. */
  find(value: number): number {
    const { slots } = this;
    const key = value & this.netmask;
    for (let slot = this.home(key); ; slot = (slot + 1) & this.wrap) {
      const at = slot * STRIDE;
      if (slots[at + 1] === 0) return -1;
      if (slots[at] === key) return at;
    }
  }

  position(at: number): number {
    return (this.slots[at + 1] ?? 0) - 1;
  }

  /** The target network with the host bits of `value`: the same prefix length on both sides, so a mask does it. */
  remap(at: number, value: number): number {
    return (((this.slots[at + 2] ?? 0) & this.netmask) | (value & ~this.netmask)) >>> 0;
  }
}

function ipv4Index(entries: readonly FamilyPair<number>[]): FamilyIndex<number> {
  const sourceLevels = byLength(entries, (entry) => entry.source).map(([prefixLength, table]) => {
    const items = [...table.values()];
    return { items, level: new Ipv4Level(prefixLength, items.map((item) => ({ network: item.source.network, target: item.target.network }))) };
  });
  const targetLevels = byLength(entries, (entry) => entry.target).map(([prefixLength, table]) =>
    new Ipv4Level(prefixLength, [...table.values()].map((item) => ({ network: item.target.network, target: 0 }))));
  return {
    sourceOf(value) {
      for (const { items, level } of sourceLevels) {
        const at = level.find(value);
        if (at >= 0) return items[level.position(at)];
      }
      return undefined;
    },
    remap(value) {
      for (const { level } of sourceLevels) {
        const at = level.find(value);
        if (at >= 0) return level.remap(at, value);
      }
      return undefined;
    },
    inTarget(value) {
      for (const level of targetLevels) if (level.find(value) >= 0) return true;
      return false;
    },
  };
}

/** IPv6 networks are bigints, which a Map compares by value; bigint arithmetic costs more than the lookup anyway. */
function ipv6Index(entries: readonly FamilyPair<bigint>[]): FamilyIndex<bigint> {
  const sourceLevels = byLength(entries, (entry) => entry.source);
  const targetLevels = byLength(entries, (entry) => entry.target);
  const find = (levels: readonly [number, ReadonlyMap<bigint, FamilyPair<bigint>>][], value: bigint) => {
    for (const [prefixLength, table] of levels) {
      const hit = table.get(ipv6.networkOf(value, prefixLength));
      if (hit !== undefined) return hit;
    }
    return undefined;
  };
  return {
    sourceOf: (value) => find(sourceLevels, value),
    remap(value) {
      const hit = find(sourceLevels, value);
      return hit === undefined ? undefined : remapAddress(ipv6, value, hit.source, hit.target);
    },
    inTarget: (value) => find(targetLevels, value) !== undefined,
  };
}

/** `pairs` must have pairwise disjoint sources, as `evaluatePairs` returns them. */
export function indexPairs(pairs: readonly ShortcutPair[]): PairIndex {
  const v4: FamilyPair<number>[] = [];
  const v6: FamilyPair<bigint>[] = [];
  for (const pair of pairs) {
    const { hubPrefix: source, shortcutPrefix: target } = pair;
    if (source.family === 'IPv4' && target.family === 'IPv4') v4.push({ source, target, pair });
    else if (source.family === 'IPv6' && target.family === 'IPv6') v6.push({ source, target, pair });
  }
  return { ipv4: ipv4Index(v4), ipv6: ipv6Index(v6) };
}
