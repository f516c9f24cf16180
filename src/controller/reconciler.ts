// Keeps stored slices in step with the shortcut view (docs/reference.md, "The controller"). Admission only sees writes: when the usable pairs
// change, slices already stored are wrong until Liqo rewrites them, so this lists the reflected slices and patches
// those that differ. Each patch passes through the webhook, which computes the same f: no loop. The pass is the same
// for every kind of stored object it keeps (a Resource: where it is stored, which objects, a pure plan), in order.
import type { KubeConfig } from '@kubernetes/client-node';
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from '../util/backoff.ts';
import { pairSignature } from '../core/pair-changes.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { describeError, httpStatus, retryAfterHeader, type ListPage } from '../kube/client.ts';
import { retryAfterMs } from '../util/retry-after.ts';
import { DEFAULT_MAX_CONCURRENT_PATCHES, DEFAULT_MAX_PATCHES_PER_SECOND } from './pace.ts';
import type { Logger } from '../log.ts';
import type { Metrics, ReconcileResult } from '../metrics.ts';
import { localClusters } from '../core/local-clusters.ts';
import { namespacedName } from '../core/object-name.ts';
import type { ShortcutView } from '../view/shortcut-view.ts';
import { ENDPOINT_SLICES } from './endpoint-slices.ts';
import type { PlannedWrite, Resource } from './resource.ts';
import { leanStoredObjects } from './lean-stored-objects.ts';
import type { StoredObjects } from './stored-objects.ts';
import { TokenBucket, type Sleep } from './token-bucket.ts';

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
}

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

