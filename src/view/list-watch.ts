// A list/watch loop that stays alive. client-node's informer stops for good after an error and re-watches in a
// hot loop when the server closes the stream, so this one owns restart with capped, jittered backoff, relists on
// 410 Gone, and becomes synced after the first successful list, even an empty one. Built from a ReloadingKubeConfig,
// it follows credential rotation: a 401 asks the config to read its credentials again, and new credentials restart the
// open watch from where it stood (no relist, so no moment with an empty view), since a stream opened with revoked ones
// would otherwise carry on until the server ends it.
//
// The list is where the owner decides what an answer means (onListError: a 404 or 403 may mean "none to read"), so
// every answer that stops a watch for a reason of the server's own reaches a list again: a 401, 403 or 404 to a watch,
// an ERROR event, and a watch that keeps failing (WATCH_FAILURES_BEFORE_LIST). And an answer the owner expects ends a
// failure as a success does: after an outage of any length the source is live again whatever the server answers.
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from '../util/backoff.ts';
import { isObject, objectField, stringField } from '../core/json.ts';
import { namespacedName, resourceVersionOf } from '../core/object-name.ts';
import { describeError, httpStatus, retryAfterHeader, type ListPage } from '../kube/client.ts';
import { retryAfterMs } from '../util/retry-after.ts';
import { ReloadingKubeConfig } from '../kube/reloading-config.ts';
import type { Logger } from '../log.ts';
import { ProblemLatch } from '../util/problem-latch.ts';
import { ContinueTokens } from '../util/continue-tokens.ts';
import { PASSED_OVER, type PassedOver } from '../util/answered-versions.ts';

export interface ListWatchOptions<T> {
  /** What is watched, for logs: `foreignclusterconnections`. */
  readonly name: string;
  readonly config: KubeConfig;
  /**
   * One page of the list: the first with no token, then each `continueToken` the previous page gave, until none. A
   * source of tens of thousands of objects (the hub's IPs) asks for pages, so the process never holds the whole list
   * as objects at once; a small one answers in one page.
   */
  readonly list: (continueToken: string | undefined) => Promise<Pick<ListPage, 'items' | 'resourceVersion'> & { readonly continueToken?: string | undefined }>;
  /** The collection path the watch opens, e.g. `/apis/networking.liqo.io/v1beta1/foreignclusterconnections`. */
  readonly watchPath: string;
  /** Asked of the watch as of the list: only objects with this label (e.g. the hub's IPs of offloaded pods). */
  readonly labelSelector?: string;
  /**
   * What is kept of each object (undefined: nothing, the object is left out): a watch of 50,000 hub IPs holds their
   * few decided fields, never 50,000 whole objects. `keepObject` keeps the object itself.
   */
  readonly keep: (object: unknown, key: string) => T | undefined;
  /** The full set of objects by `namespace/name`, after each list and each burst of watch events. */
  readonly onChange: (objects: ReadonlyMap<string, T>) => void;
  /**
   * Each object a watch event adds or changes, as the server sent it, before `keep`: for an owner that acts on
   * every change (the controller's healing watch) rather than on the set.
   */
  readonly onEvent?: (type: 'ADDED' | 'MODIFIED', object: unknown) => void;
  /** The source answered (a list, an event, a bookmark): the view is fresh even if nothing changed. */
  readonly onFresh?: () => void;
  /**
   * A list failed; the status says why (404: the resource is not served). `expected`: the owner has said what it
   * means, so no warning is logged for it.
   */
  readonly onListError?: (status: number | undefined) => 'expected' | 'unexpected';
  /**
   * Every watch opened again after the server ended or broke the last one, for `view_watch_restarts_total`; the
   * reason is logged with it. Not one: the first watch, a watch reopened after reaching the timeout it asked for, after
   * a relist the process asked for (a pause), or with new credentials.
   */
  readonly onRestart?: (restart: WatchRestart) => void;
  readonly logger: Logger;
  readonly backoff?: BackoffOptions;
  /**
   * Asked of the server, which then ends the stream; a silent stream is dropped after this plus a grace. It bounds how
   * long a revoked right goes unnoticed on a watch that stays open (RBAC is checked when a request starts, and the
   * reopened watch's 403 lists again). Unset: DEFAULT_WATCH_TIMEOUT_SECONDS plus up to a quarter more at random, so
   * that replicas do not all reopen at once.
   */
  readonly watchTimeoutSeconds?: number;
  /** For how long the source has been failing (see failing()); Date.now by default. */
  readonly now?: () => number;
  /** Opens each watch stream: client-node's Watch on `config` unless the owner brings a leaner one (the healing watch's). */
  readonly openWatch?: WatchOpener;
  /**
   * Lines of the stream handed over as PASSED_OVER (util/answered-versions.ts), unparsed: for an owner that keeps
   * nothing of the objects (`keep` always undefined) and needs no event for these. Only an opener that reads lines
   * (the lean client's) asks it.
   */
  readonly passOver?: (line: string) => PassedOver | undefined;
}

