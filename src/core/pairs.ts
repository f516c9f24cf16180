// From shortcut records to rewrite rules for one cluster (docs/reference.md, "Pairs"): which FCCs give a usable pair, and why not.
import { hasHostBits, overlaps, parseCidr, type Cidr } from './cidr.ts';
import { ipv4, ipv6 } from './ip.ts';
import type { ForeignClusterConnection, SideNetworking } from './fcc.ts';
import { localOverlap, NO_LEAF_VIEWS, targetMismatch, tunnelDown, type LeafViews, type TunnelState, type TunnelStates } from './leaf-views.ts';

export type UnusableReason =
  | 'not-connected' | 'tunnel-down' | 'connection-stale' | 'invalid-cidr' | 'family-mismatch'
  | 'prefix-mismatch' | 'conflict' | 'chain' | 'local-overlap' | 'target-mismatch' | 'not-this-cluster';

export const UNUSABLE_REASONS: readonly UnusableReason[] = [
  'not-connected', 'tunnel-down', 'connection-stale', 'invalid-cidr', 'family-mismatch',
  'prefix-mismatch', 'conflict', 'chain', 'local-overlap', 'target-mismatch', 'not-this-cluster',
];

/** A rewrite rule: addresses of `peer`'s pods in `hubPrefix` are reached directly at the same host in `shortcutPrefix`. */
export interface ShortcutPair {
  readonly fcc: string;
  readonly peer: string;
  readonly hubPrefix: Cidr;
  readonly shortcutPrefix: Cidr;
}

export type PairState =
  | { readonly usable: true; readonly fcc: string; readonly pair: ShortcutPair }
  | { readonly usable: false; readonly fcc: string; readonly peer: string | undefined;
      readonly reason: UnusableReason; readonly detail: string };

/** What the leaf itself knows beyond the FCCs (cluster mode, or Liqo objects given offline); empty when unknown. */
export interface LeafState {
  readonly tunnels: TunnelStates;
  readonly views: LeafViews;
}

const NOTHING_KNOWN: LeafState = Object.freeze({ tunnels: new Map<string, TunnelState>(), views: NO_LEAF_VIEWS });

type Candidate = { readonly fcc: ForeignClusterConnection; readonly pair: ShortcutPair };

type UnusableState = Extract<PairState, { readonly usable: false }>;

function unusable(fcc: string, peer: string | undefined, reason: UnusableReason, detail: string): UnusableState {
  return { usable: false, fcc, peer, reason, detail };
}

function localSide(fcc: ForeignClusterConnection, clusterId: string):
  { readonly peer: string; readonly side: SideNetworking | undefined; readonly label: 'A' | 'B' } | undefined {
  if (fcc.clusterA === undefined || fcc.clusterB === undefined || fcc.clusterA === fcc.clusterB) return undefined;
  if (fcc.clusterA === clusterId) return { peer: fcc.clusterB, side: fcc.sideA, label: 'A' };
  if (fcc.clusterB === clusterId) return { peer: fcc.clusterA, side: fcc.sideB, label: 'B' };
  return undefined;
}

/** The hub prefix an FCC gives this cluster, usable or not: how `explain` names the FCC behind an untouched address. */
export function hubPrefixFor(fcc: ForeignClusterConnection, clusterId: string): Cidr | undefined {
  return parseCidr(localSide(fcc, clusterId)?.side?.podCIDR ?? '');
}

/** The shortcut prefix an FCC gives this cluster, usable or not: where the product may have written addresses. */
export function shortcutPrefixFor(fcc: ForeignClusterConnection, clusterId: string): Cidr | undefined {
  return parseCidr(localSide(fcc, clusterId)?.side?.remappedPodCIDR ?? '');
}

export function notThisCluster(fcc: ForeignClusterConnection, clusterId: string): UnusableState {
  return unusable(fcc.ref, undefined, 'not-this-cluster',
    `connects ${fcc.clusterA ?? '?'} and ${fcc.clusterB ?? '?'}, not ${clusterId} and another cluster`);
}

/** A CIDR of a shortcut record, parsed strictly: the block, or why it is none (the detail of `invalid-cidr`). */
function strictCidr(text: string | undefined, field: string): Cidr | string {
  const cidr = parseCidr(text ?? '');
  if (cidr === undefined) return `${field} ${JSON.stringify(text ?? null)} is not a CIDR`;
  if (hasHostBits(text ?? '', cidr)) return `${field} ${JSON.stringify(text)} has host bits set: the network is ${cidr.text}`;
  return cidr;
}

