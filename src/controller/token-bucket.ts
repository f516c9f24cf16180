// Bounds the write rate of the controller: a burst of one second's worth, then a steady rate.
export type Sleep = (ms: number) => Promise<void>;

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class TokenBucket {
  private tokens: number;
  private updated: number;

  /** `clock` (milliseconds) and `sleep` are the real ones unless a test passes its own. */
  constructor(
    private readonly perSecond: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly sleep: Sleep = realSleep,
  ) {
    this.tokens = perSecond;
    this.updated = clock();
  }

  /** Resolves when a token is free; callers queue in the event loop, no busy waiting. */
  async take(): Promise<void> {
    for (;;) {
      const now = this.clock();
      this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.updated) / 1000) * this.perSecond);
      this.updated = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await this.sleep(Math.ceil(((1 - this.tokens) / this.perSecond) * 1000));
    }
  }
}
