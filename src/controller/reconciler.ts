// Keeps stored slices in step with the shortcut view (docs/reference.md, "The controller"). Admission only sees writes: when the usable pairs
// change, slices already stored are wrong until Liqo rewrites them, so this lists the reflected slices and patches
// those that differ. Each patch passes through the webhook, which computes the same f: no loop. The pass is the same
// for every kind of stored object it keeps (a Resource: where it is stored, which objects, a pure plan), in order.
// Between passes the healing watch (healer.ts) patches what slipped past the webhook; both write through one
// StoredWriter (writer.ts), whose fence stops a pass the moment this replica may no longer write.
import type { KubeConfig } from '@kubernetes/client-node';
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from '../util/backoff.ts';
import { realTime, type TimeSource } from '../util/time-source.ts';
import { pairSignature } from '../core/pair-changes.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { describeError, httpStatus, type ListPage } from '../kube/client.ts';
import { DEFAULT_MAX_CONCURRENT_PATCHES, DEFAULT_MAX_PATCHES_PER_SECOND } from './pace.ts';
import type { Logger } from '../log.ts';
import type { HealReason, Metrics, ReconcileResult } from '../metrics.ts';
import { localClusters } from '../core/local-clusters.ts';
import type { ShortcutView } from '../view/shortcut-view.ts';
import { ENDPOINT_SLICES } from './endpoint-slices.ts';
import { Healer } from './healer.ts';
import { StoredObjectsTally } from './stored-tally.ts';
import { leanStoredObjects } from './lean-stored-objects.ts';
import type { PassSummary } from './peer-events.ts';
import type { Resource } from './resource.ts';
import type { StoredObjects } from './stored-objects.ts';
import type { Sleep } from './token-bucket.ts';
import { Fenced, StoredWriter, type FenceReason } from './writer.ts';
import { ContinueTokens } from '../util/continue-tokens.ts';
import type { AnsweredVersions } from '../util/answered-versions.ts';

export interface ReconcilerOptions {
  readonly config: KubeConfig;
  /** The requests the controller makes (default: the lean client's, from `config`). */
  readonly storedObjects?: StoredObjects;
  readonly view: ShortcutView;
  readonly clusterId: string | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** What each pass keeps in step, in this order (default: the reflected EndpointSlices). */
  readonly resources?: readonly Resource[];
  /** 0: no periodic pass, only passes on changes. */
  readonly resyncIntervalMs: number;
  /** Changes closer together than this make one pass: a flapping shortcut does not become a storm. */
  readonly settleMs?: number;
  /** Patches in flight at once (default DEFAULT_MAX_CONCURRENT_PATCHES). */
  readonly maxConcurrentWrites?: number;
  /** The client-side cap on the requests of a pass, per second (default DEFAULT_MAX_PATCHES_PER_SECOND). */
  readonly maxWritesPerSecond?: number;
  readonly pageSize?: number;
  /** Retry delays after a failed pass. */
  readonly backoff?: BackoffOptions;
  /** Only the leader writes; every replica may still run, correctness does not depend on it. */
  readonly isLeader?: () => boolean;
  /** How the pass waits out a 429's Retry-After; the real timer unless a test passes its own. */
  readonly sleep?: Sleep;
  /** How soon an optional resource found not served or not granted is looked for again (default 60 s). */
  readonly absentRetryMs?: number;
  /** How soon after a pass that wrote a confirming pass looks again (the first delay, doubling while it writes); 0: none. */
  readonly confirmAfterMs?: number;
  /** Told of each pass that ran to its end (not one the fence stopped): what the peer Events and the failover time read. */
  readonly onPassDone?: (pass: PassSummary) => void;
  /** The healing watch of stored objects (default on). */
  readonly heal?: boolean;
  /** The webhook's answers in this process, whose stored copies the healing watch passes over. */
  readonly answered?: AnsweredVersions | undefined;
  /** The healing watch's timeout (its list-watch default unless set). */
  readonly watchTimeoutSeconds?: number;
  /**
   * The clock of the passes and of the healing watch, and the healing watch's timers (realTime unless a test moves its
   * own). The pass's own timers (settling, resync, confirmation) stay real: tests shorten them by the options above.
   */
  readonly time?: TimeSource;
}

