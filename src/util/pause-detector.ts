// Notices that the process was not running: a timer that should fire every second fires late by more than the
// threshold (SIGSTOP, a frozen VM, a node swapping, a stop-the-world pause). The monotonic clock advances while the
// process stands still, so the gap is the pause. Watches left open across such a pause may have ended or be far
// behind; the owner decides what to do (serve: the view lapses until its sources have listed again).

export interface PauseDetectorOptions {
  /** Called once per pause, with how long the process did not run, about. */
  readonly onPause: (pausedMs: number) => void;
  /** How late the timer may fire before it counts as a pause (default 5 s: no event-loop stall of ours is that long). */
  readonly thresholdMs?: number;
  readonly intervalMs?: number;
  readonly monotonic?: () => number;
}

const DEFAULT_INTERVAL_MS = 1000;
const DEFAULT_THRESHOLD_MS = 5000;

export class PauseDetector {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private readonly monotonic: () => number;

  constructor(private readonly options: PauseDetectorOptions) {
    this.monotonic = options.monotonic ?? (() => performance.now());
  }

  start(): void {
    const interval = this.options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.last = this.monotonic();
    this.timer = setInterval(() => this.check(interval), interval);
    this.timer.unref();
  }

  /** One tick: exposed so that a test can drive the clock instead of waiting. */
  check(intervalMs = this.options.intervalMs ?? DEFAULT_INTERVAL_MS): void {
    const now = this.monotonic();
    const late = now - this.last - intervalMs;
    this.last = now;
    if (late > (this.options.thresholdMs ?? DEFAULT_THRESHOLD_MS)) this.options.onPause(late + intervalMs);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }
}
