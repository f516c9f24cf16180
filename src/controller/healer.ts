// The controller's safety net that watches (docs/reference.md, "The healing watch"). The
// webhook fails open, so a write the API server could not review (a replica frozen, cut off or rolling, a timeout)
// is stored as Liqo wrote it. This watches the stored objects the passes keep (same selector), plans each event with
// the same pure plan, and patches an object that is not as the view says: a queue of keys, each with the write
// planned from the event, written by the leader through the passes' writer (the same cap, holds and fence). An
// event already in step costs one plan and no request; nothing of an object is kept but a queued write. A relist of
// the watch (its history expired, the resource came back) may have missed events: a pass covers them.
import type { KubeConfig } from '@kubernetes/client-node';
import { namespacedName } from '../core/object-name.ts';
import { describeError, httpStatus } from '../kube/client.ts';
import type { Logger } from '../log.ts';
import type { HealReason, Metrics } from '../metrics.ts';
import type { AnsweredVersions, PassedOver } from '../util/answered-versions.ts';
import { realTime, type TimeSource } from '../util/time-source.ts';
import { ListWatch } from '../view/list-watch.ts';
import type { PlannedWrite, Resource } from './resource.ts';
import type { StoredObjects } from './stored-objects.ts';
import { Fenced, type StoredWriter } from './writer.ts';

export interface HealerOptions {
  readonly config: KubeConfig;
  readonly api: StoredObjects;
  readonly resources: readonly Resource[];
  readonly writer: StoredWriter;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The plan of an object on the current view; undefined while nothing may be planned (not the leader, view not fresh). */
  readonly plan: (resource: Resource, item: unknown) => { readonly plan: ReturnType<Resource['plan']>; readonly viewVersion: number } | undefined;
  /** The view's version now: a queued write planned on another is planned again from the stored object. */
  readonly viewVersion: () => number;
  /** Why an object is out of step now: the view just moved (reviewed with an older one) or not reviewed at all. */
  readonly reason: () => HealReason;
  /** The watch of `resource` listed again after its first list: events may have been missed. */
  readonly onRelisted: (resource: Resource) => void;
  /** Heals in flight at once. */
  readonly maxConcurrentWrites: number;
  readonly watchTimeoutSeconds?: number;
  /** How long heals are gathered into one log line. */
  readonly burstMs?: number;
  /** The streaks' clock and the timers of the re-heal delays and the burst's line (realTime unless a test moves its own). */
  readonly time?: TimeSource;
  /** The webhook's answers in this process: their stored copies are passed over, not planned. */
  readonly answered?: AnsweredVersions | undefined;
}

interface QueuedHeal {
  readonly resource: Resource;
  readonly write: PlannedWrite;
  readonly viewVersion: number;
  readonly reason: HealReason;
}

const DEFAULT_BURST_MS = 1000;

/** One object of one kind: what the queue, the delays and the streaks are keyed by. */
function healKey(resource: Resource, write: PlannedWrite): string {
  return `${resource.plural}/${namespacedName(write.namespace, write.name)}`;
}
/**
 * An object healed and out of step again soon after is healed again after a delay that doubles, up to the cap:
 * while the API server cannot reach the webhook, Liqo's writers put back every object we heal (the leaf's writer
 * applies the EndpointSlice the shadow says, the hub's virtual kubelet PUTs the shadow it forged), unreviewed, and
 * an unpaced heal would make a write loop of each. The cap bounds how long after the webhook answers again the last
 * such write waits for its heal; a quiet spell of STREAK_RESET_MS ends the streak.
 */
const REHEAL_BASE_MS = 500;
const REHEAL_MAX_MS = 4000;
const STREAK_RESET_MS = 30_000;