/**
 * How long after the view moved an object found out of step counts as reviewed with an older view (another
 * replica's view follows within about a second; Liqo's writer re-applies within one) rather than not reviewed.
 */
const VIEW_SETTLING_MS = 10_000;

/**
 * A pass that wrote is confirmed by another about this long after it. Liqo's writer puts a reflected slice back as
 * the shadow says as soon as anything else changes it, and that write is rewritten only if the API server reaches
 * the webhook: on a fresh install the first pass runs before the pod is among its Service's endpoints
 * (failurePolicy Ignore lets the write through unrewritten), and the slices would stay on the hub path until the
 * resync, 10 minutes later by default. Liqo answers within a second; the pod's endpoint takes a few.
 */
const DEFAULT_CONFIRM_AFTER_MS = 10_000;
/** While confirming passes keep finding writes undone, they come at doubling delays up to this. */
const MAX_CONFIRM_AFTER_MS = 300_000;


/**
 * What the controller reacts to: the usable rules of every local cluster, and what the stock path reads (the hub's
 * IPs and Configurations, the leaf's), as one comparable string.
 */
function viewSignature(snapshot: Snapshot, clusterId: string | undefined): string {
  const pairs = localClusters(snapshot, clusterId).map((id) => `${id}=${pairSignature(snapshot.forCluster(id))}`).join(';');
  return `${pairs};stock=${snapshot.stockInputs}`;
}


export class SliceReconciler {
  private readonly api: StoredObjects;
  private readonly writer: StoredWriter;
  private readonly healer: Healer | undefined;
  private readonly backoff: Backoff;
  private readonly time: TimeSource;
  /** A pass found the view lapsed: one more once it is fresh. */
  private waitingForFresh = false;
  /** When the view last moved (epoch ms), and when the last pass that finished had started: see healReason. */
  private viewMovedAt: number | undefined;
  private caughtUpAt = 0;
  /** Passes started: a relist of the healing watch before the first needs no pass of its own. */
  private passesStarted = 0;
  private signature: string | undefined;
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private relook: NodeJS.Timeout | undefined;
  private confirm: NodeJS.Timeout | undefined;
  /** The next pass confirms the writes of the one before (a confirming pass that writes again says so). */
  private confirmDue = false;
  /** The view's signature when the confirmation was asked for. */
  private confirmSignature: string | undefined;
  private readonly confirmBackoff: Backoff | undefined;
  private running: Promise<void> | undefined;
  private pending = false;
  private stopped = false;
  private readonly resources: readonly Resource[];
  /** The optional resources found not served (list 404), said once until they are served again. */
  private readonly absent = new Set<Resource>();

