// Records the product trusts (docs/reference.md, "Records the product trusts"). Liqo copies every annotation of a hub
// EndpointSlice down to the leaf (the virtual kubelet onto the ShadowEndpointSlice, the leaf's controller onto the
// EndpointSlice), so a record under one of the product's keys may have been written by a hub tenant. An entry is
// used only where the product could have written it: its `out` in a space the product writes, the address it gives
// back in a space Liqo reflects for the slice's hub, and, at admission, already stored or written by the product.
// One place decides it for every reader (admission, passes, healing, explain, status). Pure.
import type { Cidr } from './cidr.ts';
import { IPV4_ACCESS, IPV6_ACCESS, type FamilyAccess, type Span } from './hub-resolution.ts';
import { hubPrefixFor, shortcutPrefixFor } from './pairs.ts';
import { field, isObject, objectAt, parseJsonObject, type JsonObject } from './json.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * Why an entry of a record was not used:
 * - `base-not-reflected`: the address it gives back is in no space Liqo reflects for the slice's hub (the source of
 *   an FCC naming the leaf, the leaf's view of the hub's pods or external CIDR);
 * - `out-not-ours`: the address it names is in no space the product writes (the target of an FCC naming the leaf,
 *   the leaf's view of a peer other than the hub; for a shadow, the leaf's declaration of the listed cluster's pods or
 *   the hub's external CIDR);
 * - `leaf-own`: either side is in the leaf's own pod or external CIDR;
 * - `not-listed`: (shadows) the address it gives back is not listed, in the restored data, under a cluster other than
 *   the leaf and the hub;
 * - `lists-leaf-or-hub`: (shadows) the recorded data lists addresses under the leaf or the hub, which the hub's virtual
 *   kubelet never does (it lists pods on virtual nodes of other clusters): its restore would make them stick;
 * - `not-stored`: at admission, the stored object does not carry that entry and the write is not the product's own.
 */
export type IgnoredBecause = 'base-not-reflected' | 'out-not-ours' | 'leaf-own' | 'not-listed' | 'lists-leaf-or-hub' | 'not-stored';

/** An entry of a record not used: `out` the address it names, `base` the one it would give back. */
export interface IgnoredEntry {
  readonly out: string;
  readonly base: string;
  readonly because: IgnoredBecause;
}

/**
 * How a record's entries are checked besides the spaces. A stored object (a pass, the healing watch, explain, status)
 * and the product's own write are checked against the spaces alone; another writer's write under review must also
 * find each entry in the object the API server has stored (`oldObject`; none on a CREATE).
 */
export type RecordCheck =
  | { readonly against: 'spaces' }
  | { readonly against: 'stored'; readonly stored: unknown };

export const SPACES_ONLY: RecordCheck = Object.freeze({ against: 'spaces' });

/** Sorted disjoint spans of one family: membership is one binary search, however many blocks. */
export class SpanSet<V extends number | bigint> {
  private readonly starts: V[] = [];
  private readonly ends: V[] = [];

  constructor(spans: readonly Span<V>[]) {
    const sorted = [...spans].sort((a, b) => (a.network < b.network ? -1 : a.network > b.network ? 1 : 0));
    for (const { network, last } of sorted) {
      const end = this.ends[this.ends.length - 1];
      if (end !== undefined && network <= end) {
        if (last > end) this.ends[this.ends.length - 1] = last;
      } else {
        this.starts.push(network);
        this.ends.push(last);
      }
    }
  }

  has(value: V): boolean {
    let low = 0;
    let high = this.starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const start = this.starts[middle];
      if (start !== undefined && start <= value) low = middle + 1; else high = middle;
    }
    const end = this.ends[low - 1];
    return end !== undefined && value <= end;
  }
}

function spansOf<V extends number | bigint>(access: FamilyAccess<V>, cidrs: Iterable<Cidr | undefined>): SpanSet<V> {
  const spans: Span<V>[] = [];
  for (const cidr of cidrs) {
    const span = cidr === undefined ? undefined : access.span(cidr);
    if (span !== undefined) spans.push(span);
  }
  return new SpanSet(spans);
}

/** The spaces an EndpointSlice's original-addresses entry `out -> base` is checked against, for one leaf and hub. */
export interface SliceRecordSpaces<V extends number | bigint> {
  /** Undefined when the product could have written `out -> base` for this slice's hub, else why not. */
  check(out: V, base: V): IgnoredBecause | undefined;
}

function sliceSpaces<V extends number | bigint>(access: FamilyAccess<V>, snapshot: Snapshot, clusterId: string, hub: string | undefined): SliceRecordSpaces<V> {
  const { views } = snapshot;
  // The FCCs of the slice's own hub (and the leaf's), never another hub's.
  const part = snapshot.hubFor(hub);
  const fccs = part.read ? part.fccs : [];
  const naming = [...fccs, ...snapshot.formerFccs].filter((fcc) => fcc.clusterA === clusterId || fcc.clusterB === clusterId);
  const hubViews = hub === undefined ? [] : views.configurationsOf(hub);
  // FCCs in any state, and those the view held before: a shortcut that went down, changed or went away is undone
  // from the entries it left.
  const reflected = spansOf(access, [
    ...naming.map((fcc) => hubPrefixFor(fcc, clusterId)),
    ...hubViews.flatMap((view) => [...view.remotePod, ...view.remoteExternal]),
  ]);
  // Without the slice's hub no Configuration can be told apart from the hub's: the FCCs' targets alone.
  const peers = hub === undefined ? [] : views.configurations.filter((view) => view.remoteCluster !== undefined && view.remoteCluster !== hub);
  const written = spansOf(access, [...naming.map((fcc) => shortcutPrefixFor(fcc, clusterId)), ...peers.flatMap((view) => view.remotePod)]);
  const own = spansOf(access, [...views.ownPods, ...views.ownExternals].map((view) => view.cidr));
  return {
    check(out, base) {
      if (own.has(out) || own.has(base)) return 'leaf-own';
      if (!written.has(out)) return 'out-not-ours';
      if (!reflected.has(base)) return 'base-not-reflected';
      return undefined;
    },
  };
}

