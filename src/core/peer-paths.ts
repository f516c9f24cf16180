// Which way the view sends each peer's traffic: the one answer per peer that an operator, an Event and an alert
// need, across the three paths (docs/reference.md, "What an operator sees"). A peer is `direct` where any path of the view takes its endpoints over the
// leaf's direct network: a usable FCC pair (§2), the leaf's direct network to a peer of the hub (§8, step 4), or
// Liqo's direct connections repaired or direct (§9); else `hub`, with the reason of the path that names it.
import { peerDirectConnections } from './direct-connections.ts';
import { localStates } from './local-clusters.ts';
import { tunnelWord } from './leaf-views.ts';
import type { DirectNetwork } from './hub-resolution.ts';
import type { Snapshot } from './snapshot.ts';

export type PeerPath = 'direct' | 'hub';

export interface PeerPathState {
  readonly peer: string;
  readonly path: PeerPath;
  /** `direct`, or the contract's reason the peer's traffic goes through the hub (tunnel-down, local-overlap, ...). */
  readonly reason: string;
  readonly detail: string;
  /** The leaf's Liqo Connection state to the peer (its `status.value`, or `connection-stale`), where it has one. */
  readonly connection: string | undefined;
}

/**
 * Reasons an operator can fix: the shortcut exists but a setting keeps it from being used (a Warning Event). A tunnel
 * that is down, a peer without a direct network, an FCC not connected are states of the network, said by the
 * direct-network-lost Event instead.
 */
export const FIXABLE_REASONS: ReadonlySet<string> = new Set([
  'local-overlap', 'target-mismatch', 'hub-external', 'outside-declared', 'invalid-cidr', 'family-mismatch', 'prefix-mismatch', 'conflict', 'chain',
  'hub-unknown', 'no-hub-network', 'not-in-hub-view',
]);

interface Candidate {
  readonly path: PeerPath;
  readonly reason: string;
  readonly detail: string;
}

/**
 * The leaf's direct network to each of the hub's peers (the stock path), the leaf itself left out: the hub keeps a
 * Configuration for its every leaf, this one too, and with --cluster-id it is known and no peer of its own.
 */
export function peerDirectNetworks(snapshot: Snapshot, clusterId: string | undefined): readonly DirectNetwork[] {
  return clusterId === undefined ? snapshot.directNetworks : snapshot.directNetworks.filter((network) => network.peer !== clusterId);
}

function connectionWord(snapshot: Snapshot, peer: string): string | undefined {
  const tunnel = snapshot.tunnels.get(peer);
  return tunnel === undefined ? undefined : tunnelWord(tunnel);
}

/** One state per peer the view names, in ID order; the leaf itself and FCCs between other clusters are left out. */
export function peerPaths(snapshot: Snapshot, clusterId: string | undefined): PeerPathState[] {
  const candidates = new Map<string, Candidate[]>();
  const add = (peer: string | undefined, candidate: Candidate) => {
    if (peer === undefined || peer === '' || peer === clusterId) return;
    candidates.set(peer, [...(candidates.get(peer) ?? []), candidate]);
  };
  for (const state of localStates(snapshot, clusterId)) {
    if (state.usable) add(state.pair.peer, { path: 'direct', reason: 'direct', detail: `FCC ${state.fcc}: ${state.pair.hubPrefix.text} -> ${state.pair.shortcutPrefix.text}` });
    else if (state.reason !== 'not-this-cluster') add(state.peer, { path: 'hub', reason: state.reason, detail: `FCC ${state.fcc}: ${state.detail}` });
  }
  for (const network of peerDirectNetworks(snapshot, clusterId)) {
    if (network.state === 'direct') add(network.peer, { path: 'direct', reason: 'direct', detail: `direct network ${network.detail}` });
    else add(network.peer, { path: 'hub', reason: network.state, detail: network.detail });
  }
  for (const peer of peerDirectConnections(snapshot, clusterId)) {
    if (peer.state === 'direct' || peer.state === 'repaired') continue;
    // A direct connection unresolved for a reason of its own (outside-declared) is one to fix, even where the stock
    // path reaches the peer directly.
    if (peer.state === 'unresolved' && peer.reason !== null && FIXABLE_REASONS.has(peer.reason)) {
      add(peer.peer, { path: 'hub', reason: peer.reason, detail: `direct connections: ${peer.detail}` });
    }
  }
  return [...candidates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([peer, list]) => {
    const direct = list.find((candidate) => candidate.path === 'direct');
    const fixable = list.find((candidate) => FIXABLE_REASONS.has(candidate.reason));
    // Direct wins, but a fixable reason of another path is still said: its Services do not take the direct network.
    const chosen = direct !== undefined && fixable === undefined ? direct : fixable ?? direct ?? list[0];
    return { peer, path: chosen?.path ?? 'hub', reason: chosen?.reason ?? 'no-shortcut', detail: chosen?.detail ?? '', connection: connectionWord(snapshot, peer) };
  });
}