/** The checks that need no other FCC (the FCC, the leaf's tunnels and views), in the order their reasons take precedence. */
function candidate(fcc: ForeignClusterConnection, clusterId: string, leaf: LeafState): PairState | Candidate {
  const local = localSide(fcc, clusterId);
  if (local === undefined) return notThisCluster(fcc, clusterId);
  const { peer, side, label } = local;
  if (!fcc.isConnected) return unusable(fcc.ref, peer, 'not-connected', `status.isConnected is not true (phase ${fcc.phase ?? 'unset'})`);
  const down = tunnelDown(peer, leaf.tunnels.get(peer));
  if (down !== undefined) return unusable(fcc.ref, peer, down.reason, down.detail);
  const where = `status.foreignCluster${label}Networking`;
  const hubPrefix = strictCidr(side?.podCIDR, `${where}.podCIDR`);
  if (typeof hubPrefix === 'string') return unusable(fcc.ref, peer, 'invalid-cidr', hubPrefix);
  const shortcutPrefix = strictCidr(side?.remappedPodCIDR, `${where}.remappedPodCIDR`);
  if (typeof shortcutPrefix === 'string') return unusable(fcc.ref, peer, 'invalid-cidr', shortcutPrefix);
  if (hubPrefix.family !== shortcutPrefix.family) {
    return unusable(fcc.ref, peer, 'family-mismatch', `${hubPrefix.text} is ${hubPrefix.family}, ${shortcutPrefix.text} is ${shortcutPrefix.family}`);
  }
  if (hubPrefix.prefixLength !== shortcutPrefix.prefixLength) {
    return unusable(fcc.ref, peer, 'prefix-mismatch', `${hubPrefix.text} and ${shortcutPrefix.text} differ in prefix length, so host bits would be lost`);
  }
  // A property of the pair on this leaf, like the checks above: it never depends on other FCCs, so it is decided
  // before conflicts and chains, which only candidates take part in.
  const overlap = localOverlap(leaf.views, hubPrefix, peer);
  if (overlap !== undefined) return unusable(fcc.ref, peer, 'local-overlap', overlap);
  const mismatch = targetMismatch(leaf.views, shortcutPrefix, peer);
  if (mismatch !== undefined) return unusable(fcc.ref, peer, 'target-mismatch', mismatch);
  return { fcc, pair: { fcc: fcc.ref, peer, hubPrefix, shortcutPrefix } };
}

function isCandidate(value: PairState | Candidate): value is Candidate {
  return 'pair' in value && !('usable' in value);
}

/** Canonical texts identify a pair: two FCCs with the same source and target give one rule. */
export function pairKey(pair: ShortcutPair): string {
  return `${pair.hubPrefix.text}>${pair.shortcutPrefix.text}`;
}

/**
 * Marks every distinct pair whose `side` overlaps the same side of another. Identical pairs were merged before, and
 * overlapping prefixes of one length are equal, so an overlap left means two pairs that disagree. Sorted by start,
 * an interval overlaps an earlier one exactly when it starts before the furthest end seen so far.
 */
function overlapping(distinct: readonly ShortcutPair[], side: (pair: ShortcutPair) => Cidr): Map<ShortcutPair, ShortcutPair> {
  const sorted = [...distinct].sort((a, b) => compareCidrs(side(a), side(b)));
  const marked = new Map<ShortcutPair, ShortcutPair>();
  let reach: ShortcutPair | undefined;
  for (const pair of sorted) {
    if (reach !== undefined && overlaps(side(reach), side(pair))) {
      if (!marked.has(pair)) marked.set(pair, reach);
      if (!marked.has(reach)) marked.set(reach, pair);
    }
    if (reach === undefined || side(reach).family !== side(pair).family || side(pair).last > side(reach).last) reach = pair;
  }
  return marked;
}

function compareCidrs(x: Cidr, y: Cidr): number {
  if (x.family !== y.family) return x.family === 'IPv4' ? -1 : 1;
  if (x.network !== y.network) return x.network < y.network ? -1 : 1;
  return x.prefixLength - y.prefixLength;
}

/** The text of the block of `prefixLength` that holds `cidr`: the key of a possible enclosing source. */
function enclosing(cidr: Cidr, prefixLength: number): string {
  return cidr.family === 'IPv4'
    ? `${ipv4.format(ipv4.networkOf(cidr.network, prefixLength))}/${prefixLength}`
    : `${ipv6.format(ipv6.networkOf(cidr.network, prefixLength))}/${prefixLength}`;
}

/**
 * Every candidate's source, to ask which overlaps a target. CIDR blocks are nested or disjoint, so a source
 * overlapping a target either encloses it (found by key, one lookup per prefix length in use) or lies inside it
 * (found by binary search on the sorted starts): no scan, however many pairs.
 */
class SourceIndex {
  private readonly byText = new Map<string, ShortcutPair[]>();
  private readonly lengths = new Map<string, number[]>();
  private readonly sorted: readonly ShortcutPair[];