  constructor(private readonly options: ReconcilerOptions) {
    this.api = options.storedObjects ?? leanStoredObjects(options.config);
    this.resources = options.resources ?? [ENDPOINT_SLICES];
    this.time = options.time ?? realTime;
    const planNow = (resource: Resource, item: unknown) => resource.plan(item, { snapshot: options.view.current(), clusterId: options.clusterId });
    this.writer = new StoredWriter({
      api: this.api, logger: options.logger, metrics: options.metrics,
      maxWritesPerSecond: options.maxWritesPerSecond ?? DEFAULT_MAX_PATCHES_PER_SECOND,
      plan: planNow, fence: () => this.fence(), ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
    });
    this.healer = options.heal === false ? undefined : new Healer({
      config: options.config, api: this.api, resources: this.resources, writer: this.writer, logger: options.logger, metrics: options.metrics,
      maxConcurrentWrites: options.maxConcurrentWrites ?? DEFAULT_MAX_CONCURRENT_PATCHES, time: this.time,
      plan: (resource, item) => {
        if (this.fence() !== undefined || !options.view.isSynced()) return undefined;
        const snapshot = options.view.current();
        return { plan: resource.plan(item, { snapshot, clusterId: options.clusterId }), viewVersion: snapshot.version };
      },
      viewVersion: () => options.view.current().version,
      reason: () => this.healReason(),
      onRelisted: (resource) => {
        if (this.passesStarted > 0) this.trigger(`the healing watch of ${resource.plural} listed again: a pass covers what it may have missed`);
      },
      ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
      answered: options.answered,
    });
    this.backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    const confirmAfterMs = options.confirmAfterMs ?? DEFAULT_CONFIRM_AFTER_MS;
    // Backoff draws from [cap/2, cap]: a cap of twice the delay puts the first confirmation between it and twice it.
    this.confirmBackoff = confirmAfterMs > 0 ? new Backoff({ initialMs: 2 * confirmAfterMs, maxMs: Math.max(2 * confirmAfterMs, MAX_CONFIRM_AFTER_MS) }) : undefined;
  }

  start(): void {
    const check = (snapshot: Snapshot) => {
      if (!this.options.view.isSynced()) return;
      if (this.waitingForFresh && !this.options.view.isLapsed()) {
        this.waitingForFresh = false;
        this.trigger('the view is fresh again after a pause', 0);
      }
      const signature = viewSignature(snapshot, this.options.clusterId);
      if (signature === this.signature) return;
      const first = this.signature === undefined;
      this.signature = signature;
      if (!first) this.viewMovedAt = this.time.now();
      this.trigger(first ? 'first sync of the view' : 'usable pairs changed');
    };
    this.unsubscribe = this.options.view.subscribe(check);
    check(this.options.view.current());
    this.healer?.start();
    if (this.options.resyncIntervalMs > 0) {
      this.resync = setInterval(() => this.trigger('periodic resync'), this.options.resyncIntervalMs);
      this.resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.writer.stop();
    this.unsubscribe?.();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.resync !== undefined) clearInterval(this.resync);
    if (this.relook !== undefined) clearTimeout(this.relook);
    if (this.confirm !== undefined) clearTimeout(this.confirm);
    await Promise.all([this.running, this.healer?.stop()]);
    this.api.close();
  }

