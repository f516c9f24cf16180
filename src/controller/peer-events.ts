// What an operator sees of each peer's path (docs/reference.md, "What an operator sees"): one Event per transition per peer, never per slice (the
// direct network lost, Warning, with the objects moved and how long it took; restored, Normal; a shortcut unusable
// for a reason an operator can fix, Warning), the failover time as a histogram, and the view's path per peer as a
// gauge. Transitions are read from the view (core/peer-paths.ts); a failover ends with the first pass that started
// after it was observed (that pass patched the peer's stored objects). Only the leader writes Events.
import { HUB_NOT_READ_REASON, readerName } from '../core/hubs.ts';
import { FIXABLE_REASONS, peerPaths, type PeerPathState } from '../core/peer-paths.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { EventSink, ObjectReference } from '../kube/events.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';

export interface PassSummary {
  /** When the pass started and ended (epoch ms). */
  readonly startedAt: number;
  readonly endedAt: number;
  /** Stored objects it patched. */
  readonly patched: number;
}

export interface PeerEventsOptions {
  readonly clusterId: string | undefined;
  readonly events: EventSink | undefined;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly isLeader: () => boolean;
  /** The object an Event about `peer` regards: its Connection, else Configuration, else the product's Deployment. */
  readonly regarding: (peer: string) => Promise<ObjectReference | undefined>;
  readonly now?: () => number;
}

interface Failover {
  readonly from: PeerPathState;
  readonly to: PeerPathState;
  readonly observedAt: number;
}

/** A failover observed longer ago than this, with no pass since (a replica that was not leading), is not reported. */
const STALE_FAILOVER_MS = 10 * 60_000;

/** Each hub of the leaf as the view reads it: a reader stands for it, its reader is away, or none stands for it. */
function hubStates(snapshot: Snapshot): Map<string, { readonly state: 'read' | 'away' | 'not-read'; readonly detail: string }> {
  const readers = { parts: snapshot.hubs, consumers: snapshot.consumers };
  const states = new Map<string, { readonly state: 'read' | 'away' | 'not-read'; readonly detail: string }>();
  for (const part of snapshot.hubs) {
    states.set(readerName(part, readers), part.away === undefined ? { state: 'read', detail: 'its reader reads it' } : { state: 'away', detail: part.away });
  }
  for (const hub of snapshot.unreadHubs) states.set(hub, { state: 'not-read', detail: 'no hub reader stands for it' });
  return states;
}

export class PeerEvents {
  private previous = new Map<string, PeerPathState>();
  private previousHubs = new Map<string, { readonly state: 'read' | 'away' | 'not-read'; readonly detail: string }>();
  private readonly pending = new Map<string, Failover>();
  private readonly now: () => number;

  constructor(private readonly options: PeerEventsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Each new snapshot: the gauge follows it; a peer whose path or fixable reason changed is a transition. */
  observe(snapshot: Snapshot): void {
    const states = peerPaths(snapshot, this.options.clusterId);
    this.options.metrics.setPeerPaths(states);
    const next = new Map(states.map((state) => [state.peer, state]));
    const first = this.previous.size === 0;
    for (const state of states) {
      const before = this.previous.get(state.peer);
      if (first || before === undefined) continue;
      if (before.path !== state.path) this.pending.set(state.peer, { from: before, to: state, observedAt: this.now() });
      if (FIXABLE_REASONS.has(state.reason) && state.reason !== before.reason) {
        void this.emit(state.peer, { type: 'Warning', reason: 'ShortcutUnusable', action: 'Evaluate',
          note: `the direct network to ${state.peer} is not used (${state.reason}): ${state.detail}` });
      }
    }
    this.previous = next;
    // One Event per hub whose objects stop or start being decided (its reader away or back, a consumer unread).
    const hubs = hubStates(snapshot);
    for (const [hub, now] of hubs) {
      const before = this.previousHubs.get(hub);
      if (first || before === undefined || before.state === now.state) continue;
      void this.emit(hub, now.state === 'read'
        ? { type: 'Normal', reason: 'HubRead', action: 'Read', note: `the objects of hub ${hub} are decided again with its own view` }
        : { type: 'Warning', reason: 'HubNotRead', action: 'Read', note: `the objects of hub ${hub} are left alone (${HUB_NOT_READ_REASON}: ${now.detail})` });
    }
    this.previousHubs = hubs;
  }

  /** A pass ended: the failovers observed before it started are done. */
  passDone(pass: PassSummary): void {
    for (const [peer, failover] of this.pending) {
      if (failover.observedAt > pass.startedAt) continue;
      this.pending.delete(peer);
      if (pass.endedAt - failover.observedAt > STALE_FAILOVER_MS) continue;
      const seconds = (pass.endedAt - failover.observedAt) / 1000;
      const toHub = failover.to.path === 'hub';
      this.options.metrics.failoverSeconds.observe({ direction: toHub ? 'to-hub' : 'to-direct' }, seconds);
      const took = `${pass.patched} stored objects patched in ${seconds.toFixed(1)} s`;
      void this.emit(peer, toHub
        ? { type: 'Warning', reason: 'DirectNetworkLost', action: 'Failover', note: `traffic to ${peer} goes through the hub (${failover.to.reason}: ${failover.to.detail}); ${took}` }
        : { type: 'Normal', reason: 'DirectNetworkRestored', action: 'Failback', note: `traffic to ${peer} goes direct again (${failover.to.detail}); ${took}` });
    }
  }

  private async emit(peer: string, event: { type: 'Normal' | 'Warning'; reason: string; action: string; note: string }): Promise<void> {
    const log = event.type === 'Warning' ? this.options.logger.warn.bind(this.options.logger) : this.options.logger.info.bind(this.options.logger);
    log({ peer, reason: event.reason }, event.note);
    const { events } = this.options;
    if (events === undefined || !this.options.isLeader()) return;
    try {
      const regarding = await this.options.regarding(peer);
      if (regarding !== undefined) events.record({ ...event, regarding });
    } catch {
      // Which object to regard could not be read: the log line above is the record.
    }
  }
}