/** A Retry-After longer than this is cut to it: the pass resumes within a minute whatever the server said. */
const MAX_RETRY_AFTER_MS = 60_000;
/** Without a readable Retry-After, a 429 holds the pass this long. */
const DEFAULT_RETRY_AFTER_MS = 1000;
/** A request answered 429 this many times in a row fails (counted as an error: the pass is retried later, backed off). */
const MAX_THROTTLED = 10;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the controller reacts to: the usable rules of every local cluster, and what the stock path reads (the hub's
 * IPs and Configurations, the leaf's), as one comparable string.
 */
function viewSignature(snapshot: Snapshot, clusterId: string | undefined): string {
  const pairs = localClusters(snapshot, clusterId).map((id) => `${id}=${pairSignature(snapshot.forCluster(id))}`).join(';');
  return `${pairs};stock=${snapshot.stockInputs}`;
}

const RETRIES_ON_CONFLICT = 3;

export class SliceReconciler {
  private readonly api: StoredObjects;
  private readonly bucket: TokenBucket;
  private readonly backoff: Backoff;
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
  /** While the API server asked us to wait (a 429's Retry-After), no request of the pass starts: the wait, and its end. */
  private hold: Promise<void> | undefined;
  private holdUntil = 0;
  /** Resolves on stop(): a wait for a Retry-After (up to a minute) must not hold the shutdown. */
  private readonly stopping: Promise<void>;
  private stopNow: () => void = () => {};
  private readonly sleep: Sleep;

  constructor(private readonly options: ReconcilerOptions) {
    this.api = options.storedObjects ?? leanStoredObjects(options.config);
    this.resources = options.resources ?? [ENDPOINT_SLICES];
    this.bucket = new TokenBucket(options.maxWritesPerSecond ?? DEFAULT_MAX_PATCHES_PER_SECOND);
    this.sleep = options.sleep ?? realSleep;
    this.stopping = new Promise((resolve) => { this.stopNow = resolve; });
    this.backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    const confirmAfterMs = options.confirmAfterMs ?? DEFAULT_CONFIRM_AFTER_MS;
    // Backoff draws from [cap/2, cap]: a cap of twice the delay puts the first confirmation between it and twice it.
    this.confirmBackoff = confirmAfterMs > 0 ? new Backoff({ initialMs: 2 * confirmAfterMs, maxMs: Math.max(2 * confirmAfterMs, MAX_CONFIRM_AFTER_MS) }) : undefined;
  }

  start(): void {
    const check = (snapshot: Snapshot) => {
      if (!this.options.view.isSynced()) return;
      const signature = viewSignature(snapshot, this.options.clusterId);
      if (signature === this.signature) return;
      const first = this.signature === undefined;
      this.signature = signature;
      this.trigger(first ? 'first sync of the view' : 'usable pairs changed');
    };
    this.unsubscribe = this.options.view.subscribe(check);
    check(this.options.view.current());
    if (this.options.resyncIntervalMs > 0) {
      this.resync = setInterval(() => this.trigger('periodic resync'), this.options.resyncIntervalMs);
      this.resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopNow();
    this.unsubscribe?.();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.resync !== undefined) clearInterval(this.resync);
    if (this.relook !== undefined) clearTimeout(this.relook);
    if (this.confirm !== undefined) clearTimeout(this.confirm);
    await this.running;
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
    if (this.options.isLeader !== undefined && !this.options.isLeader()) {
      this.options.logger.debug('not the leader: another replica reconciles');
      return;
    }
    const results: Record<ReconcileResult, number> = { patched: 0, unchanged: 0, conflict: 0, error: 0, gone: 0 };
    let listed = 0;
    try {
      const limit = this.options.maxConcurrentWrites ?? DEFAULT_MAX_CONCURRENT_PATCHES;
      const inFlight = new Set<Promise<void>>();
      for (const resource of this.resources) {
        for await (const item of this.list(resource)) {
          listed++;
          // Each object is planned on the view as it is now: a failover that comes during a long pass (a resync, a
          // confirmation, the other way's failover) moves the objects still to come at once, and the pass it asked
          // for moves those already behind. Stopping the pass instead would never finish one on a hub whose IPs
          // change faster than a pass takes.
          const plan = resource.plan(item, { snapshot: this.options.view.current(), clusterId: this.options.clusterId });
          if (plan.kind === 'not-ours') continue;
          if (plan.kind === 'in-step') { this.count(resource, results, 'unchanged'); continue; }
          const write = this.write(resource, plan.write).then((result) => this.count(resource, results, result));
          inFlight.add(write);
          void write.finally(() => inFlight.delete(write));
          if (inFlight.size >= limit) await Promise.race(inFlight);
        }
      }
      await Promise.all(inFlight);
    } catch (error) {
      results.error++;
      this.options.logger.warn({ err: describeError(error) }, 'reconcile pass failed, retrying');
    }
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
    do {
      let page: ListPage;
      try {
        const continueToken = token;
        page = await this.paced(() => this.api.listPage({ group, version, plural, labelSelector, limit: this.options.pageSize ?? 500, continueToken }));
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

  /**
   * One request of the pass, within the client-side cap (the token bucket) and after any wait the API server asked
   * for. A 429 (API Priority and Fairness found the level's queues full) holds every request of the pass for its
   * Retry-After, not only this one, then sends the same request again: the server shed load, so all of ours waits.
   */
  private async paced<T>(request: () => Promise<T>): Promise<T> {
    for (let throttled = 0; ; throttled++) {
      // A later 429 may replace the hold while this one waits: wait until none is left.
      while (this.hold !== undefined) await this.hold;
      if (this.stopped) throw new Error('the controller is stopping');
      await this.bucket.take();
      try {
        return await request();
      } catch (error) {
        if (httpStatus(error) !== 429 || throttled + 1 >= MAX_THROTTLED || this.stopped) throw error;
        const now = Date.now();
        const delay = retryAfterMs(retryAfterHeader(error), { now, maxMs: MAX_RETRY_AFTER_MS }) ?? DEFAULT_RETRY_AFTER_MS;
        if (now + delay > this.holdUntil) {
          this.holdUntil = now + delay;
          this.options.logger.warn({ delayMs: delay }, 'the API server asked the controller to wait (429), pausing its requests');
          const hold: Promise<void> = Promise.race([this.sleep(delay), this.stopping]).then(() => { if (this.hold === hold) this.hold = undefined; });
          this.hold = hold;
        }
      }
    }
  }

  /** Patches with a resourceVersion guard; on a conflict, reads the object again and plans once more. */
  private async write(resource: Resource, planned: PlannedWrite, attempt = 1): Promise<ReconcileResult> {
    const { group, version, plural } = resource;
    const { namespace, name, patch } = planned;
    try {
      await this.paced(() => this.api.patch({ group, version, plural, namespace, name }, patch));
      planned.report(this.options);
      return 'patched';
    } catch (error) {
      const status = httpStatus(error);
      if (status === 404) return 'gone';
      // A failed `test` of the resourceVersion is 422; a stale version in the object is 409. Both: read again.
      if (status !== 409 && status !== 422) {
        this.options.logger.warn({ resource: plural, slice: namespacedName(namespace, name), err: describeError(error) }, 'stored slice not patched');
        return 'error';
      }
      if (attempt >= RETRIES_ON_CONFLICT) return 'conflict';
      let fresh: unknown;
      try {
        fresh = await this.paced(() => this.api.get({ group, version, plural, namespace, name }));
      } catch (readError) {
        return httpStatus(readError) === 404 ? 'gone' : 'error';
      }
      const plan = resource.plan(fresh, { snapshot: this.options.view.current(), clusterId: this.options.clusterId });
      if (plan.kind !== 'write') return 'unchanged';
      return this.write(resource, plan.write, attempt + 1);
    }
  }
}
