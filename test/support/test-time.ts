// A TimeSource the test moves by hand: its clock stands still until told, and a timer runs only when the clock
// passes it, in order of when it is due. A delay of seconds is read exactly and waited for not at all.
import type { TimeSource } from '../../src/util/time-source.ts';

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

export class TestTime implements TimeSource {
  private current: number;
  private readonly timers: Timer[] = [];
  private set = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  readonly now = (): number => this.current;

  readonly after = (ms: number, callback: () => void): (() => void) => {
    const timer = { id: this.set++, due: this.current + ms, callback };
    this.timers.push(timer);
    return () => {
      const index = this.timers.indexOf(timer);
      if (index >= 0) this.timers.splice(index, 1);
    };
  };

  /** How many timers were set so far: a mark for `setSince`. */
  timersSet(): number {
    return this.set;
  }

  /** How long from now each timer set since `mark` and still pending is due, in the order they were set. */
  setSince(mark: number): number[] {
    return this.timers.filter((timer) => timer.id >= mark).map((timer) => timer.due - this.current);
  }

  /**
   * Moves the clock on by `ms` with no timer running, as for a process that was stopped: the timers due meanwhile run
   * at the next `advance`, late, seeing the clock as it is then.
   */
  pause(ms: number): void {
    this.current += ms;
  }

  /** Moves the clock on by `ms`, running each timer it passes when its time comes. */
  advance(ms: number): void {
    const until = this.current + ms;
    for (;;) {
      const next = this.timers.reduce<Timer | undefined>((first, timer) => (first === undefined || timer.due < first.due ? timer : first), undefined);
      if (next === undefined || next.due > until) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      this.current = Math.max(this.current, next.due);
      next.callback();
    }
    this.current = until;
  }
}
