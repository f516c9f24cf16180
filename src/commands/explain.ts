// `shortcut-webhook explain`: what the webhook does to slices stored in a cluster now, and why. It reads the slices
// and builds its view with the very source serve uses (ClusterShortcutSource into a SnapshotStore), waits for the
// first sync, prints rewrite --explain's tables (or JSON) and exits. Read-only: it lists, gets and watches, nothing
// else. The Kubernetes client is loaded only for this command (main.ts imports this module on demand).
import { Writable } from 'node:stream';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { EXIT_INVALID_INPUT, EXIT_OK, type Io } from '../cli.ts';
import type { ExplainConfig } from '../config.ts';
import { asEndpointSlice, MANAGED_BY_LABEL } from '../core/endpoint-slice.ts';
import { asShadowEndpointSlice, SHADOW_GROUP, SHADOW_KIND, SHADOW_VERSION } from '../core/shadow-endpoint-slice.ts';
import { describeError, httpStatus, loadKubeAccess, readListPage, type KubeAccess } from '../kube/client.ts';
import { createLogger } from '../log.ts';
import { explain, explainJson } from '../offline/explain.ts';
import { rewriteDocuments } from '../offline/rewrite-documents.ts';
import { errorMessage } from '../util/errors.ts';
import { userAgent } from '../version.ts';
import { ClusterShortcutSource } from '../view/cluster-source.ts';
import { SnapshotStore } from '../view/shortcut-view.ts';

/** How long the views may take to sync before the command gives up (the list-watch loop itself retries forever). */
const SYNC_TIMEOUT_MS = 30_000;

export interface ExplainOptions {
  readonly syncTimeoutMs?: number;
}

/** What `explain` reads, by resource: where it is served, what it is called, how a list item gets its kind back. */
const RESOURCES = {
  endpointslices: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', document: 'endpointslice', typed: asEndpointSlice },
  shadowendpointslices: { group: SHADOW_GROUP, version: SHADOW_VERSION, kind: SHADOW_KIND, document: 'shadowendpointslice', typed: asShadowEndpointSlice },
} as const;

/** The slices to explain, as stored: one by name, or every match of the selector, in name order. */
async function readSlices(access: KubeAccess, namespace: string, target: ExplainConfig['target'], plural: ExplainConfig['resource']): Promise<unknown[]> {
  const api = access.config.makeApiClient(CustomObjectsApi);
  const resource = RESOURCES[plural];
  const where = { group: resource.group, version: resource.version, namespace, plural };
  if (target.kind === 'name') return [await api.getNamespacedCustomObject({ ...where, name: target.name })];
  const items: unknown[] = [];
  let token: string | undefined;
  do {
    const page = readListPage(await api.listNamespacedCustomObject({
      ...where, labelSelector: target.selector, limit: 500, ...(token === undefined ? {} : { _continue: token }),
    }));
    // List items come without apiVersion and kind; the rewrite wants a whole object.
    items.push(...page.items.map(resource.typed));
    token = page.continueToken;
  } while (token !== undefined);
  return items;
}

/**
 * The view's log as a command's stderr lines, not JSON: `shortcut-webhook explain: warn: <message> (key=value ...)`.
 * pino writes one JSON line per record; the fields a person needs follow the message.
 */
function textLog(stderr: NodeJS.WritableStream): Writable {
  const hidden = new Set(['level', 'time', 'app', 'msg']);
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) {
        if (line.trim() === '') continue;
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(line) as Record<string, unknown>;
        } catch {
          stderr.write(`shortcut-webhook explain: ${line}\n`);
          continue;
        }
        const fields = Object.entries(record).filter(([key]) => !hidden.has(key))
          .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
        stderr.write(`shortcut-webhook explain: ${String(record.level)}: ${String(record.msg)}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}\n`);
      }
      done();
    },
  });
}

export async function runExplain(config: ExplainConfig, io: Io, env: NodeJS.ProcessEnv, options: ExplainOptions = {}): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`shortcut-webhook explain: ${message}\n`);
    return EXIT_INVALID_INPUT;
  };
  let local: KubeAccess | undefined;
  let shortcuts: KubeAccess | undefined;
  try {
    const agent = userAgent();
    local = loadKubeAccess(config.kubeconfig ?? (env.KUBECONFIG || undefined), env, agent);
    shortcuts = config.shortcutsKubeconfig === undefined ? local : loadKubeAccess(config.shortcutsKubeconfig, env, agent);
  } catch (error) {
    return fail(`cannot load the kubeconfig: ${errorMessage(error)}`);
  }
  if (local === undefined || shortcuts === undefined) return fail('no cluster to read: give --kubeconfig (or KUBECONFIG), or run in a pod');
  const context = local.config.getContextObject(local.config.getCurrentContext());
  const namespace = config.namespace ?? context?.namespace ?? 'default';

  let slices: unknown[];
  const { kind, document } = RESOURCES[config.resource];
  try {
    slices = await readSlices(local, namespace, config.target, config.resource);
  } catch (error) {
    if (httpStatus(error) === 404 && config.target.kind === 'name') return fail(`no ${kind} ${namespace}/${config.target.name}`);
    return fail(`cannot read ${kind}s in ${namespace}: ${describeError(error)}`);
  }
  if (slices.length === 0) {
    return fail(`no ${kind} in ${namespace} matches ${config.target.kind === 'selector' ? config.target.selector : ''} (reflected ones carry ${MANAGED_BY_LABEL}=endpointslice.reflection.liqo.io)`);
  }

  // serve's own view: the same source and store, so whatever serve reads (FCCs, Connections, Configurations, and
  // what is added to that source later) is what this explains. Its log goes to stderr, warnings only.
  const store = new SnapshotStore();
  const source = new ClusterShortcutSource({
    store, logger: createLogger('warn', textLog(io.stderr)), shortcutsConfig: shortcuts.config, namespace: config.shortcutsNamespace,
    localConfig: local.config,
    // As serve: FCCs read on the hub mean the hub's IPAM objects are read there too (the stock-Liqo path).
    hubConfig: config.shortcutsKubeconfig === undefined ? undefined : shortcuts.config,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const synced = new Promise<boolean>((resolve) => {
      const unsubscribe = store.subscribe(() => {
        if (!store.isSynced()) return;
        unsubscribe();
        resolve(true);
      });
      timer = setTimeout(() => resolve(store.isSynced()), options.syncTimeoutMs ?? SYNC_TIMEOUT_MS);
    });
    await source.start();
    if (!(await synced)) return fail(`the ForeignClusterConnections could not be read within ${(options.syncTimeoutMs ?? SYNC_TIMEOUT_MS) / 1000}s (from ${shortcuts.origin})`);
  } finally {
    clearTimeout(timer);
    await source.stop();
  }
  const snapshot = store.current();
  const documents = slices.map((value) => ({ name: document, value }));
  const rewritten = rewriteDocuments(documents, snapshot, { clusterId: config.clusterId });
  if (!rewritten.ok) return fail(rewritten.message);
  io.stdout.write(config.output === 'json'
    ? `${JSON.stringify(explainJson(rewritten.value, snapshot, config.clusterId))}\n`
    : explain(rewritten.value, snapshot, config.clusterId));
  return EXIT_OK;
}
