// The body of /debug/pairs: what the snapshot makes of every FCC, per local cluster, as JSON.
import { localClusters, statesOf } from '../core/local-clusters.ts';
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

export interface DebugPairsInput {
  readonly snapshot: Snapshot;
  /** `--cluster-id`, if configured. */
  readonly clusterId: string | undefined;
  readonly synced: boolean;
  /** Epoch ms of the last sync, undefined before the first. */
  readonly lastSync: number | undefined;
}

export function debugPairs({ snapshot, clusterId, synced, lastSync }: DebugPairsInput): DebugPairs {
  return {
    version: snapshot.version,
    synced,
    lastSync: lastSync === undefined ? null : new Date(lastSync).toISOString(),
    fccs: snapshot.fccs.length,
    clusters: localClusters(snapshot, clusterId).map((id) => {
      const states = statesOf(snapshot, { cluster: id, configured: clusterId });
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
