// The clock a component reads and the timers it sets, from one source: the real ones, or a test's that moves only
// when told and runs each timer as its clock passes it, so that delays of seconds are checked in no time and in step
// with the clock the same code reads.

export interface TimeSource {
  /** Milliseconds: epoch ms for realTime, an arbitrary origin for monotonicTime. */
  now(): number;
  /** Calls `callback` once, `ms` from now; the function returned cancels it. */
  after(ms: number, callback: () => void): () => void;
}

/** Date.now and setTimeout. The timers are unref'd: a shutdown never waits for one. */
export const realTime: TimeSource = {
  now: () => Date.now(),
  after: (ms, callback) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * performance.now and setTimeout: a clock that a step of the wall clock does not move, for silences timed by the
 * product itself (a Connection's heartbeat). The timers are unref'd likewise.
 */
export const monotonicTime: TimeSource = {
  now: () => performance.now(),
  after: realTime.after,
};
