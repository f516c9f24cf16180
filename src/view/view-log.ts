// What the log says of the view as it changes, once per change: each FCC's state for a local cluster, the leaf's direct
// network to each of the hub's peers, and why nothing can be rewritten. Observers of the snapshot store, beside it.
import type { ForeignClusterConnection } from '../core/fcc.ts';
import { localClusters, viewNotes } from '../core/local-clusters.ts';
import { pairChanges } from '../core/pair-changes.ts';
import { describeState, notThisCluster, type PairState } from '../core/pairs.ts';
import { peerDirectNetworks } from '../core/peer-paths.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { Logger } from '../log.ts';
import type { ShortcutView } from './shortcut-view.ts';

/** Logs each FCC whose state changed for a local cluster, once per change. */
function pairLogger(logger: Logger, clusterId: string | undefined): (snapshot: Snapshot) => void {
  let previous = new Map<string, readonly PairState[]>();
  return (snapshot) => {
    const next = new Map<string, readonly PairState[]>();
    // FCCs by reference, made only when some FCC left a cluster's list: one pass, however many left.
    let present: ReadonlyMap<string, ForeignClusterConnection> | undefined;
    for (const cluster of localClusters(snapshot, clusterId)) {
      // Only FCCs naming this cluster: in a mesh of leaves the others are thousands of not-this-cluster lines.
      const { states } = snapshot.forCluster(cluster);
      next.set(cluster, states);
      for (const change of pairChanges(previous.get(cluster) ?? [], states)) {
        const { after } = change;
        const context = { cluster, fcc: change.fcc, before: change.before ?? null, version: snapshot.version };
        if (after === undefined) {
          // Still in the source, but naming other clusters now: that is a reason (not-this-cluster), said as one.
          present ??= new Map(snapshot.fccs.map((fcc) => [fcc.ref, fcc]));
          const moved = present.get(change.fcc);
          if (moved === undefined) logger.info(context, 'shortcut gone');
          else {
            const { reason, detail } = notThisCluster(moved, cluster);
            logger.warn({ ...context, reason, detail }, 'shortcut unusable');
          }
        } else if (after.usable) logger.info({ ...context, pair: describeState(after) }, 'shortcut usable');
        else logger.warn({ ...context, reason: after.reason, detail: after.detail }, 'shortcut unusable');
      }
    }
    previous = next;
  };
}

/** Logs the leaf's direct network to each of the hub's peers (the stock path) once per change. */
function directNetworkLogger(logger: Logger, clusterId: string | undefined): (snapshot: Snapshot) => void {
  let previous = new Map<string, string>();
  return (snapshot) => {
    const next = new Map<string, string>();
    for (const { peer, state, detail } of peerDirectNetworks(snapshot, clusterId)) {
      next.set(peer, state);
      if (previous.get(peer) === state) continue;
      const context = { peer, state, detail, version: snapshot.version };
      if (state === 'direct') logger.info(context, 'direct network usable: hub addresses of its pods are resolved');
      else logger.warn(context, 'no direct network: hub addresses of its pods stay');
    }
    previous = next;
  };
}

/**
 * Says once, and again only when it changes, that nothing can be rewritten (the source holds no FCC, or none names
 * the configured cluster): the first thing to check when a webhook is up and nothing changes.
 */
function notesLogger(logger: Logger, view: { isSynced(): boolean }, clusterId: string | undefined): (snapshot: Snapshot) => void {
  let previous = '';
  return (snapshot) => {
    const notes = viewNotes(snapshot, clusterId, view.isSynced());
    const key = notes.join('\n');
    if (key === previous) return;
    previous = key;
    for (const note of notes) logger.warn({ version: snapshot.version }, note);
  };
}

/** Subscribes the three loggers to `view`. */
export function logViewChanges(view: ShortcutView, logger: Logger, clusterId: string | undefined): void {
  view.subscribe(pairLogger(logger, clusterId));
  view.subscribe(notesLogger(logger, view, clusterId));
  view.subscribe(directNetworkLogger(logger, clusterId));
}
