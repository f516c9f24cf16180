// A recurring problem said once, and again only when it changes: an API outage or a broken file is one log line, not
// one per retry or poll.
export class ProblemLatch {
  private standing: string | undefined;

  /** True when `message` is not the problem already standing: the caller says it. */
  isNew(message: string): boolean {
    if (message === this.standing) return false;
    this.standing = message;
    return true;
  }

  /** Forgets the standing problem; true when there was one, so the caller may say it is over. */
  clear(): boolean {
    const had = this.standing !== undefined;
    this.standing = undefined;
    return had;
  }
}
