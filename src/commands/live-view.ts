// What the live, read-only commands (explain, status) share: the kubeconfigs serve would use, and serve's own view of
// the cluster (ClusterShortcutSource into a SnapshotStore) read once to its first sync and stopped.
import { Writable } from 'node:stream';
import type { ReaderBinding } from '../core/hubs.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { loadKubeAccess, type KubeAccess } from '../kube/client.ts';
import { createLogger } from '../log.ts';
import { errorMessage } from '../util/errors.ts';
import { userAgent } from '../version.ts';
import { ClusterShortcutSource } from '../view/cluster-source.ts';
import { SnapshotStore } from '../view/shortcut-view.ts';

/** How long the views may take to sync before the command gives up (the list-watch loop itself retries forever). */
export const SYNC_TIMEOUT_MS = 30_000;

export interface LiveAccess {
  readonly local: KubeAccess;
  /** One per hub reader (--shortcuts-kubeconfig [ID=]FILE): where the FCCs and that hub's IPAM objects are read. */
  readonly hubs: readonly { readonly id: string | undefined; readonly access: KubeAccess }[];
}

export interface KubeconfigFlags {
  readonly kubeconfig: string | undefined;
  readonly shortcutsKubeconfigs: readonly ReaderBinding[];
}

/** The leaf's and the hub readers' access, or why there is none. */
export function loadLiveAccess(flags: KubeconfigFlags, env: NodeJS.ProcessEnv): LiveAccess | string {
  let local: KubeAccess | undefined;
  const hubs: { id: string | undefined; access: KubeAccess }[] = [];
  try {
    const agent = userAgent();
    local = loadKubeAccess(flags.kubeconfig ?? (env.KUBECONFIG || undefined), env, agent);
    for (const { hub, value } of flags.shortcutsKubeconfigs) {
      const access = loadKubeAccess(value, env, agent);
      if (access !== undefined) hubs.push({ id: hub, access });
    }
  } catch (error) {
    return `cannot load the kubeconfig: ${errorMessage(error)}`;
  }
  if (local === undefined) return 'no cluster to read: give --kubeconfig (or KUBECONFIG), or run in a pod';
  return { local, hubs };
}

/**
 * The view's log as a command's stderr lines, not JSON: `shortcut-webhook <command>: warn: <message> (key=value ...)`.
 * pino writes one JSON line per record; the fields a person needs follow the message.
 */
export function textLog(command: string, stderr: NodeJS.WritableStream): Writable {
  const hidden = new Set(['level', 'time', 'app', 'msg']);
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) {
        if (line.trim() === '') continue;
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(line) as Record<string, unknown>;
        } catch {
          stderr.write(`shortcut-webhook ${command}: ${line}\n`);
          continue;
        }
        const fields = Object.entries(record).filter(([key]) => !hidden.has(key))
          .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
        stderr.write(`shortcut-webhook ${command}: ${String(record.level)}: ${String(record.msg)}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}\n`);
      }
      done();
    },
  });
}

export interface ViewOptions {
  readonly command: string;
  readonly stderr: NodeJS.WritableStream;
  readonly shortcutsNamespace: string | undefined;
  readonly hubNamespaces: readonly string[];
  readonly syncTimeoutMs?: number | undefined;
  readonly connectionStaleAfterMs: number;
}

/**
 * serve's own view: the same source and store, so whatever serve reads (FCCs, Connections, Configurations, the hub's
 * IPAM, and what is added to that source later) is what the command reports. Its log goes to stderr, warnings only.
 * A string says why it did not sync in time.
 */
export async function readLiveView(access: LiveAccess, options: ViewOptions): Promise<Snapshot | string> {
  const store = new SnapshotStore();
  const source = new ClusterShortcutSource({
    store, logger: createLogger('warn', textLog(options.command, options.stderr)), shortcutsConfig: access.local.config,
    namespace: options.shortcutsNamespace, localConfig: access.local.config,
    hubs: access.hubs.map(({ id, access: hub }) => ({ id, config: hub.config })), hubNamespaces: options.hubNamespaces,
    connectionStaleAfterMs: options.connectionStaleAfterMs,
  });
  const timeoutMs = options.syncTimeoutMs ?? SYNC_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  try {
    const synced = new Promise<boolean>((resolve) => {
      const unsubscribe = store.subscribe(() => {
        if (!store.isSynced()) return;
        unsubscribe();
        resolve(true);
      });
      timer = setTimeout(() => resolve(store.isSynced()), timeoutMs);
    });
    await source.start();
    if (!(await synced)) {
      const from = access.hubs.length === 0 ? access.local.origin : access.hubs.map(({ access: hub }) => hub.origin).join(', ');
      return `the ForeignClusterConnections could not be read within ${timeoutMs / 1000}s (from ${from})`;
    }
  } finally {
    clearTimeout(timer);
    await source.stop();
  }
  return store.current();
}
