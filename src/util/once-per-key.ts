// Something said once per key, in bounded memory: keys come from objects strangers may create, so the oldest are
// forgotten past a bound (and said again if they come back), rather than kept for the life of the process.
export class OncePerKey {
  private readonly seen = new Set<string>();

  constructor(private readonly bound: number) {}

  /** True the first time `key` is seen (or again once it has been forgotten). */
  first(key: string): boolean {
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    if (this.seen.size > this.bound) {
      const oldest = this.seen.values().next();
      if (oldest.done !== true) this.seen.delete(oldest.value);
    }
    return true;
  }
}
