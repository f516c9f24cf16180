// Polls a condition until it holds. Tests wait on what they mean ("the informer has seen 3 objects"), never on a sleep:
// a sleep is either too short on a loaded CI machine or wasted time everywhere else.

export interface WaitForOptions {
  /** Give up after this long; default 5000 ms. */
  readonly timeoutMs?: number;
  /** Time between two checks; default 10 ms. */
  readonly intervalMs?: number;
  /** Names the condition in the timeout error. */
  readonly description?: string;
}

/**
 * Resolves with the first truthy value of `condition` (which may be async). A condition that throws counts as "not yet";
 * the last error is attached to the timeout error as `cause`, so an assertion inside the condition explains itself.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      // A condition that never settles (a request the server never answers) is given up after the whole timeout, so
      // one slow answer near the deadline still counts.
      const value = await within(Promise.resolve(condition()), { timeoutMs, description: 'the condition' });
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const what = options.description ?? 'condition';
      throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms`, lastError === undefined ? {} : { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * `promise`, or a failure naming `description` once `timeoutMs` (default 5000 ms) has passed without it settling: a
 * wait on a promise the code under test may never settle fails the test instead of hanging its file.
 */
export async function within<T>(promise: Promise<T>, options: Omit<WaitForOptions, 'intervalMs'> = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 5000;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`within: ${options.description ?? 'promise'} not settled within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