/** The query of a watch stream, as the API server reads it. */
export interface WatchQuery {
  readonly resourceVersion: string;
  readonly allowWatchBookmarks: boolean;
  readonly timeoutSeconds: number;
  readonly labelSelector?: string;
}

/**
 * Opens a watch of `path` and hands each event over; `done` once, when the stream ends (null), fails or is refused
 * (an error httpStatus() reads). Resolves with the stream's abort once the server has answered, as client-node's does.
 */
export type WatchOpener = (
  path: string, query: WatchQuery, onEvent: (type: string, object: unknown) => void, done: (error: unknown) => void,
  passOver?: (line: string) => PassedOver | undefined,
) => Promise<AbortController>;

/** The query in a URL's form, `watch=true` first. */
export function watchUrl(path: string, query: WatchQuery): string {
  const params = new URLSearchParams({ watch: 'true', resourceVersion: query.resourceVersion, allowWatchBookmarks: String(query.allowWatchBookmarks), timeoutSeconds: String(query.timeoutSeconds) });
  if (query.labelSelector !== undefined) params.set('labelSelector', query.labelSelector);
  return `${path}?${params}`;
}

/** A source that has not answered since `since` (epoch ms): every list or watch attempt since then failed. */
export interface SourceFailure {
  readonly since: number;
  /** The last failure, in words. */
  readonly problem: string;
  /** What was being read, where a source reads several things ("the leaf's configurations"); the source's own name else. */
  readonly source?: string;
}

/** The failure that started first, named: a source fails while one of its parts keeps failing. */
export function earliestFailure(parts: readonly { readonly source: string; readonly failure: SourceFailure | undefined }[]): SourceFailure | undefined {
  let earliest: SourceFailure | undefined;
  for (const { source, failure } of parts) {
    if (failure !== undefined && (earliest === undefined || failure.since < earliest.since)) earliest = { ...failure, source: failure.source ?? source };
  }
  return earliest;
}

/** A watch opened again after the server ended or broke the last one. */
export interface WatchRestart {
  /** What is watched (`foreignclusterconnections`). */
  readonly resource: string;
  /** How the last watch ended, in words: `dropped (Premature close)`, `ended by the server after 0.4 s`. */
  readonly why: string;
}

type WatchEnd =
  | { readonly kind: 'closed' }
  | { readonly kind: 'gone' }
  /** The server refused the watch (401, 403), no longer serves the resource (404), or said why in an ERROR event. */
  | { readonly kind: 'answered'; readonly error: unknown }
  /** The network failed, or the server answered 5xx or 429: the same watch again, after the backoff. */
  | { readonly kind: 'error'; readonly error: unknown }
  /** New credentials: the watch is opened again with them, at once, from the same resourceVersion. */
  | { readonly kind: 'credentials' };

export function objectKey(object: unknown): string | undefined {
  const metadata = isObject(object) ? objectField(object, 'metadata') : undefined;
  const name = metadata && stringField(metadata, 'name');
  if (!name) return undefined;
  const namespace = metadata && stringField(metadata, 'namespace');
  return namespacedName(namespace, name);
}

