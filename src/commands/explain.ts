// `shortcut-webhook explain`: what the webhook does to slices stored in a cluster now, and why. It reads the slices
// and builds its view with the very source serve uses (ClusterShortcutSource into a SnapshotStore), waits for the
// first sync, prints rewrite --explain's tables (or JSON) and exits. Read-only: it lists, gets and watches, nothing
// else. The Kubernetes client is loaded only for this command (main.ts imports this module on demand).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { EXIT_INVALID_INPUT, EXIT_OK, type Io } from '../cli.ts';
import type { ExplainConfig } from '../config.ts';
import { asEndpointSlice, MANAGED_BY_LABEL } from '../core/endpoint-slice.ts';
import { asShadowEndpointSlice, SHADOW_GROUP, SHADOW_KIND, SHADOW_VERSION } from '../core/shadow-endpoint-slice.ts';
import { describeError, httpStatus, readListPage, type KubeAccess } from '../kube/client.ts';
import { explain, explainJson } from '../offline/explain.ts';
import { rewriteDocuments } from '../offline/rewrite-documents.ts';
import { loadLiveAccess, readLiveView } from './live-view.ts';
import { ContinueTokens } from '../util/continue-tokens.ts';

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
  const tokens = new ContinueTokens();
  do {
    if (token !== undefined) tokens.follow(token);
    const page = readListPage(await api.listNamespacedCustomObject({
      ...where, labelSelector: target.selector, limit: 500, ...(token === undefined ? {} : { _continue: token }),
    }));
    // List items come without apiVersion and kind; the rewrite wants a whole object.
    items.push(...page.items.map(resource.typed));
    token = page.continueToken;
  } while (token !== undefined);
  return items;
}

export async function runExplain(config: ExplainConfig, io: Io, env: NodeJS.ProcessEnv, options: ExplainOptions = {}): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`shortcut-webhook explain: ${message}\n`);
    return EXIT_INVALID_INPUT;
  };
  const access = loadLiveAccess(config, env);
  if (typeof access === 'string') return fail(access);
  const { local } = access;
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

  const snapshot = await readLiveView(access, {
    command: 'explain', stderr: io.stderr, shortcutsNamespace: config.shortcutsNamespace,
    hubNamespaces: config.hubNamespaces, syncTimeoutMs: options.syncTimeoutMs,
    connectionStaleAfterMs: config.connectionStaleAfterMs,
  });
  if (typeof snapshot === 'string') return fail(snapshot);
  const documents = slices.map((value) => ({ name: document, value }));
  const rewritten = rewriteDocuments(documents, snapshot, { clusterId: config.clusterId });
  if (!rewritten.ok) return fail(rewritten.message);
  io.stdout.write(config.output === 'json'
    ? `${JSON.stringify(explainJson(rewritten.value, snapshot, config.clusterId))}\n`
    : explain(rewritten.value, snapshot, config.clusterId));
  return EXIT_OK;
}
