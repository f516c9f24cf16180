// Which clusters count as local: the configured one, else every cluster an FCC names (each slice carries its own)
// that is not one of this leaf's peers.
import { HUB_NOT_READ_REASON, readerName } from './hubs.ts';
import type { PairState } from './pairs.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * The clusters whose view matters: the configured one, else every cluster an FCC names (slices carry the ID), less
 * those the leaf's own Liqo has a Configuration for: a leaf keeps one per peer and none for itself, so the far side of
 * each of its shortcuts is not counted (in `pairs{state}`, `/debug/pairs`) as if it were this cluster.
 */
export function localClusters(snapshot: Snapshot, clusterId: string | undefined): readonly string[] {
  if (clusterId !== undefined) return [clusterId];
  return snapshot.clusterIds.filter((id) => snapshot.views.configurationsOf(id).length === 0);
}

export interface StatesScope {
  /** The local cluster whose states are wanted. */
  readonly cluster: string;
  /** `--cluster-id`, if configured. */
  readonly configured: string | undefined;
}

/**
 * The states shown for one local cluster: with a configured cluster every FCC (others as not-this-cluster), without
 * one only the FCCs naming it, since any cluster an FCC names may be the one a slice is for.
 */
export function statesOf(snapshot: Snapshot, scope: StatesScope): readonly PairState[] {
  return scope.configured !== undefined ? snapshot.statesFor(scope.cluster) : snapshot.forCluster(scope.cluster).states;
}

export function localStates(snapshot: Snapshot, clusterId: string | undefined): readonly PairState[] {
  return localClusters(snapshot, clusterId).flatMap((cluster) => statesOf(snapshot, { cluster, configured: clusterId }));
}

/** What an operator wondering "why does nothing change?" should read first. */
export function viewNotes(snapshot: Snapshot, clusterId: string | undefined, synced: boolean): string[] {
  if (!synced) return [];
  // The stock path needs no FCC: where the leaf sees a hub's external CIDR and the hub's IPAM is read, it can rewrite.
  const seesExternal = snapshot.views.externals.length > 0;
  const stock = snapshot.hubs.some((part) => part.ipam.known) && seesExternal;
  const notes: string[] = [];
  if (snapshot.fccs.length === 0) {
    notes.push(stock
      ? 'the stock-Liqo path alone, which needs no ForeignClusterConnection: addresses the hub\'s IPAM allocated are resolved through it'
      : 'the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten');
  } else if (clusterId !== undefined && snapshot.forCluster(clusterId).states.length === 0) {
    notes.push(`no ForeignClusterConnection names cluster ${clusterId}: ${stock ? 'only addresses the hub allocated are resolved' : 'its slices are left as they are'}`);
  }
  if (snapshot.hubs.length <= 1) {
    const { hub } = snapshot;
    if (!hub.known && seesExternal) notes.push(`the hub's IPAM objects are not known (${hub.why}): addresses it allocated stay hub-external`);
  } else if (seesExternal) {
    const readers = { parts: snapshot.hubs, consumers: snapshot.consumers };
    for (const part of snapshot.hubs) {
      if (!part.ipam.known) notes.push(`hub ${readerName(part, readers)}'s IPAM objects are not known (${part.ipam.why}): addresses it allocated stay hub-external`);
    }
  }
  // /readyz stays 200 for a hub away (the other hubs' objects are decided): its note says whose objects wait.
  for (const part of snapshot.hubs) {
    if (part.away !== undefined) {
      notes.push(`the reader of hub ${readerName(part, { parts: snapshot.hubs, consumers: snapshot.consumers })} is away (${part.away}): its objects are left alone (${HUB_NOT_READ_REASON}) until it reads again`);
    }
  }
  if (snapshot.unreadHubs.length > 0) {
    notes.push(`no hub reader stands for ${snapshot.unreadHubs.join(', ')} (a consumer of this leaf): its objects are left alone (${HUB_NOT_READ_REASON})`);
  }
  return notes;
}
