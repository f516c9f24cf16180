// One run at a time of an async job, however often it is asked for: bursts of file events become one read.
export class SerialTask {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly job: () => Promise<void>) {}

  /**
   * Starts the job, or asks for one more run after the one in progress. Resolves once a run that started after this
   * call has finished, so a caller that changed something and then asks always sees its change read.
   */
  run(): Promise<void> {
    if (this.running === undefined) {
      this.running = this.job().finally(() => { this.running = undefined; });
      return this.running;
    }
    const next = () => {
      this.queued = undefined;
      return this.run();
    };
    this.queued ??= this.running.then(next, next);
    return this.queued;
  }
}
