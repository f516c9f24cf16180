// Notices changes to files: directory watches for speed, polling for certainty. Secret and ConfigMap volumes swap a
// `..data` symlink and editors replace files by rename, so a watch on a file alone misses changes; some file
// systems (network volumes, overlay in containers) deliver no events at all.
import { watch, type FSWatcher } from 'node:fs';

export interface PathWatch {
  close(): void;
}

/**
 * Whether an event in a watched folder may concern one of `names`: its file, a Secret or ConfigMap volume's `..data`
 * swap (every name starting with `..`), or an event that names no file.
 */
function concerns(names: ReadonlySet<string> | undefined, filename: string | Buffer | null): boolean {
  if (names === undefined || filename === null) return true;
  const name = filename.toString();
  return names.has(name) || name.startsWith('..');
}

/**
 * Calls `onChange` on an event in the given folders (only for the files named `names`, where given: a kubeconfig
 * beside an API server's log would otherwise be read again at every line it writes) and every `pollIntervalMs`
 * regardless; it must be cheap when nothing changed.
 */
export function watchPaths(folders: Iterable<string>, onChange: () => void, pollIntervalMs: number, options: { readonly names?: Iterable<string> } = {}): PathWatch {
  const timer = setInterval(onChange, pollIntervalMs);
  timer.unref();
  const names = options.names === undefined ? undefined : new Set(options.names);
  const watchers: FSWatcher[] = [];
  for (const folder of new Set(folders)) {
    try {
      const watcher = watch(folder, (_event, filename) => { if (concerns(names, filename)) onChange(); });
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