  /** Asks for a pass soon; asks made while one runs or waits make exactly one more. */
  trigger(reason: string, delayMs = this.options.settleMs ?? 250): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.pending = true;
      return;
    }
    if (this.timer !== undefined) return;
    this.options.logger.debug({ reason }, 'reconcile pass scheduled');
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.pass().finally(() => {
        this.running = undefined;
        if (this.pending && !this.stopped) {
          this.pending = false;
          this.trigger('changes during the last pass');
        }
      });
    }, delayMs);
  }

  /** Undefined while this replica may write; else why not (asked before every write and every retry, and per object). */
  private fence(): FenceReason | undefined {
    if (this.stopped) return 'stopping';
    if (this.options.isLeader !== undefined && !this.options.isLeader()) return 'not-leader';
    if (this.options.view.isLapsed()) return 'view-lapsed';
    return undefined;
  }

  /** See HealReason: the view moved within the settling time, or the pass for its last move has not caught up. */
  private healReason(): HealReason {
    const moved = this.viewMovedAt;
    if (moved === undefined) return 'not-reviewed';
    return this.time.now() - moved < VIEW_SETTLING_MS || this.caughtUpAt < moved ? 'stale-view' : 'not-reviewed';
  }

  private async pass(): Promise<void> {
    // A confirming pass whose view moved meanwhile writes for the new view: nothing to say about the last one's writes.
    const confirming = this.confirmDue && this.confirmSignature === this.signature;
    this.confirmDue = false;
    // Whatever asked for it (the Lease won, a resync, a retry): before the first sync the view is empty, and a pass
    // would restore every stored shortcut. The first sync triggers a pass of its own.
    if (!this.options.view.isSynced()) {
      this.options.logger.info('the view is not synced yet: no pass');
      return;
    }
    const fenced = this.fence();
    if (fenced !== undefined) {
      this.fencedPass(fenced, 'no pass');
      return;
    }
    this.passesStarted++;
    const startedAt = this.time.now();
    const results: Record<ReconcileResult, number> = { patched: 0, unchanged: 0, conflict: 0, error: 0, gone: 0 };
    let listed = 0;
    const limit = this.options.maxConcurrentWrites ?? DEFAULT_MAX_CONCURRENT_PATCHES;
    const inFlight = new Set<Promise<void>>();
    const tally = new StoredObjectsTally();
    let stoppedBy: FenceReason | undefined;
    try {
      for (const resource of this.resources) {
        for await (const item of this.list(resource)) {
          listed++;
          // Asked per object, not once per pass: a leader frozen mid-pass resumes here, and plans nothing more.
          const fence = this.fence();
          if (fence !== undefined) throw new Fenced(fence);
          // Each object is planned on the view as it is now: a failover that comes during a long pass (a resync, a
          // confirmation, the other way's failover) moves the objects still to come at once, and the pass it asked
          // for moves those already behind. Stopping the pass instead would never finish one on a hub whose IPs
          // change faster than a pass takes.
          const snapshot = this.options.view.current();
          const plan = resource.plan(item, { snapshot, clusterId: this.options.clusterId });
          if (plan.kind === 'not-ours') continue;
          tally.add(resource, item, snapshot, this.options.clusterId);
          if (plan.kind === 'in-step') { this.count(resource, results, 'unchanged'); continue; }
          const write = this.writer.write(resource, plan.write).then((result) => this.count(resource, results, result));
          inFlight.add(write);
          // Settled either way, so a write the fence stopped is no unhandled rejection; the race below sees it.
          write.then(() => inFlight.delete(write), () => inFlight.delete(write));
          if (inFlight.size >= limit) await Promise.race(inFlight);
        }
      }
      await Promise.all(inFlight);
    } catch (error) {
      // Writes already sent finish (the API server has them); those not sent yet meet the fence and stop.
      await Promise.allSettled(inFlight);
      if (error instanceof Fenced) stoppedBy = error.reason;
      else {
        results.error++;
        this.options.logger.warn({ err: describeError(error) }, 'reconcile pass failed, retrying');
      }
    }
    if (stoppedBy !== undefined) {
      this.fencedPass(stoppedBy, 'pass stopped', { listed, ...results });
      return;
    }
    this.caughtUpAt = startedAt;
    if (results.error === 0) tally.publish(this.options.metrics);
    this.options.onPassDone?.({ startedAt, endedAt: this.time.now(), patched: results.patched });
    // One decision per pass, so the delay grows while passes keep failing (a write refused 403 on every pass would
    // otherwise relist everything twice a second) and starts over after a clean one.
    // A slice still in conflict after its retries was written by someone else meanwhile: plan it again soon, not at
    // the next resync (10 minutes by default).
    if (results.error > 0 || results.conflict > 0) this.retryLater();
    else this.backoff.reset();
    this.options.logger.info({ listed, ...results }, 'reconcile pass done');
    if (results.patched === 0) {
      this.confirmBackoff?.reset();
      return;
    }
    if (confirming) {
      this.options.logger.warn({ patched: results.patched },
        'stored objects were out of step again after the last pass, with the same view: written since without the webhook\'s review (is the webhook reachable from the API server?)');
    }
    this.confirmLater();
  }

  /**
   * A pass the fence stopped or kept from starting: another replica leads (it does the work), or the view lapsed
   * after a pause (a pass follows once it is fresh), or the controller stops.
   */
  private fencedPass(reason: FenceReason, what: string, counts: Record<string, number> = {}): void {
    if (reason === 'view-lapsed') {
      this.waitingForFresh = true;
      this.options.logger.warn({ ...counts }, `${what}: the view lapsed (the process was paused) and plans nothing until its sources have listed again`);
    } else if (reason === 'not-leader') {
      if (Object.keys(counts).length === 0) this.options.logger.debug('not the leader: another replica reconciles');
      else this.options.logger.warn({ ...counts }, `${what}: not the leader (its last Lease renewal is older than the renew deadline); another replica reconciles`);
    }
  }

  /** One confirming pass pending at most; a pass asked for meanwhile may do its work, the confirmation still comes. */
  private confirmLater(): void {
    if (this.confirmBackoff === undefined || this.confirm !== undefined || this.stopped) return;
    this.confirmSignature = this.signature;
    this.confirm = setTimeout(() => {
      this.confirm = undefined;
      this.confirmDue = true;
      this.trigger('confirming the writes of the last pass', 0);
    }, this.confirmBackoff.next());
    this.confirm.unref();
  }

  /**
   * A CRD installed later, or a grant added, is found without waiting for a resync: the missing kinds are probed (one
   * item), and only a kind that answers makes a pass; a full pass over every slice each minute would cost a leaf
   * without Liqo's offloading CRDs a list of all its slices for nothing. One look pending at most.
   */
  private lookAgainLater(): void {
    this.relook ??= setTimeout(() => {
      this.relook = undefined;
      void this.probeAbsent();
    }, this.options.absentRetryMs ?? 60_000);
    this.relook.unref();
  }

  private async probeAbsent(): Promise<void> {
    for (const { group, version, plural, labelSelector } of this.absent) {
      if (this.stopped) return;
      try {
        await this.api.listPage({ group, version, plural, labelSelector, limit: 1 });
      } catch (error) {
        const status = httpStatus(error);
        if (status === 404 || status === 403) continue;
      }
      // There now, or failing otherwise: a pass finds out which, and says so.
      this.trigger('a resource not served or not granted before may be there now', 0);
      return;
    }
    if (this.absent.size > 0 && !this.stopped) this.lookAgainLater();
  }

  private retryLater(): void {
    const delay = this.backoff.next();
    this.options.logger.warn({ delayMs: Math.round(delay) }, 'reconcile pass had errors or conflicts, next pass after a delay');
    setTimeout(() => this.trigger('retry after errors', 0), delay).unref();
  }

  private count(resource: Resource, results: Record<ReconcileResult, number>, result: ReconcileResult): void {
    results[result]++;
    resource.counted(result, this.options.metrics);
  }

  /** The resource's objects of every namespace, in pages, so 10,000 slices never sit in one response. */
  private async *list(resource: Resource): AsyncGenerator<unknown> {
    const { group, version, plural, labelSelector } = resource;
    let token: string | undefined;
    const tokens = new ContinueTokens();
    do {
      let page: ListPage;
      if (token !== undefined) tokens.follow(token);
      try {
        const continueToken = token;
        page = await this.writer.paced(() => this.api.listPage({ group, version, plural, labelSelector, limit: this.options.pageSize ?? 500, continueToken }));
      } catch (error) {
        // Not served (a CRD not installed) or not granted (the chart's switch for ShadowEndpointSlices drops the rule):
        // either way nothing of it to keep, and no failing pass retried at the backoff's pace.
        const status = httpStatus(error);
        if (!resource.optional || (status !== 404 && status !== 403)) throw error;
        if (!this.absent.has(resource)) {
          this.options.logger.info({ resource: `${plural}.${group}`, status }, status === 404
            ? 'resource not served: nothing of it to reconcile' : 'resource not granted: nothing of it to reconcile');
        }
        this.absent.add(resource);
        this.lookAgainLater();
        return;
      }
      if (this.absent.delete(resource)) this.options.logger.info({ resource: `${plural}.${group}` }, 'resource served and granted again: reconciled from now on');
      yield* page.items;
      token = page.continueToken;
    } while (token !== undefined && !this.stopped);
  }
}
