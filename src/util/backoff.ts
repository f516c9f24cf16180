// Capped exponential backoff with full jitter: retries of many replicas spread out instead of arriving together.
export interface BackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000 };

/**
 * An optional resource that is absent (404) or refused (403) is looked for again at this pace: a cheap list, so within
 * half a minute of a CRD installed or a role granted, without asking twice a second while it is not.
 */
export const OPTIONAL_RESOURCE_BACKOFF: BackoffOptions = { initialMs: 5000, maxMs: 30_000 };

export class Backoff {
  private attempt = 0;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF, private readonly random: () => number = Math.random) {}

  /** The next delay: a random point in [cap/2, cap], cap doubling from initialMs up to maxMs. */
  next(): number {
    const cap = Math.min(this.options.maxMs, this.options.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return cap / 2 + this.random() * (cap / 2);
  }

  reset(): void {
    this.attempt = 0;
  }
}