/** The spaces a shadow's restore entry `out -> in` for an address listed under a cluster is checked against. */
export interface ShadowRecordSpaces<V extends number | bigint> {
  /** Whether the product could have written `out` for an address listed under `cluster` (neither the leaf nor the hub). */
  written(cluster: string, out: V): boolean;
}

function shadowSpaces<V extends number | bigint>(access: FamilyAccess<V>, snapshot: Snapshot, hub: string): ShadowRecordSpaces<V> {
  const { views } = snapshot;
  // The hub path writes the pod's hub IP (`status.ip`), which Liqo maps with the leaf's Configuration for the hub:
  // an address in the hub's external CIDR as that Configuration declares it.
  const hubExternal = spansOf(access, views.configurationsOf(hub).flatMap((view) => view.externalMappings.map((m) => m.declared)));
  // A repair writes the cluster's own pod address, inside what the leaf's Configuration for it declares.
  const declared = new Map<string, SpanSet<V>>();
  return {
    written(cluster, out) {
      if (hubExternal.has(out)) return true;
      let set = declared.get(cluster);
      if (set === undefined) {
        set = spansOf(access, views.configurationsOf(cluster).flatMap((view) => view.podMappings.map((m) => m.declared)));
        // Listed clusters come from writers: past a bound, sets are made again rather than kept.
        if (declared.size < MAX_CACHED) declared.set(cluster, set);
      }
      return set.has(out);
    },
  };
}

/** Per snapshot, as every review of it reads the same spaces; keys come from labels, so the map is bounded. */
const MAX_CACHED = 64;

function cached<T>(cache: WeakMap<Snapshot, Map<string, T>>, snapshot: Snapshot, key: string, make: () => T): T {
  let byKey = cache.get(snapshot);
  if (byKey === undefined) cache.set(snapshot, byKey = new Map());
  let value = byKey.get(key);
  if (value === undefined) {
    value = make();
    if (byKey.size < MAX_CACHED) byKey.set(key, value);
  }
  return value;
}

const SLICE_V4 = new WeakMap<Snapshot, Map<string, SliceRecordSpaces<number>>>();
const SLICE_V6 = new WeakMap<Snapshot, Map<string, SliceRecordSpaces<bigint>>>();
const SHADOW_V4 = new WeakMap<Snapshot, Map<string, ShadowRecordSpaces<number>>>();
const SHADOW_V6 = new WeakMap<Snapshot, Map<string, ShadowRecordSpaces<bigint>>>();

/** The EndpointSlice route's spaces for slices of `clusterId` reflected by `hub` (undefined: unlabelled). */
export const sliceRecordSpaces = {
  ipv4: (snapshot: Snapshot, clusterId: string, hub: string | undefined): SliceRecordSpaces<number> =>
    cached(SLICE_V4, snapshot, `${clusterId}\n${hub ?? ''}`, () => sliceSpaces(IPV4_ACCESS, snapshot, clusterId, hub)),
  ipv6: (snapshot: Snapshot, clusterId: string, hub: string | undefined): SliceRecordSpaces<bigint> =>
    cached(SLICE_V6, snapshot, `${clusterId}\n${hub ?? ''}`, () => sliceSpaces(IPV6_ACCESS, snapshot, clusterId, hub)),
};

/** The shadow route's spaces for shadows reflected by `hub`. */
export const shadowRecordSpaces = {
  ipv4: (snapshot: Snapshot, hub: string): ShadowRecordSpaces<number> => cached(SHADOW_V4, snapshot, hub, () => shadowSpaces(IPV4_ACCESS, snapshot, hub)),
  ipv6: (snapshot: Snapshot, hub: string): ShadowRecordSpaces<bigint> => cached(SHADOW_V6, snapshot, hub, () => shadowSpaces(IPV6_ACCESS, snapshot, hub)),
};

/**
 * The record under `key` as the stored object carries it (an empty one when it carries none, as on a CREATE): a write
 * under review must repeat an entry of it for the entry to count.
 */
export function storedRecord(stored: unknown, key: string): JsonObject {
  const annotations = isObject(stored) ? objectAt(stored, 'metadata', 'annotations') : undefined;
  return parseJsonObject(annotations === undefined ? undefined : field(annotations, key)) ?? NO_RECORD;
}

/** Whether the stored record holds `out -> base`. */
export function storedHolds(record: JsonObject, out: string, base: string): boolean {
  return Object.hasOwn(record, out) && record[out] === base;
}

const NO_RECORD: JsonObject = Object.freeze({});
