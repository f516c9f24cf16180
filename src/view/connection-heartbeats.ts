// The leaf's Liqo Connections as tunnel states, with their gateways' heartbeats timed (docs/reference.md,
// "--connection-stale-after"). Liqo's gateway rewrites a Connection's `status.latency` at least every
// `ping-update-status-interval` while its pings are answered; when the gateway itself stops (its node lost, the pod
// hung), nothing writes the object and it reads `Connected` for as long as the pod object lives. So, as Kubernetes'
// node lifecycle controller does with a node's Lease, the rewrites are observed and the silence is timed here, on
// the product's own monotonic clock, never by comparing the gateway's clock with ours (except once, at first sight,
// with the bound allowed again for skew).
//
// Staleness is a timer, not an event: one timer for the earliest deadline re-publishes the states when a Connection
// crosses it. A rewrite that changes only the latency publishes the same states, which the store keeps as they are:
// no new snapshot, no controller pass.
import { connectionHeartbeat, isConnectionObject, labelOf, REMOTE_CLUSTER_LABEL, TUNNEL_CONNECTED, tunnelStates } from '../core/leaf-views.ts';
import { objectAt, stringField } from '../core/json.ts';
import { refOf } from '../core/object-name.ts';
import type { TunnelStates } from '../core/leaf-views.ts';
import type { Logger } from '../log.ts';
import { monotonicTime, type TimeSource } from '../util/time-source.ts';


/** A timer this late means the process did not run: less is the ordinary jitter of a loaded event loop. */
const TIMER_SLACK_MS = 1000;

export interface ConnectionHeartbeatsOptions {
  /** Silence after which a Connection with a heartbeat counts as down (`connection-stale`); 0 turns the rule off. */
  readonly staleAfterMs: number;
  /** Called with the states after every observation and when a deadline passes. */
  readonly publish: (tunnels: TunnelStates) => void;
  readonly logger: Logger;
  /** The monotonic clock the silence is timed on, and its timers (default performance.now and setTimeout). */
  readonly time?: TimeSource;
  /** The wall clock (epoch ms), for a heartbeat's timestamp at first sight and for when the last one was seen. */
  readonly wallClock?: () => number;
}

interface Heartbeat {
  /** `status.value` with `status.latency.timestamp`: what a rewrite by the gateway changes. */
  readonly stamp: string;
  /** Epoch ms of the heartbeat, undefined where the Connection carries none. */
  readonly at: number | undefined;
  /** On the monotonic clock: when the Connection goes stale without another rewrite. */
  readonly deadline: number;
}

export class ConnectionHeartbeats {
  private readonly time: TimeSource;
  private readonly wallClock: () => number;
  private readonly heartbeats = new Map<string, Heartbeat>();
  /** Peers whose gateway's health cannot be seen (a Connected Connection without heartbeat), said once each. */
  private readonly blind = new Set<string>();
  private objects: ReadonlyMap<string, unknown> = new Map();
  private cancelTimer: (() => void) | undefined;
  /** The deadline the pending timer was set for, on the monotonic clock. */
  private timerDue: number | undefined;
  private stopped = false;

  constructor(private readonly options: ConnectionHeartbeatsOptions) {
    this.time = options.time ?? monotonicTime;
    this.wallClock = options.wallClock ?? Date.now;
  }

  /** The full set of Connections after a list or a burst of watch events. */
  observe(objects: ReadonlyMap<string, unknown>): void {
    this.objects = objects;
    if (this.options.staleAfterMs > 0) this.record(objects);
    this.publish();
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private record(objects: ReadonlyMap<string, unknown>): void {
    const now = this.time.now();
    const bound = this.options.staleAfterMs;
    const seen = new Set<string>();
    for (const [key, object] of objects) {
      if (!isConnectionObject(object)) continue;
      const ref = refOf(object, key);
      seen.add(ref);
      const heartbeat = connectionHeartbeat(object);
      const status = objectAt(object, 'status');
      const value = (status && stringField(status, 'value')) ?? '';
      const stamp = `${value} ${heartbeat?.text ?? ''}`;
      const before = this.heartbeats.get(ref);
      if (before?.stamp === stamp) continue;
      if (before === undefined && heartbeat !== undefined) {
        // First sight (start, or a Connection new to this process): the gateway's own timestamp, read against our
        // clock with the bound allowed again for skew, and never more than twice the bound away.
        const age = this.wallClock() - heartbeat.at;
        const deadline = now + Math.min(2 * bound, Math.max(0, 2 * bound - age));
        this.heartbeats.set(ref, { stamp, at: Math.min(heartbeat.at, this.wallClock()), deadline });
      } else {
        this.heartbeats.set(ref, { stamp, at: heartbeat === undefined ? undefined : this.wallClock(), deadline: now + bound });
      }
      const peer = labelOf(object, REMOTE_CLUSTER_LABEL);
      if (heartbeat === undefined && value === TUNNEL_CONNECTED && peer !== undefined && !this.blind.has(peer)) {
        this.blind.add(peer);
        this.options.logger.warn({ peer, connection: ref },
          `the leaf's Liqo Connection ${ref} to ${peer} carries no heartbeat (status.latency.timestamp: Liqo's pings are off): a dead gateway cannot be told from a live one there, its status.value alone decides`);
      }
    }
    for (const ref of this.heartbeats.keys()) if (!seen.has(ref)) this.heartbeats.delete(ref);
  }

  /**
   * The timer came late: the process was paused (SIGSTOP, a frozen VM) or its event loop blocked, and it read no
   * rewrite meanwhile, though the watch may hold them. Its own pause is no gateway's silence: each Connection not
   * already stale is timed again from now, as at first sight, so that the rewrites queued meanwhile are read first.
   */
  private deadlinePassed(): void {
    const now = this.time.now();
    const due = this.timerDue;
    if (due !== undefined && now - due > TIMER_SLACK_MS) {
      const deadline = now + this.options.staleAfterMs;
      for (const [ref, heartbeat] of this.heartbeats) {
        if (heartbeat.deadline >= due) this.heartbeats.set(ref, { ...heartbeat, deadline: Math.max(heartbeat.deadline, deadline) });
      }
      this.options.logger.info({ lateMs: Math.round(now - due) },
        'the Connection heartbeat timer ran late (this process was paused or blocked): their silence is timed again from now');
    }
    this.publish();
  }

  private publish(): void {
    const now = this.time.now();
    const judge = this.options.staleAfterMs > 0
      ? (ref: string) => {
        const heartbeat = this.heartbeats.get(ref);
        return heartbeat?.at !== undefined && now >= heartbeat.deadline ? new Date(heartbeat.at).toISOString() : undefined;
      }
      : undefined;
    this.options.publish(tunnelStates(this.objects.values(), judge));
    this.schedule(now);
  }

  /** One timer, for the earliest deadline still ahead. */
  private schedule(now: number): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerDue = undefined;
    if (this.stopped) return;
    let next: number | undefined;
    for (const heartbeat of this.heartbeats.values()) {
      if (heartbeat.at !== undefined && heartbeat.deadline > now && (next === undefined || heartbeat.deadline < next)) next = heartbeat.deadline;
    }
    if (next === undefined) return;
    this.timerDue = next;
    this.cancelTimer = this.time.after(next - now, () => this.deadlinePassed());
  }
}
