// Which clusters count as local: the configured one, else every cluster an FCC names (each slice carries its own).
import type { PairState } from './pairs.ts';
import type { Snapshot } from './snapshot.ts';

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