/** A watch that ran at least this long ended normally; a shorter one is a server closing on us, so back off. */
const HEALTHY_WATCH_MS = 1000;
/**
 * A watch closed cleanly this close to the timeoutSeconds it asked for reached it: the server's clock starts when the
 * request arrives, after ours, but a timer may fire a little early.
 */
const TIMEOUT_SLACK_MS = 100;
const WATCHDOG_GRACE_MS = 30_000;
/**
 * A watch reopens from where it stood (resourceVersion), so a short timeout costs one request per source and period,
 * not a list. One minute bounds how long a revoked right goes unnoticed on an open watch to 75 s.
 */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 60;
/** The share of the default timeout added at random, so that the watches of many replicas do not reopen together. */
const WATCH_TIMEOUT_JITTER = 0.25;
/**
 * Watches that failed in a row (the server away, or answering 5xx) before the next attempt is a list: one that
 * resumes would meet the same server, and only a list reaches the owner's decision (a CRD deleted meanwhile answers
 * the list 404; a server whose history restarted answers a resumed watch with errors for ever).
 */
const WATCH_FAILURES_BEFORE_LIST = 3;

/**
 * A server that was away (no answer, a 5xx or a 429) and answers again may refuse or not know a resource for a few
 * seconds of its own start-up (kube-apiserver answers 403 until its authorizer has synced, 404 until its CRDs are
 * served): for this long after its first answer, a 403 or 404 (expected by the owner or not: the FCCs' is not) is asked
 * again at SETTLING_BACKOFF's pace, not at the backoff the outage has grown to its cap (a stock-Liqo leaf kept its hub
 * view refused, and a replica reading FCCs on the hub stayed not ready, for up to 30 s after every hub restart).
 */
const SETTLING_MS = 30_000;
/**
 * For this long after that first answer a 403 or 404 is not believed: the view stays as it was (the source still
 * failing, as through the outage) rather than turn "none to read" for a second and back, which made the controller
 * restore every stock-path slice and resolve it again after each hub restart. One that lasts longer is taken.
 */
const DOUBT_MS = 5000;
const SETTLING_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 2000 };

/** How many 429s in a row are retried after their Retry-After rather than the backoff (client-go's default: 10). */
const RETRY_AFTER_HONOURED = 10;

/** Statuses of a watch request that only a list can judge: refused, or no longer served. */
function listJudges(status: number | undefined): boolean {
  return status === 401 || status === 403 || status === 404;
}

/** `keep` for a watch whose owner reads whole objects (a few FCCs, a leaf's handful of Liqo objects). */
export function keepObject(object: unknown): unknown {
  return object;
}

export class ListWatch<T> {
  private objects = new Map<string, T>();
  private resourceVersion = '';
  private stopped = false;
  private wake: (() => void) | undefined;
  private abort: AbortController | undefined;
  private publishPending = false;
  private readonly problems = new ProblemLatch();
  private readonly backoff: Backoff;
  /** The pace of a 403 or 404 while the server settles after an outage (SETTLING_MS). */
  private readonly settlingBackoff = new Backoff(SETTLING_BACKOFF);
  /** Until when (now()) a 403 or 404 is asked again at the settling pace: set by the server's first answer after it was away. */
  private settlingUntil = 0;
  /** Until when (now()) a 403 or 404 is not believed (DOUBT_MS). */
  private doubtUntil = 0;
  /** The last attempt had no answer from the server (the network, a 5xx, a 429): its next answer starts the settling. */
  private away = false;
  private running: Promise<void> | undefined;
  private firstAttempt: Promise<void>;
  private firstAttemptDone: () => void = () => {};
  private firstSettled: Promise<void>;
  private firstSettledDone: () => void = () => {};
  private failure: SourceFailure | undefined;
  /** Set by a credentials reload, taken by the watch it ends (or by the next one to open). */
  private credentialsChanged = false;
  private unsubscribe: (() => void) | undefined;
  private readonly now: () => number;
  /** Watches in a row that the network or a 5xx ended with no event: past WATCH_FAILURES_BEFORE_LIST, a list. */
  private failedWatches = 0;
  /** Watches in a row answered 401, 403, 404 or with an ERROR event, no event between: past the first, a backoff. */
  private answeredWatches = 0;
  /** Lists in a row answered 429 whose Retry-After was honoured. */
  private throttled = 0;
  /** Ends the watch being opened or read, as far as the loop is concerned. */
  private endWatch: (() => void) | undefined;
  /** Asked by relist(): the next attempt is a list, and these wait for it to settle. */
  private relistWaiters: (() => void)[] = [];

