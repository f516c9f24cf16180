// The immutable view a request reads: every FCC, evaluated per local cluster on first use and kept with the snapshot.
import type { ForeignClusterConnection } from './fcc.ts';
import { leafViews, type LeafViews, type LiqoConfiguration, type TunnelStates } from './leaf-views.ts';
import { directNetworks, HUB_NOT_READ, hubResolver, NO_HUB_RESOLVER, type DirectNetwork, type HubIpam, type HubResolver } from './hub-resolution.ts';
import { byRef } from './object-name.ts';
import { indexPairs, type PairIndex } from './pair-index.ts';
import { evaluatePairs, notThisCluster, type PairState, type ShortcutPair } from './pairs.ts';

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
  /** The hub's IPAM objects (stock Liqo), or why they are not known. */
  readonly hub: HubIpam;
  /**
   * Grows whenever what the stock path reads changed (the hub's IPs and Configurations, the leaf's Configurations
   * and Connections): the controller re-runs on it, as it does when the usable pairs change.
   */
  readonly stockInputs: number;
  /** Resolves addresses of slices reflected by `hubId` through its IPAM; inactive where the leaf sees none of its external CIDR. */
  resolverFor(hubId: string): HubResolver;
  /** The leaf's direct network to each peer of the hub (the stock path's step 4). */
  readonly directNetworks: readonly DirectNetwork[];
  /** Every cluster ID named by some FCC, sorted. */
  readonly clusterIds: readonly string[];
  forCluster(clusterId: string): ClusterView;
  /** A state for every FCC, `not-this-cluster` included: what `explain` and `/debug/pairs` show. */
  statesFor(clusterId: string): readonly PairState[];
}

export interface SnapshotInput {
  readonly version: number;
  readonly fccs: readonly ForeignClusterConnection[];
  readonly formerFccs?: readonly ForeignClusterConnection[];
  readonly tunnels?: TunnelStates;
  readonly configurations?: readonly LiqoConfiguration[];
  readonly hub?: HubIpam;
  readonly stockInputs?: number;
}

/** The view of a cluster no FCC names: no states, no pairs. */
const EMPTY_VIEW: ClusterView = Object.freeze({ states: Object.freeze([]), pairs: Object.freeze([]), index: indexPairs([]) });

export function buildSnapshot(input: SnapshotInput): Snapshot {
  const fccs = Object.freeze([...input.fccs].sort(byRef));
  const tunnels: TunnelStates = new Map(input.tunnels ?? []);
  const leaf = leafViews(input.configurations ?? []);
  const byCluster = new Map<string, ForeignClusterConnection[]>();
  const file = (id: string | undefined, fcc: ForeignClusterConnection) => {
    if (id === undefined) return;
    const list = byCluster.get(id);
    if (list === undefined) byCluster.set(id, [fcc]); else list.push(fcc);
  };
  // Two plain calls rather than a Set of the two IDs: a Set per FCC was most of what a rebuild allocated.
  for (const fcc of fccs) {
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
      const { states, pairs } = evaluatePairs(named, clusterId, { tunnels, views: leaf });
      view = Object.freeze({ states: Object.freeze(states), pairs, index: indexPairs(pairs) });
      views.set(clusterId, view);
    }
    return view;
  };
  const hub = input.hub ?? HUB_NOT_READ;
  // Only hubs the leaf has a Configuration for get a resolver, made on first use: origin labels do not bound memory.
  const resolvers = new Map<string, HubResolver>();
  const resolverFor = (hubId: string): HubResolver => {
    if (leaf.configurationsOf(hubId).length === 0) return NO_HUB_RESOLVER;
    let resolver = resolvers.get(hubId);
    if (resolver === undefined) {
      resolver = hubResolver(hubId, hub, { configurationsOf: leaf.configurationsOf, tunnels });
      resolvers.set(hubId, resolver);
    }
    return resolver;
  };
  return Object.freeze({
    version: input.version,
    fccs,
    formerFccs: Object.freeze([...input.formerFccs ?? []]),
    tunnels,
    views: leaf,
    hub,
    stockInputs: input.stockInputs ?? 0,
    directNetworks: Object.freeze(directNetworks(hub, { configurationsOf: leaf.configurationsOf, tunnels })),
    resolverFor,
    clusterIds: Object.freeze([...byCluster.keys()].sort()),
    forCluster,
    statesFor(clusterId: string): readonly PairState[] {
      // The cluster's FCCs are a subsequence of `fccs`, and its states are in the same order.
      const named = byCluster.get(clusterId) ?? [];
      const { states } = forCluster(clusterId);
      let next = 0;
      return fccs.map((fcc) => (named[next] === fcc ? states[next++] : undefined) ?? notThisCluster(fcc, clusterId));
    },
  });
}
