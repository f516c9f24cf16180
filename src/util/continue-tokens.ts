// The continue tokens one paged list has followed. A token names a place in one list, so an API server (or a proxy)
// that gives one again would have the same pages read for ever: the list fails instead, and its caller retries or
// reports as for any failed list.
export class ContinueTokens {
  private readonly followed = new Set<string>();

  /** Throws when `token` was already followed in this list. */
  follow(token: string): void {
    if (this.followed.has(token)) throw new Error(`the API server gave the same continue token twice in one list (${token})`);
    this.followed.add(token);
  }
}