  constructor(pairs: readonly ShortcutPair[]) {
    for (const pair of pairs) {
      const { text, family, prefixLength } = pair.hubPrefix;
      const list = this.byText.get(text);
      if (list === undefined) this.byText.set(text, [pair]); else list.push(pair);
      const lengths = this.lengths.get(family) ?? [];
      if (!lengths.includes(prefixLength)) lengths.push(prefixLength);
      this.lengths.set(family, lengths);
    }
    this.sorted = [...pairs].sort((a, b) => compareCidrs(a.hubPrefix, b.hubPrefix));
  }

  /** A pair other than `self` whose source overlaps `target`. */
  overlapping(target: Cidr, self: ShortcutPair): ShortcutPair | undefined {
    for (const length of this.lengths.get(target.family) ?? []) {
      if (length > target.prefixLength) continue;
      const found = this.byText.get(enclosing(target, length))?.find((pair) => pair !== self);
      if (found !== undefined) return found;
    }
    const { sorted } = this;
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const prefix = sorted[middle]?.hubPrefix;
      if (prefix !== undefined && compareCidrs(prefix, target) < 0) low = middle + 1; else high = middle;
    }
    for (let i = low; i < sorted.length; i++) {
      const other = sorted[i];
      if (other === undefined || other.hubPrefix.family !== target.family || other.hubPrefix.network > target.last) break;
      if (other !== self) return other;
    }
    return undefined;
  }
}

export interface ClusterPairs {
  /** One state per FCC that names this cluster, in the order of `fccs`. */
  readonly states: readonly PairState[];
  /** Usable pairs, identical ones merged (the first FCC names it), sources and targets pairwise disjoint. */
  readonly pairs: readonly ShortcutPair[];
}

/** The pairs of one local cluster (docs/reference.md, "Pairs"). Deterministic for a given order of `fccs`. */
export function evaluatePairs(
  fccs: readonly ForeignClusterConnection[], clusterId: string, leaf: LeafState = NOTHING_KNOWN,
): ClusterPairs {
  const first = fccs.map((fcc) => candidate(fcc, clusterId, leaf));
  const distinct = new Map<string, ShortcutPair>();
  const canonical = new Map<ShortcutPair, ShortcutPair>();
  for (const entry of first) {
    if (!isCandidate(entry)) continue;
    const key = pairKey(entry.pair);
    const twin = distinct.get(key);
    if (twin === undefined) distinct.set(key, entry.pair);
    canonical.set(entry.pair, twin ?? entry.pair);
  }
  const all = [...distinct.values()];
  const sourceConflicts = overlapping(all, (pair) => pair.hubPrefix);
  const sources = new SourceIndex(all);
  const chains = new Map<ShortcutPair, ShortcutPair>();
  for (const pair of all) {
    // Against every candidate, conflicting ones too: a chain must not appear the moment a conflict is resolved.
    const other = sources.overlapping(pair.shortcutPrefix, pair);
    if (other !== undefined) chains.set(pair, other);
  }
  // Two pairs left standing into one target would make one shortcut address stand for two hub addresses, which the
  // original-addresses annotation cannot undo; a pair already out by the rules above takes no other pair down with it.
  const targetConflicts = overlapping(all.filter((pair) => !sourceConflicts.has(pair) && !chains.has(pair)), (pair) => pair.shortcutPrefix);
  const states = first.map((entry): PairState => {
    if (!isCandidate(entry)) return entry;
    const { pair } = entry;
    const merged = canonical.get(pair) ?? pair;
    const rival = sourceConflicts.get(merged);
    if (rival !== undefined) {
      return unusable(pair.fcc, pair.peer, 'conflict',
        `source ${pair.hubPrefix.text} overlaps ${rival.hubPrefix.text} of ${rival.fcc}, which maps it elsewhere`);
    }
    const next = chains.get(merged);
    if (next !== undefined) {
      return unusable(pair.fcc, pair.peer, 'chain',
        `target ${pair.shortcutPrefix.text} overlaps source ${next.hubPrefix.text} of ${next.fcc}: rewritten addresses would be rewritten again`);
    }
    const twin = targetConflicts.get(merged);
    if (twin !== undefined) {
      return unusable(pair.fcc, pair.peer, 'conflict',
        `target ${pair.shortcutPrefix.text} overlaps ${twin.shortcutPrefix.text} of ${twin.fcc}: one shortcut address would stand for two hub addresses`);
    }
    return { usable: true, fcc: pair.fcc, pair };
  });
  const usable = all.filter((pair) => !sourceConflicts.has(pair) && !targetConflicts.has(pair) && !chains.has(pair));
  return { states, pairs: usable.sort((a, b) => compareCidrs(a.hubPrefix, b.hubPrefix)) };
}

/** A state in one line: the rule of a usable pair, or why the FCC gives none. */
export function describeState(state: PairState): string {
  if (state.usable) {
    const { pair } = state;
    return `${pair.hubPrefix.text} -> ${pair.shortcutPrefix.text} (peer ${pair.peer})`;
  }
  return state.detail;
}
