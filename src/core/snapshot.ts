// The immutable view a request reads: every FCC, evaluated per local cluster on first use and kept with the snapshot.
import type { ForeignClusterConnection } from './fcc.ts';
import { leafViews, type LeafViews, type LiqoConfiguration, type TunnelStates } from './leaf-views.ts';
import { directNetworks, HUB_NOT_READ, hubResolver, NO_HUB_RESOLVER, type DirectNetwork, type HubIpam, type HubResolver } from './hub-resolution.ts';
import { attributeHub, unreadHubs, type HubPart, type HubReaders } from './hubs.ts';
import { byRef } from './object-name.ts';
import { indexPairs, type PairIndex } from './pair-index.ts';
import { evaluatePairs, notThisCluster, type LeafState, type PairState, type ShortcutPair } from './pairs.ts';

export interface ClusterView {
  /** One state per FCC that names this cluster. */
  readonly states: readonly PairState[];
  readonly pairs: readonly ShortcutPair[];
  readonly index: PairIndex;
}

export interface Snapshot {
  /** Grows by one with every rebuild, so logs and `/debug/pairs` can say which view answered. */
  readonly version: number;
  readonly fccs: readonly ForeignClusterConnection[];
  /** FCCs the view held before and no longer does: they make no pair, but their spaces still vouch for records (trust.ts). */
  readonly formerFccs: readonly ForeignClusterConnection[];
  /** The leaf's Liqo Connections by peer; empty when none are known (the FCCs alone decide). */
  readonly tunnels: TunnelStates;
  /** The leaf's Liqo Configurations; empty when none are known (no local-overlap, no hub-external). */
  readonly views: LeafViews;
  /**
   * One part per hub reader (its IPAM objects and FCCs); empty without one (FCCs read on the leaf or from --shortcuts
   * files alone, every hub's IPAM unknown).
   */
  readonly hubs: readonly HubPart[];
  /**
   * The IPAM of the one hub reader where there is one (not known without one); with several, not known here: each
   * hub's own is its part's, which is what every decision reads (`hubFor`).
   */
  readonly hub: HubIpam;
  /** The leaf's consumers from its ForeignClusters; undefined where they are not known. */
  readonly consumers: readonly string[] | undefined;
  /** The leaf's consumers no reader stands for: their objects are left alone (`hub-not-read`). */
  readonly unreadHubs: readonly string[];
  /**
   * What decides the objects reflected by `origin`: its reader's part (pairs from the leaf's FCCs and that hub's, the
   * stock path through that hub's IPAM), or why no reader stands for it. Never another hub's.
   */
  hubFor(origin: string | undefined): HubView | HubUnread;
  /**
   * Grows whenever what the stock path reads changed (the hub's IPs and Configurations, the leaf's Configurations
   * and Connections): the controller re-runs on it, as it does when the usable pairs change.
   */
  readonly stockInputs: number;
  /**
   * Resolves addresses of slices reflected by `hubId` through its own IPAM; inactive where the leaf sees none of its
   * external CIDR, or no reader stands for that hub.
   */
  resolverFor(hubId: string): HubResolver;
  /** The leaf's direct network to each peer of every hub read (the stock path's step 4), one entry per peer. */
  readonly directNetworks: readonly DirectNetwork[];
  /** Every cluster ID named by some FCC, sorted. */
  readonly clusterIds: readonly string[];
  /** The pairs of every FCC together, whichever hub keeps it: what the log and the pair gauges summarise. */
  forCluster(clusterId: string): ClusterView;
  /** A state for every FCC, `not-this-cluster` included: what `explain` and `/debug/pairs` show. */
  statesFor(clusterId: string): readonly PairState[];
}

/** The part of the view that decides one hub's objects. */
export interface HubView {
  readonly read: true;
  /** The index of the part in `Snapshot.hubs`; undefined where there is no hub reader at all. */
  readonly part: number | undefined;
  readonly ipam: HubIpam;
  /** The FCCs of the leaf and of this hub: what the trust spaces of its objects' records are made of. */
  readonly fccs: readonly ForeignClusterConnection[];
  /** The pairs from the FCCs of the leaf and of this hub. */
  forCluster(clusterId: string): ClusterView;
  /** The stock path through this hub's IPAM (inactive for an object that names no hub). */
  readonly resolver: HubResolver;
}

