// `--shortcuts` files as a live source: watched and polled, reloaded on edit or atomic rename. A broken edit
// keeps the last good view (and says why once), so a typo never drops the shortcuts in use.
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../log.ts';
import { loadShortcutFiles } from './shortcut-files.ts';
import type { SnapshotStore } from './shortcut-view.ts';

export interface FileSourceOptions {
  readonly paths: readonly string[];
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** How often the files are read even without a watch event (default 2 s). */
  readonly pollIntervalMs?: number;
}

export class FileShortcutSource {
  private fingerprint: string | undefined;
  private lastError = '';
  private timer: NodeJS.Timeout | undefined;
  private watchers: FSWatcher[] = [];
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(private readonly options: FileSourceOptions) {}

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.reload(), this.options.pollIntervalMs ?? 2000);
    this.timer.unref();
    // Watching the folders too catches editors and `kubectl cp` that replace a file by rename.
    const dirs = new Set(this.options.paths.flatMap((path) => [path, dirname(path)]));
    for (const dir of dirs) {
      try {
        const watcher = watch(dir, () => void this.reload());
        watcher.on('error', () => watcher.close());
        watcher.unref();
        this.watchers.push(watcher);
      } catch {
        // A path that does not exist yet is found by polling once it does.
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
  }

  /** One read at a time; events during a read ask for exactly one more. */
  reload(): Promise<void> {
    if (this.loading !== undefined) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.read().finally(() => {
      this.loading = undefined;
      if (this.again) {
        this.again = false;
        void this.reload();
      }
    });
    return this.loading;
  }

  private async read(): Promise<void> {
    const { store, logger } = this.options;
    const loaded = await loadShortcutFiles(this.options.paths);
    if (!loaded.ok) {
      if (loaded.message !== this.lastError) {
        logger.error({ err: loaded.message, synced: store.isSynced() },
          store.isSynced() ? 'shortcut files unreadable, keeping the last good view' : 'shortcut files unreadable, not ready');
      }
      this.lastError = loaded.message;
      return;
    }
    this.lastError = '';
    const { value } = loaded;
    if (value.fingerprint === this.fingerprint) {
      store.confirm();
      return;
    }
    this.fingerprint = value.fingerprint;
    for (const note of value.ignored) logger.warn({ document: note }, 'ignored a document in the shortcut files');
    const snapshot = store.publishFccs(value.fccs);
    logger.info({ version: snapshot.version, fccs: snapshot.fccs.length, files: value.files.length }, 'shortcut view loaded from files');
  }
}
