// What /readyz answers, in one place: not ready while the view is not synced, stale (its source failing for longer
// than --stale-view-after), lapsed after a pause of the process, without a serving certificate, or shutting down.
// Turning stale is also acted on when it happens, not only when a probe asks: it is said once, and the API server's
// open connections are sent away (onStale) so that reviews go to replicas whose view is live.
import type { Logger } from '../log.ts';
import type { SourceFailure } from '../view/list-watch.ts';
import type { ShortcutView } from '../view/shortcut-view.ts';

export interface ReadinessOptions {
  readonly view: ShortcutView;
  readonly logger: Logger;
  /** Since when and why the view's source keeps failing (undefined while it answers). */
  readonly failing: () => SourceFailure | undefined;
  /** What the source reads, as the stale reason names it. */
  readonly sourceName: string;
  /** 0: never stale. */
  readonly staleViewAfterMs: number;
  readonly certificateLoaded: () => boolean;
  /** Called when the view turns stale. */
  readonly onStale: () => void;
  readonly now?: () => number;
}

/** How often staleness is checked between readiness probes, so the transition is acted on when it happens. */
const STALE_CHECK_MS = 1000;

export class Readiness {
  private stopping = false;
  private wasStale = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ReadinessOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.timer = setInterval(() => this.staleness(), STALE_CHECK_MS);
    this.timer.unref();
  }

  /** Not ready from now on: the process is shutting down. */
  shuttingDown(): void {
    this.stopping = true;
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  /** Why this replica is not ready; empty when it is. */
  reasons(): string[] {
    const { view } = this.options;
    return [
      ...this.notSynced(),
      ...this.staleness(),
      // Reviews would use the view from before the pause: other replicas take them until every source has listed again.
      ...(view.isLapsed() ? ['shortcut view lapsed after a pause of the process: every source is listing again'] : []),
      ...(this.options.certificateLoaded() ? [] : ['serving certificate not loaded']),
      ...(this.stopping ? ['shutting down'] : []),
    ];
  }

  /** Not synced, and why when the source has said (a path that is missing, a list refused): the log is not the only place. */
  private notSynced(): string[] {
    if (this.options.view.isSynced()) return [];
    const failure = this.options.failing();
    return [failure === undefined ? 'shortcut view not synced yet' : `shortcut view not synced yet: ${failure.problem}`];
  }

  /** The view's source failing for longer than --stale-view-after (see STALE_VIEW_AFTER_MS for why that long). */
  private staleness(): string[] {
    const failure = this.options.failing();
    const now = this.now();
    const { staleViewAfterMs } = this.options;
    const stale = failure !== undefined && staleViewAfterMs > 0 && now - failure.since >= staleViewAfterMs ? failure : undefined;
    this.sayStale(stale);
    if (stale === undefined) return [];
    const seconds = Math.round((now - stale.since) / 1000);
    return [`shortcut view stale: every read of ${stale.source ?? this.options.sourceName} has failed for ${seconds} s (${stale.problem})`];
  }

  /** Says when the view turns stale and when it is live again, once each; on turning stale calls onStale. */
  private sayStale(stale: SourceFailure | undefined): void {
    if ((stale !== undefined) === this.wasStale) return;
    this.wasStale = stale !== undefined;
    if (stale !== undefined) {
      this.options.logger.error({ since: new Date(stale.since).toISOString(), err: stale.problem },
        'shortcut view stale: not ready, so that reviews go to replicas whose view is live');
      this.options.onStale();
    } else this.options.logger.info('shortcut view live again: ready');
  }
}