export class Healer {
  private readonly watches: ListWatch<never>[];
  /** By resource and object: a newer event's write replaces a queued one, and one object is written once. */
  private readonly queue = new Map<string, QueuedHeal>();
  private active = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private burst: Map<string, number> | undefined;
  private cancelBurst: (() => void) | undefined;
  private stopped = false;
  /** Heals of an object in a row, each soon after the one before, and when the last was stored. */
  private readonly streaks = new Map<string, { readonly count: number; readonly at: number }>();
  /** Heals waiting out their delay, each with its timer's cancel: the object is read again when it ends. */
  private readonly deferred = new Map<string, () => void>();
  private readonly time: TimeSource;

  constructor(private readonly options: HealerOptions) {
    this.time = options.time ?? realTime;
    this.watches = options.resources.map((resource) => this.watch(resource));
  }

  start(): void {
    for (const watch of this.watches) watch.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.clear();
    for (const cancel of this.deferred.values()) cancel();
    this.deferred.clear();
    await Promise.all(this.watches.map((watch) => watch.stop()));
    await this.idle();
    this.flushBurst();
  }

  /** Resolves when no heal is queued or in flight (tests; shutdown). */
  idle(): Promise<void> {
    if (this.active === 0 && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => { this.idleWaiters.push(resolve); });
  }