export interface HubUnread {
  readonly read: false;
  readonly detail: string;
}

export interface SnapshotInput {
  readonly version: number;
  /** FCCs of no hub in particular: read on the leaf itself, or from --shortcuts files. They count for every hub. */
  readonly fccs: readonly ForeignClusterConnection[];
  readonly formerFccs?: readonly ForeignClusterConnection[];
  readonly tunnels?: TunnelStates;
  readonly configurations?: readonly LiqoConfiguration[];
  /** One unbound hub reader's IPAM objects: shorthand for `hubs: [{ id: undefined, ipam: hub, fccs: [] }]`. */
  readonly hub?: HubIpam;
  readonly hubs?: readonly HubPart[];
  readonly consumers?: readonly string[] | undefined;
  readonly stockInputs?: number;
}

/** The view of a cluster no FCC names: no states, no pairs. */
const EMPTY_VIEW: ClusterView = Object.freeze({ states: Object.freeze([]), pairs: Object.freeze([]), index: indexPairs([]) });

/** FCCs evaluated per local cluster on first use: the views of one group of FCCs (all of them, or one hub's). */
interface FccGroup {
  /** The group's FCCs in `namespace/name` order: `statesFor` answers in this order. */
  readonly members: readonly ForeignClusterConnection[];
  readonly clusterIds: readonly string[];
  forCluster(clusterId: string): ClusterView;
  statesFor(clusterId: string): readonly PairState[];
}

function fccGroup(sorted: readonly ForeignClusterConnection[], leaf: LeafState): FccGroup {
  const byCluster = new Map<string, ForeignClusterConnection[]>();
  const file = (id: string | undefined, fcc: ForeignClusterConnection) => {
    if (id === undefined) return;
    const list = byCluster.get(id);
    if (list === undefined) byCluster.set(id, [fcc]); else list.push(fcc);
  };
  // Two plain calls rather than a Set of the two IDs: a Set per FCC was most of what a rebuild allocated.
  for (const fcc of sorted) {
    file(fcc.clusterA, fcc);
    if (fcc.clusterB !== fcc.clusterA) file(fcc.clusterB, fcc);
  }
  // Only IDs named by an FCC get a view of their own, made on first use: slice labels are not trusted to bound the
  // memory. Every other ID shares the empty view, made once rather than on every review.
  const views = new Map<string, ClusterView>();
  const forCluster = (clusterId: string): ClusterView => {
    const named = byCluster.get(clusterId);
    if (named === undefined) return EMPTY_VIEW;
    let view = views.get(clusterId);
    if (view === undefined) {
      const { states, pairs } = evaluatePairs(named, clusterId, leaf);
      view = Object.freeze({ states: Object.freeze(states), pairs, index: indexPairs(pairs) });
      views.set(clusterId, view);
    }
    return view;
  };
  return {
    members: sorted,
    clusterIds: Object.freeze([...byCluster.keys()].sort()),
    forCluster,
    statesFor(clusterId: string): readonly PairState[] {
      // The cluster's FCCs are a subsequence of `sorted`, and its states are in the same order.
      const named = byCluster.get(clusterId) ?? [];
      const { states } = forCluster(clusterId);
      let next = 0;
      return sorted.map((fcc) => (named[next] === fcc ? states[next++] : undefined) ?? notThisCluster(fcc, clusterId));
    },
  };
}

const SEVERAL_HUBS: HubIpam = Object.freeze({ known: false, why: 'several hub readers: each hub\'s IPAM is read with its own objects' });

/** The part that stands for every hub where no hub reader is given: the leaf's FCCs, every hub's IPAM unknown. */
const NO_READER: HubPart = Object.freeze({ id: undefined, ipam: HUB_NOT_READ, fccs: Object.freeze([]) });

