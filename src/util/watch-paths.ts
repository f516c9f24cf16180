// Notices changes to files: directory watches for speed, polling for certainty. Secret and ConfigMap volumes swap a
// `..data` symlink and editors replace files by rename, so a watch on a file alone misses changes; some file
// systems (network volumes, overlay in containers) deliver no events at all.
import { watch, type FSWatcher } from 'node:fs';

export interface PathWatch {
  close(): void;
}

/** Calls `onChange` on any event in the given folders and every `pollIntervalMs` regardless; it must be cheap when nothing changed. */
export function watchPaths(folders: Iterable<string>, onChange: () => void, pollIntervalMs: number): PathWatch {
  const timer = setInterval(onChange, pollIntervalMs);
  timer.unref();
  const watchers: FSWatcher[] = [];
  for (const folder of new Set(folders)) {
    try {
      const watcher = watch(folder, onChange);
      watcher.on('error', () => watcher.close());
      watcher.unref();
      watchers.push(watcher);
    } catch {
      // A folder that does not exist (yet) is still found by polling.
    }
  }
  return {
    close() {
      clearInterval(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
