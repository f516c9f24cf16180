// `--shortcuts` files as a live source, reloaded on edit or atomic rename (see watch-paths.ts). A broken edit
// keeps the last good view (and says why once), so a typo never drops the shortcuts in use; but files that cannot
// be read are a source that fails, as a cluster that cannot be listed is (failing()), so a replica whose view no
// longer follows its files turns not ready after --stale-view-after.
import { dirname } from 'node:path';
import { hubIpCount, readerBinding } from '../core/hubs.ts';
import type { Logger } from '../log.ts';
import { ProblemLatch } from '../util/problem-latch.ts';
import { SerialTask } from '../util/serial-task.ts';
import { watchPaths, type PathWatch } from '../util/watch-paths.ts';
import { parseShortcutTexts, readShortcutTexts, type ViewPaths } from './shortcut-files.ts';
import type { SourceFailure } from './list-watch.ts';
import type { SnapshotStore } from './shortcut-view.ts';

export interface FileSourceOptions {
  /** `--shortcuts` and `--hub`: read together, published in one rebuild. */
  readonly paths: ViewPaths;
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** How often the files are read even without a watch event (default 2 s). */
  readonly pollIntervalMs?: number;
  /** For how long the files have been failing (see failing()); Date.now by default. */
  readonly now?: () => number;
}

export class FileShortcutSource {
  private fingerprint: string | undefined;
  private brokenFingerprint: string | undefined;
  private readonly readProblems = new ProblemLatch();
  private watching: PathWatch | undefined;
  private readonly reads = new SerialTask(() => this.read());
  private failure: SourceFailure | undefined;
  private readonly now: () => number;

  constructor(private readonly options: FileSourceOptions) {
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    await this.reload();
    // A path is watched as a folder and through its parent, so a file replaced by rename is noticed too.
    const { shortcuts, hub } = this.options.paths;
    this.watching = watchPaths([...shortcuts, ...hub.map((given) => readerBinding(given).value)].flatMap((path) => [path, dirname(path)]),
      () => void this.reload(), this.options.pollIntervalMs ?? 2000);
  }

  async stop(): Promise<void> {
    this.watching?.close();
  }

  /**
   * Undefined while the files read and parse. Otherwise since when every read has failed (a path that cannot be
   * read, YAML or JSON that does not parse, a document that is not valid), and the last reason, naming the file,
   * document and line. The view meanwhile is the last good one (or none before the first good read).
   */
  failing(): SourceFailure | undefined {
    return this.failure;
  }

  /** Reads the files again (one read at a time, events during a read make one more). */
  reload(): Promise<void> {
    return this.reads.run();
  }

  private async read(): Promise<void> {
    const { store, logger } = this.options;
    const texts = await readShortcutTexts(this.options.paths);
    // The same text as last time is the same view: no parse (a view of thousands of FCCs is megabytes of YAML).
    if (texts.ok && texts.value.fingerprint === this.fingerprint) {
      // Back to the good text after a broken edit: the same broken edit again must be reported again.
      this.brokenFingerprint = undefined;
      this.failure = undefined;
      if (this.readProblems.clear()) logger.info('shortcut files readable again, the view is unchanged');
      store.confirm();
      return;
    }
    // A broken edit is parsed (and reported) once, not on every poll until it is fixed; it is still failing.
    if (texts.ok && texts.value.fingerprint === this.brokenFingerprint) return;
    const loaded = texts.ok ? parseShortcutTexts(texts.value) : texts;
    this.brokenFingerprint = !loaded.ok && texts.ok ? texts.value.fingerprint : undefined;
    if (!loaded.ok) {
      this.failure = { since: this.failure?.since ?? this.now(), problem: loaded.message };
      if (this.readProblems.isNew(loaded.message)) {
        logger.error({ err: loaded.message, synced: store.isSynced() },
          store.isSynced() ? 'shortcut files unreadable, keeping the last good view' : 'shortcut files unreadable, not ready');
      }
      return;
    }
    this.readProblems.clear();
    this.failure = undefined;
    const { value } = loaded;
    this.fingerprint = value.fingerprint;
    for (const note of value.ignored) logger.warn({ document: note }, 'ignored a document in the shortcut files');
    const snapshot = store.publish({
      fccs: value.fccs, tunnels: value.tunnels, configurations: value.configurations, hubs: value.hubs, consumers: value.consumers,
    });
    logger.info({ version: snapshot.version, fccs: snapshot.fccs.length, tunnels: value.tunnels.size,
      configurations: value.configurations.length, hubIps: hubIpCount(snapshot.hubs), files: value.files.length },
    'shortcut view loaded from files');
  }
}
