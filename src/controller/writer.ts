// How the controller writes a stored object, for its passes and its healing watch alike: within the client-side cap
// (a token bucket), after any wait the API server asked for (a 429's Retry-After holds every request), behind the
// fence (leadership and a fresh view, asked right before each request is sent, retries included), and guarded by
// the resourceVersion the plan read: on a conflict the object is read again and planned once more.
import { describeError, httpStatus, retryAfterHeader } from '../kube/client.ts';
import type { Logger } from '../log.ts';
import type { Metrics, ReconcileResult } from '../metrics.ts';
import { namespacedName } from '../core/object-name.ts';
import { retryAfterMs } from '../util/retry-after.ts';
import type { PlannedWrite, Resource } from './resource.ts';
import type { StoredObjects } from './stored-objects.ts';
import { TokenBucket, type Sleep } from './token-bucket.ts';

/** A Retry-After longer than this is cut to it: the pass resumes within a minute whatever the server said. */
const MAX_RETRY_AFTER_MS = 60_000;
/** Without a readable Retry-After, a 429 holds the pass this long. */
const DEFAULT_RETRY_AFTER_MS = 1000;
/** A request answered 429 this many times in a row fails (counted as an error: the pass is retried later, backed off). */
const MAX_THROTTLED = 10;
const RETRIES_ON_CONFLICT = 3;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Why a write was not sent: this replica may no longer write, and nothing it planned should be. */
export type FenceReason = 'not-leader' | 'view-lapsed' | 'stopping';

/** Thrown out of a write the fence stopped, so that the pass that sent it stops too. */
export class Fenced extends Error {
  constructor(readonly reason: FenceReason) {
    super(reason === 'not-leader' ? 'no longer the leader' : reason === 'view-lapsed' ? 'the view lapsed (the process was paused)' : 'the controller is stopping');
  }
}

export interface WriterOptions {
  readonly api: StoredObjects;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly maxWritesPerSecond: number;
  /** The current view and local cluster, for planning again after a conflict. */
  readonly plan: (resource: Resource, item: unknown) => ReturnType<Resource['plan']>;
  /** Asked before every write and every retry: undefined while this replica may write. */
  readonly fence: () => FenceReason | undefined;
  readonly sleep?: Sleep;
}

export class StoredWriter {
  private readonly bucket: TokenBucket;
  /** While the API server asked us to wait (a 429's Retry-After), no request starts: the wait, and its end. */
  private hold: Promise<void> | undefined;
  private holdUntil = 0;
  /** Resolves on stop(): a wait for a Retry-After (up to a minute) must not hold the shutdown. */
  private readonly stopping: Promise<void>;
  private stopNow: () => void = () => {};
  private stopped = false;
  private readonly sleep: Sleep;

  constructor(private readonly options: WriterOptions) {
    this.bucket = new TokenBucket(options.maxWritesPerSecond);
    this.sleep = options.sleep ?? realSleep;
    this.stopping = new Promise((resolve) => { this.stopNow = resolve; });
  }

  stop(): void {
    this.stopped = true;
    this.stopNow();
  }

  /**
   * One request, within the cap and after any wait the API server asked for. A 429 (API Priority and Fairness found
   * the level's queues full) holds every request for its Retry-After, not only this one, then sends the same request
   * again: the server shed load, so all of ours waits. `fenced` requests (writes) ask the fence right before they go.
   */
  async paced<T>(request: () => Promise<T>, options: { readonly fenced: boolean } = { fenced: false }): Promise<T> {
    for (let throttled = 0; ; throttled++) {
      // A later 429 may replace the hold while this one waits: wait until none is left.
      while (this.hold !== undefined) await this.hold;
      if (this.stopped) throw new Fenced('stopping');
      await this.bucket.take();
      // The bucket and the hold may have kept this request a while: the fence is asked after them, as it sends.
      const fence = options.fenced ? this.options.fence() : undefined;
      if (fence !== undefined) throw new Fenced(fence);
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

  /**
   * Patches with a resourceVersion guard; on a conflict, reads the object again and plans once more. A write the
   * fence stops throws Fenced: the caller stops what it was doing.
   */
  async write(resource: Resource, planned: PlannedWrite, attempt = 1): Promise<ReconcileResult> {
    const { group, version, plural } = resource;
    const { namespace, name, patch } = planned;
    const ref = { group, version, plural, namespace, name };
    try {
      await this.paced(() => this.options.api.patch(ref, patch), { fenced: true });
      planned.report(this.options);
      return 'patched';
    } catch (error) {
      if (error instanceof Fenced) throw error;
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
        fresh = await this.paced(() => this.options.api.get(ref));
      } catch (readError) {
        if (readError instanceof Fenced) throw readError;
        return httpStatus(readError) === 404 ? 'gone' : 'error';
      }
      const plan = this.options.plan(resource, fresh);
      if (plan.kind !== 'write') return 'unchanged';
      return this.write(resource, plan.write, attempt + 1);
    }
  }
}
