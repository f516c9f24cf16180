// The body of /debug/pairs: what the snapshot makes of every FCC, per local cluster, as JSON.
import type { PairState } from '../core/pairs.ts';
import type { Snapshot } from '../core/snapshot.ts';

export interface DebugPairs {
  readonly version: number;
  readonly synced: boolean;
  readonly lastSync: string | null;
  readonly fccs: number;
  readonly clusters: readonly {
    readonly clusterId: string;
    readonly pairs: readonly { fcc: string; peer: string; hubPrefix: string; shortcutPrefix: string }[];
    readonly unusable: readonly { fcc: string; peer: string | null; reason: string; detail: string }[];
  }[];
}

/** The clusters whose view matters: the configured one, else every cluster an FCC names (slices carry the ID). */
export function localClusters(snapshot: Snapshot, clusterId: string | undefined): readonly string[] {
  return clusterId !== undefined ? [clusterId] : snapshot.clusterIds;
}

/** With a configured cluster, every FCC is listed (others as not-this-cluster); without, only those naming each cluster. */
export function localStates(snapshot: Snapshot, clusterId: string | undefined): readonly PairState[] {
  return clusterId !== undefined
    ? snapshot.statesFor(clusterId)
    : snapshot.clusterIds.flatMap((id) => snapshot.forCluster(id).states);
}

export function debugPairs(snapshot: Snapshot, clusterId: string | undefined, synced: boolean, lastSync: number | undefined): DebugPairs {
  return {
    version: snapshot.version,
    synced,
    lastSync: lastSync === undefined ? null : new Date(lastSync).toISOString(),
    fccs: snapshot.fccs.length,
    clusters: localClusters(snapshot, clusterId).map((id) => {
      const states = clusterId !== undefined ? snapshot.statesFor(id) : snapshot.forCluster(id).states;
      return {
        clusterId: id,
        pairs: snapshot.forCluster(id).pairs.map((pair) => ({
          fcc: pair.fcc, peer: pair.peer, hubPrefix: pair.hubPrefix.text, shortcutPrefix: pair.shortcutPrefix.text,
        })),
        unusable: states.flatMap((state) => (state.usable ? [] : [{ fcc: state.fcc, peer: state.peer ?? null, reason: state.reason, detail: state.detail }])),
      };
    }),
  };
}