  private watch(resource: Resource): ListWatch<never> {
    const { group, version, plural, labelSelector } = resource;
    let lists = 0;
    return new ListWatch<never>({
      name: `stored ${plural}.${group} (healing watch)`,
      config: this.options.config,
      // Only where the watch starts: the passes list the objects themselves, so this asks for one item, for the
      // collection's resourceVersion. Every list after the first means events may have been missed: a pass.
      list: async () => {
        const page = await this.options.api.listPage({ group, version, plural, labelSelector, limit: 1 });
        if (lists++ > 0) this.options.onRelisted(resource);
        return { items: [], resourceVersion: page.resourceVersion };
      },
      watchPath: group === '' ? `/api/${version}/${plural}` : `/apis/${group}/${version}/${plural}`,
      // Every stored version of every reflected object comes through here: the lean client's stream, one parse each,
      // and none for the copy of a version the webhook has just answered on the view as it is (util/answered-versions.ts).
      openWatch: this.options.api.watch,
      ...(this.options.answered === undefined ? {} : { passOver: (line: string) => this.passOver(plural, line) }),
      labelSelector,
      keep: () => undefined,
      onChange: () => {},
      onEvent: (_type, object) => this.check(resource, object),
      // A resource not served or not granted (ShadowEndpointSlices without Liqo's CRDs) has nothing to heal; the
      // pass says so once. Looked for again at the backoff's pace.
      onListError: (status) => (resource.optional && (status === 404 || status === 403) ? 'expected' : 'unexpected'),
      logger: this.options.logger,
      ...(this.options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: this.options.watchTimeoutSeconds }),
    });
  }

  private passOver(plural: string, line: string): PassedOver | undefined {
    const passed = this.options.answered?.passOver(plural, line, this.options.viewVersion());
    if (passed !== undefined) this.options.metrics.healingEvents.inc({ resource: plural, handling: 'passed-over' });
    return passed;
  }

  private check(resource: Resource, object: unknown): void {
    if (this.stopped) return;
    const planned = this.options.plan(resource, object);
    // Nothing is planned where this replica does not lead or its view is not fresh: counted as planned only when it is.
    if (planned === undefined) return;
    this.options.metrics.healingEvents.inc({ resource: resource.plural, handling: 'planned' });
    if (planned.plan.kind !== 'write') return;
    const { write } = planned.plan;
    const key = healKey(resource, write);
    const reason = this.options.reason();
    const delay = this.rehealDelay(key);
    if (delay === 0) {
      this.enqueue(key, { resource, write, viewVersion: planned.viewVersion, reason });
      return;
    }
    if (this.deferred.has(key)) return;
    this.deferred.set(key, this.time.after(delay, () => {
      this.deferred.delete(key);
      // Planned on no view: the heal reads what is stored by then, and plans it on the view as it is then.
      this.enqueue(key, { resource, write, viewVersion: Number.NaN, reason });
    }));
  }

  private enqueue(key: string, heal: QueuedHeal): void {
    this.queue.delete(key);
    this.queue.set(key, heal);
    this.drain();
  }

  /** 0 for an object not healed lately; else the streak's doubling delay (see REHEAL_BASE_MS). */
  private rehealDelay(key: string): number {
    const streak = this.streaks.get(key);
    if (streak === undefined) return 0;
    if (this.time.now() - streak.at >= STREAK_RESET_MS) {
      this.streaks.delete(key);
      return 0;
    }
    return Math.min(REHEAL_BASE_MS * 2 ** (streak.count - 1), REHEAL_MAX_MS);
  }

  private healed(key: string): void {
    const now = this.time.now();
    const streak = this.streaks.get(key);
    this.streaks.set(key, { count: streak !== undefined && now - streak.at < STREAK_RESET_MS ? streak.count + 1 : 1, at: now });
  }

  /** Streaks that ended: the map holds only objects healed in the last STREAK_RESET_MS. */
  private forgetOldStreaks(): void {
    const now = this.time.now();
    for (const [key, streak] of this.streaks) if (now - streak.at >= STREAK_RESET_MS) this.streaks.delete(key);
  }

  private drain(): void {
    while (!this.stopped && this.active < this.options.maxConcurrentWrites) {
      const next = this.queue.entries().next();
      if (next.done === true) break;
      const [key, heal] = next.value;
      this.queue.delete(key);
      this.active++;
      void this.heal(heal).finally(() => {
        this.active--;
        this.drain();
        if (this.active === 0 && this.queue.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      });
    }
  }

  private async heal({ resource, write, viewVersion, reason }: QueuedHeal): Promise<void> {
    const key = healKey(resource, write);
    try {
      let planned = write;
      if (viewVersion !== this.options.viewVersion()) {
        // Planned on a view that has moved since: what is stored now, on the view as it is now.
        const { group, version, plural } = resource;
        const fresh = await this.options.writer.paced(() => this.options.api.get({ group, version, plural, namespace: write.namespace, name: write.name }));
        const again = this.options.plan(resource, fresh);
        if (again === undefined || again.plan.kind !== 'write') return;
        planned = again.plan.write;
      }
      const result = await this.options.writer.write(resource, planned);
      resource.counted(result, this.options.metrics);
      if (result !== 'patched') return;
      this.healed(key);
      this.options.metrics.objectsHealed.inc({ resource: resource.plural, reason });
      this.noteBurst(`${resource.plural}:${reason}`);
    } catch (error) {
      if (error instanceof Fenced || httpStatus(error) === 404) return;
      this.options.logger.warn({ resource: resource.plural, object: namespacedName(write.namespace, write.name), err: describeError(error) }, 'stored object not healed; the next pass looks again');
    }
  }

  /** One log line per burst of heals, not one per object: a replica away for a minute may leave hundreds. */
  private noteBurst(key: string): void {
    this.burst ??= new Map();
    this.burst.set(key, (this.burst.get(key) ?? 0) + 1);
    this.cancelBurst ??= this.time.after(this.options.burstMs ?? DEFAULT_BURST_MS, () => this.flushBurst());
  }

  private flushBurst(): void {
    this.cancelBurst?.();
    this.cancelBurst = undefined;
    const burst = this.burst;
    this.burst = undefined;
    this.forgetOldStreaks();
    if (burst === undefined) return;
    const healed = Object.fromEntries(burst);
    const notReviewed = [...burst].some(([key]) => key.endsWith(':not-reviewed'));
    const message = notReviewed
      ? 'healed stored objects written without the webhook\'s review (it fails open: was it unreachable from the API server?)'
      : 'healed stored objects reviewed with an older view';
    if (notReviewed) this.options.logger.warn({ healed }, message);
    else this.options.logger.info({ healed }, message);
  }
}