  constructor(private readonly options: ListWatchOptions<T>) {
    this.backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    this.firstAttempt = new Promise((resolve) => { this.firstAttemptDone = resolve; });
    this.firstSettled = new Promise((resolve) => { this.firstSettledDone = resolve; });
    this.now = options.now ?? Date.now;
  }

  start(): void {
    if (this.running !== undefined) return;
    const { config } = this.options;
    if (config instanceof ReloadingKubeConfig) this.unsubscribe = config.onReload(() => this.credentialsReloaded());
    this.running = this.run();
  }

  /**
   * Undefined while the source answers. Otherwise since when every attempt failed, and why; failures the owner
   * expects (onListError says 'expected': a resource this cluster does not serve) do not count.
   */
  failing(): SourceFailure | undefined {
    return this.failure;
  }

  /** The resource it reads, as messages name it (`ips`, `configurations`). */
  get name(): string {
    return this.options.name;
  }

  /** Resolves after the first list has succeeded or failed once. */
  attempted(): Promise<void> {
    return this.firstAttempt;
  }

  /** Resolves once a list has said what there is: it succeeded, or failed as the owner expects (none to read). */
  settled(): Promise<void> {
    return this.firstSettled;
  }

  /**
   * Lists again now, whatever the watch is doing, and resolves once that list has settled (succeeded, or failed as
   * the owner expects): after the process was paused past its watches' timeouts, only a list says what is there now.
   */
  relist(): Promise<void> {
    if (this.stopped || this.running === undefined) return Promise.resolve();
    const settled = new Promise<void>((resolve) => { this.relistWaiters.push(resolve); });
    this.abort?.abort();
    this.endWatch?.();
    this.wake?.();
    return settled;
  }

