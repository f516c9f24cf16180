// Address → pair lookup that does not slow down with the number of pairs: sorted disjoint ranges, binary search.
import type { ShortcutPair } from './pairs.ts';

/** Disjoint ranges sorted by start; `find` is O(log n). */
class RangeTable<V extends number | bigint, T> {
  private constructor(
    private readonly starts: readonly V[],
    private readonly lasts: readonly V[],
    private readonly values: readonly T[],
  ) {}

  static of<V extends number | bigint, T>(entries: readonly { start: V; last: V; value: T }[]): RangeTable<V, T> {
    const sorted = [...entries].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    return new RangeTable(sorted.map((e) => e.start), sorted.map((e) => e.last), sorted.map((e) => e.value));
  }

  find(value: V): T | undefined {
    const { starts } = this;
    let low = 0;
    let high = starts.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if ((starts[middle] as V) <= value) { found = middle; low = middle + 1; } else high = middle - 1;
    }
    return found >= 0 && value <= (this.lasts[found] as V) ? this.values[found] : undefined;
  }
}

/** Overlapping blocks merged into disjoint ranges: membership is all that is asked of targets. */
function union<V extends number | bigint>(blocks: readonly { network: V; last: V }[]): { start: V; last: V; value: true }[] {
  const sorted = [...blocks].sort((a, b) => (a.network < b.network ? -1 : a.network > b.network ? 1 : 0));
  const merged: { start: V; last: V; value: true }[] = [];
  for (const block of sorted) {
    const previous = merged[merged.length - 1];
    if (previous !== undefined && block.network <= previous.last) {
      if (block.last > previous.last) previous.last = block.last;
    } else {
      merged.push({ start: block.network, last: block.last, value: true });
    }
  }
  return merged;
}

/** Lookups within one address family. */
export interface Span<V> { readonly network: V; readonly last: V }

/** A usable pair with its prefixes as integers of one family, ready for arithmetic. */
export interface FamilyPair<V> { readonly source: Span<V>; readonly target: Span<V>; readonly pair: ShortcutPair }

export interface FamilyIndex<V extends number | bigint> {
  /** The usable pair whose hub prefix holds the address (sources are disjoint, so at most one). */
  sourceOf(value: V): FamilyPair<V> | undefined;
  /** True when the address lies in some usable pair's shortcut prefix: the flag of SPEC §3. */
  inTarget(value: V): boolean;
}

export interface PairIndex {
  readonly size: number;
  readonly ipv4: FamilyIndex<number>;
  readonly ipv6: FamilyIndex<bigint>;
}

function familyIndex<V extends number | bigint>(entries: readonly FamilyPair<V>[]): FamilyIndex<V> {
  const sourceTable = RangeTable.of(entries.map((e) => ({ start: e.source.network, last: e.source.last, value: e })));
  const targetTable = RangeTable.of(union(entries.map((e) => e.target)));
  return {
    sourceOf: (value) => sourceTable.find(value),
    inTarget: (value) => targetTable.find(value) === true,
  };
}

/** `pairs` must have pairwise disjoint sources, as `evaluatePairs` returns them. */
export function indexPairs(pairs: readonly ShortcutPair[]): PairIndex {
  const ipv4: FamilyPair<number>[] = [];
  const ipv6: FamilyPair<bigint>[] = [];
  for (const pair of pairs) {
    const { hubPrefix: source, shortcutPrefix: target } = pair;
    if (source.family === 'IPv4' && target.family === 'IPv4') ipv4.push({ source, target, pair });
    else if (source.family === 'IPv6' && target.family === 'IPv6') ipv6.push({ source, target, pair });
  }
  return { size: pairs.length, ipv4: familyIndex(ipv4), ipv6: familyIndex(ipv6) };
}