export function buildSnapshot(input: SnapshotInput): Snapshot {
  const parts: readonly HubPart[] = Object.freeze(input.hubs ?? (input.hub === undefined ? [] : [{ id: undefined, ipam: input.hub, fccs: [] }]));
  const readers: HubReaders = { parts, consumers: input.consumers === undefined ? undefined : Object.freeze([...input.consumers]) };
  const fccs = Object.freeze([...input.fccs, ...parts.flatMap((part) => part.fccs)].sort(byRef));
  const tunnels: TunnelStates = new Map(input.tunnels ?? []);
  const leaf = leafViews(input.configurations ?? []);
  const leafState: LeafState = { tunnels, views: leaf };
  const all = fccGroup(fccs, leafState);
  const network = { configurationsOf: leaf.configurationsOf, tunnels };
  // With one reader or none, its FCCs are all there are: one group serves every slice, as before several hubs.
  const groups = parts.length <= 1 ? [all]
    : parts.map((part) => fccGroup([...input.fccs, ...part.fccs].sort(byRef), leafState));
  // Only hubs the leaf has a Configuration for get a resolver, made on first use: origin labels do not bound memory.
  const resolvers = new Map<string, HubResolver>();
  const resolverOf = (index: number | undefined, hubId: string | undefined): HubResolver => {
    if (hubId === undefined || leaf.configurationsOf(hubId).length === 0) return NO_HUB_RESOLVER;
    const key = `${index ?? ''}/${hubId}`;
    let resolver = resolvers.get(key);
    if (resolver === undefined) {
      resolver = hubResolver(hubId, (index === undefined ? NO_READER : parts[index] ?? NO_READER).ipam, network);
      resolvers.set(key, resolver);
    }
    return resolver;
  };
  const hubFor = (origin: string | undefined): HubView | HubUnread => {
    if (parts.length === 0) return { read: true, part: undefined, ipam: HUB_NOT_READ, fccs: all.members, forCluster: all.forCluster, resolver: resolverOf(undefined, origin) };
    const attribution = attributeHub(origin, readers);
    if (!attribution.read) return attribution;
    const { part } = attribution;
    const group = groups[part] ?? all;
    return { read: true, part, ipam: parts[part]?.ipam ?? HUB_NOT_READ, fccs: group.members, forCluster: group.forCluster, resolver: resolverOf(part, origin) };
  };
  // A peer's direct network is the leaf's own state, whichever hub names the peer: one entry per peer.
  const peers = new Map<string, DirectNetwork>();
  for (const part of parts) for (const entry of directNetworks(part.ipam, network)) if (!peers.has(entry.peer)) peers.set(entry.peer, entry);
  // Each FCC is shown with the state it has where it is used: a hub's FCC among that hub's, the leaf's among the first.
  const partOf = new Map<ForeignClusterConnection, number>();
  parts.forEach((part, index) => { for (const fcc of part.fccs) partOf.set(fcc, index); });
  const statesFor = (clusterId: string): readonly PairState[] => {
    if (groups.length === 1) return all.statesFor(clusterId);
    const byFcc = new Map<ForeignClusterConnection, PairState>();
    groups.forEach((group, index) => {
      const states = group.statesFor(clusterId);
      group.members.forEach((fcc, i) => {
        const state = states[i];
        if (state !== undefined && !byFcc.has(fcc) && (partOf.get(fcc) ?? index) === index) byFcc.set(fcc, state);
      });
    });
    return fccs.map((fcc) => byFcc.get(fcc) ?? notThisCluster(fcc, clusterId));
  };
  return Object.freeze({
    version: input.version,
    fccs,
    formerFccs: Object.freeze([...input.formerFccs ?? []]),
    tunnels,
    views: leaf,
    hubs: parts,
    hub: parts.length === 0 ? HUB_NOT_READ : parts.length === 1 ? parts[0]?.ipam ?? HUB_NOT_READ : SEVERAL_HUBS,
    consumers: readers.consumers,
    unreadHubs: Object.freeze(unreadHubs(readers)),
    hubFor,
    stockInputs: input.stockInputs ?? 0,
    directNetworks: Object.freeze([...peers.values()].sort((a, b) => (a.peer < b.peer ? -1 : a.peer > b.peer ? 1 : 0))),
    resolverFor: (hubId: string): HubResolver => {
      const view = hubFor(hubId);
      return view.read ? view.resolver : NO_HUB_RESOLVER;
    },
    clusterIds: all.clusterIds,
    forCluster: all.forCluster,
    statesFor,
  });
}