  private static settle(waiting: readonly (() => void)[]): void {
    for (const resolve of waiting) resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    ListWatch.settle(this.relistWaiters.splice(0));
    this.unsubscribe?.();
    this.abort?.abort();
    this.wake?.();
    // A watch whose server has not answered yet has no abort handle (client-node hands it over with the response):
    // the loop stops without it, and the request is aborted when its answer comes.
    this.endWatch?.();
    await this.running;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.wake = undefined; resolve(); }, ms);
      this.wake = () => { clearTimeout(timer); this.wake = undefined; resolve(); };
    });
  }

  private credentialsReloaded(): void {
    this.credentialsChanged = true;
    this.backoff.reset();
    this.abort?.abort();
    // A list or watch waiting out its backoff after a 401 tries the new credentials now.
    this.wake?.();
  }

  /** The API refused the credentials (401) or the request (403): the config is told, and re-reads on a 401. */
  private refused(error: unknown, during: string): void {
    const status = httpStatus(error);
    const { config } = this.options;
    if ((status === 401 || status === 403) && config instanceof ReloadingKubeConfig) config.refused(status, `${during} ${this.options.name}`);
  }

  private answered(): void {
    this.failure = undefined;
    const { config } = this.options;
    if (config instanceof ReloadingKubeConfig) config.accepted();
  }

  /** Says a problem once, and again only when it changes: an API outage is one log line, not one per retry. */
  private problem(message: string, context: Record<string, unknown>): void {
    this.failure = { since: this.failure?.since ?? this.now(), problem: message };
    if (!this.problems.isNew(message)) return;
    this.options.logger.warn({ resource: this.options.name, ...context, err: message }, 'shortcut source problem, retrying');
  }

  private recovered(): void {
    if (!this.problems.clear()) return;
    this.options.logger.info({ resource: this.options.name }, 'shortcut source recovered');
  }

  /**
   * The backoff's next delay, or sooner where a 429 says when to come back (a restarted API server answers so while
   * its watch cache fills): honoured for a few answers in a row, so that an API server that stays overloaded is not
   * asked once a second for ever.
   */
  private listDelay(error: unknown): number {
    const delay = this.backoff.next();
    const asked = httpStatus(error) === 429 ? retryAfterMs(retryAfterHeader(error), { now: this.now(), maxMs: delay }) : undefined;
    if (asked === undefined || this.throttled >= RETRY_AFTER_HONOURED) {
      if (asked === undefined) this.throttled = 0;
      return delay;
    }
    this.throttled++;
    return Math.min(delay, asked);
  }

  /** How the watch that ended last ended, while the next one is to be counted as a restart; undefined: it is not one. */
  private restartWhy(end: WatchEnd, ranMs: number, timeoutSeconds: number): string | undefined {
    switch (end.kind) {
      case 'credentials': return undefined;
      case 'gone': return 'its history was compacted (410 Gone)';
      case 'answered': return `answered ${describeError(end.error)}`;
      case 'error': return `dropped (${describeError(end.error)})`;
      case 'closed':
        // The timeout it asked for: the server ends the watch, the loop opens the next one. Routine, every minute.
        return ranMs >= timeoutSeconds * 1000 - TIMEOUT_SLACK_MS ? undefined : `ended by the server after ${(ranMs / 1000).toFixed(1)} s`;
    }
  }

  private restarted(why: string): void {
    this.options.logger.info({ resource: this.options.name, why }, 'watch restarted');
    this.options.onRestart?.({ resource: this.options.name, why });
  }

  /**
   * What a list answered `status` is while the server settles after being away: a 403 or 404 is `doubted` for
   * DOUBT_MS after its first answer, then asked again at the settling pace (`settling`) until SETTLING_MS; anything
   * else, or at other times, `none`. Notes the server away on no answer, a 5xx or a 429.
   */
  private settling(status: number | undefined): 'doubted' | 'settling' | 'none' {
    if (status === undefined || status >= 500 || status === 429) {
      this.away = true;
      return 'none';
    }
    const now = this.now();
    if (this.away) {
      this.away = false;
      this.doubtUntil = now + DOUBT_MS;
      this.settlingUntil = now + SETTLING_MS;
      this.settlingBackoff.reset();
    }
    if (status !== 403 && status !== 404) return 'none';
    return now < this.doubtUntil ? 'doubted' : now < this.settlingUntil ? 'settling' : 'none';
  }

  private async run(): Promise<void> {
    let needList = true;
    /** Why the next watch is a restart (view_watch_restarts_total), if it is one. */
    let restart: string | undefined;

    while (!this.stopped) {
      if (this.relistWaiters.length > 0) needList = true;
      if (needList) {
        // A list sent before a relist was asked for may carry what was there before a pause: only the ones waiting
        // now are answered by this list, later ones by the next.
        const waiting = this.relistWaiters.splice(0);
        try {
          // The view changes only once the whole list is in: a half-read list is not a state of the source.
          const listed = new Map<string, T>();
          let token: string | undefined;
          let resourceVersion = '';
          const tokens = new ContinueTokens();
          do {
            if (token !== undefined) tokens.follow(token);
            const page = await this.options.list(token);
            for (const item of page.items) {
              const key = objectKey(item);
              const kept = key === undefined ? undefined : this.options.keep(item, key);
              if (key !== undefined && kept !== undefined) listed.set(key, kept);
            }
            resourceVersion = page.resourceVersion;
            token = page.continueToken;
          } while (token !== undefined && !this.stopped);
          this.objects = listed;
          this.resourceVersion = resourceVersion;
          this.away = false;
          needList = false;
          this.throttled = 0;
          this.answered();
          this.recovered();
          this.options.onChange(this.objects);
          this.options.onFresh?.();
          this.firstSettledDone();
          ListWatch.settle(waiting);
        } catch (error) {
          const settling = this.settling(httpStatus(error));
          // A failure the owner expects (a CRD this cluster does not have) is its to report, not a problem to warn of.
          // Not yet asked while doubted: the source fails on, with the view it had.
          const expected = settling !== 'doubted' && this.options.onListError?.(httpStatus(error)) === 'expected';
          if (!expected) {
            this.refused(error, 'list');
            this.problem(describeError(error), { during: 'list' });
            // A list that failed is no answer: they wait for the next.
            this.relistWaiters.unshift(...waiting);
          } else {
            // The server answered and the owner knows what it means (none to read): the source is live and the view
            // matches it, whatever failed before. A 404 also proves the credentials were accepted.
            this.failure = undefined;
            this.recovered();
            const { config } = this.options;
            if (httpStatus(error) === 404 && config instanceof ReloadingKubeConfig) config.accepted();
            this.options.onFresh?.();
            this.firstSettledDone();
            ListWatch.settle(waiting);
          }
          this.firstAttemptDone();
          await this.sleep(settling === 'none' ? this.listDelay(error) : this.settlingBackoff.next());
          continue;
        } finally {
          if (!needList) this.firstAttemptDone();
        }
      }
      if (this.stopped) break;
      if (restart !== undefined) this.restarted(restart);
      const timeoutSeconds = this.options.watchTimeoutSeconds
        ?? DEFAULT_WATCH_TIMEOUT_SECONDS + Math.floor(Math.random() * (DEFAULT_WATCH_TIMEOUT_SECONDS * WATCH_TIMEOUT_JITTER + 1));
      const started = Date.now();
      const end = await this.watchOnce(timeoutSeconds);
      if (this.stopped) break;
      // Not a restart the server caused (a relist asked after a pause, new credentials, the watch's own timeout):
      // view_watch_restarts counts watches the server broke or ended early only.
      if (this.relistWaiters.length > 0) { restart = undefined; continue; }
      restart = this.restartWhy(end, Date.now() - started, timeoutSeconds);
      if (end.kind === 'credentials') continue;
      if (end.kind === 'gone') {
        // The history we would resume from is compacted: only a fresh list is consistent again.
        needList = true;
        continue;
      }
      if (end.kind === 'answered') {
        // Only a list says what a refusal or a missing resource means to the owner (an optional one: none to read,
        // so `hub-external`). At once the first time, so a revocation is acted on when it is seen; after the backoff
        // when the watch after that list was answered so again, so that a list allowed where the watch is not is no
        // hot loop.
        this.refused(end.error, 'watch');
        if (this.answeredWatches++ > 0) await this.sleep(this.backoff.next());
        else this.options.logger.info({ resource: this.options.name, err: describeError(end.error) }, 'watch answered with an error: listing again');
        this.failedWatches = 0;
        needList = true;
        continue;
      }
      if (end.kind === 'error') {
        this.away = true;
        this.refused(end.error, 'watch');
        this.problem(describeError(end.error), { during: 'watch' });
        await this.sleep(this.backoff.next());
        if (++this.failedWatches >= WATCH_FAILURES_BEFORE_LIST) {
          this.failedWatches = 0;
          needList = true;
        }
        continue;
      }
      this.failedWatches = 0;
      if (Date.now() - started < HEALTHY_WATCH_MS) await this.sleep(this.backoff.next());
      else this.backoff.reset();
    }
  }

  private store(key: string, object: unknown): void {
    const kept = this.options.keep(object, key);
    if (kept === undefined) this.objects.delete(key); else this.objects.set(key, kept);
  }

  private schedulePublish(): void {
    if (this.publishPending) return;
    this.publishPending = true;
    // One rebuild per burst of events (a chunk often carries many), not one per event.
    setImmediate(() => {
      this.publishPending = false;
      if (!this.stopped) this.options.onChange(this.objects);
    });
  }

  private watchOnce(timeoutSeconds: number): Promise<WatchEnd> {
    return new Promise<WatchEnd>((settle) => {
      /** The loop has moved on (a relist, stop): this watch's events and end are no longer its, and it is aborted. */
      let ended = false;
      let watchdog: NodeJS.Timeout | undefined;
      const resolve = (end: WatchEnd) => {
        if (ended) return;
        ended = true;
        if (watchdog !== undefined) clearTimeout(watchdog);
        this.endWatch = undefined;
        settle(end);
      };
      this.endWatch = () => resolve({ kind: 'closed' });
      let gone = false;
      let failure: unknown;
      /** The server's ERROR event, other than 410: its verdict on this watch, for a list to judge. */
      let verdict: Error | undefined;
      const arm = () => {
        if (watchdog !== undefined) clearTimeout(watchdog);
        watchdog = setTimeout(() => {
          failure = new Error(`no event for ${timeoutSeconds}s beyond the watch timeout: connection presumed dead`);
          this.abort?.abort();
        }, timeoutSeconds * 1000 + WATCHDOG_GRACE_MS);
        watchdog.unref();
      };
      arm();
      const onEvent = (type: string, object: unknown) => {
        if (ended) return;
        arm();
        if (type === 'ERROR') {
          const code = isObject(object) ? object.code : undefined;
          if (code === 410) gone = true;
          else verdict = Object.assign(new Error(`watch error event: ${JSON.stringify(object)}`), typeof code === 'number' ? { statusCode: code } : {});
          return;
        }
        this.failedWatches = 0;
        this.answeredWatches = 0;
        const version = resourceVersionOf(object);
        if (version !== undefined) this.resourceVersion = version;
        this.backoff.reset();
        this.answered();
        this.recovered();
        this.options.onFresh?.();
        if (type === 'BOOKMARK' || type === PASSED_OVER) return;
        const key = objectKey(object);
        if (key === undefined) return;
        if (type === 'DELETED') this.objects.delete(key);
        else {
          if (type === 'ADDED' || type === 'MODIFIED') this.options.onEvent?.(type, object);
          this.store(key, object);
        }
        this.schedulePublish();
      };
      let done = false;
      const onDone = (error: unknown) => {
        done = true;
        if (ended) return;
        if (this.credentialsChanged) {
          this.credentialsChanged = false;
          resolve({ kind: 'credentials' });
        } else if (gone || httpStatus(error) === 410) resolve({ kind: 'gone' });
        else if (verdict !== undefined) resolve({ kind: 'answered', error: verdict });
        else if (failure !== undefined) resolve({ kind: 'error', error: failure });
        else if (error && listJudges(httpStatus(error))) resolve({ kind: 'answered', error });
        else if (error) resolve({ kind: 'error', error });
        else resolve({ kind: 'closed' });
      };
      // Credentials that changed before this watch opens are the ones it opens with: nothing to restart for.
      this.credentialsChanged = false;
      const query: WatchQuery = {
        resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds,
        ...(this.options.labelSelector === undefined ? {} : { labelSelector: this.options.labelSelector }),
      };
      const open: WatchOpener = this.options.openWatch ?? ((path, params, event, finish) => new Watch(this.options.config).watch(path, { ...params }, event, finish));
      open(this.options.watchPath, query, onEvent, onDone, this.options.passOver)
        .then((controller) => {
          // A relist asked while the request was on its way ended this watch for the loop, which has listed and may
          // have opened the next one: left open, this one would be a second watch of the same resource.
          if (ended) {
            controller.abort();
            return;
          }
          this.abort = controller;
          // The stream is open (a refused one has already called onDone): the source answers.
          if (!done) this.answered();
          if (this.credentialsChanged) controller.abort();
        }, onDone);
    });
  }
}
