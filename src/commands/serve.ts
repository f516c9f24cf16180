// Composition root of `serve`: config -> view -> apps -> listen; signals. The only place the server is started.
import { readFileSync } from 'node:fs';
import { buildOpsApp, buildWebhookApp, type WebhookApp } from '../app.ts';
import { EXIT_INVALID_INPUT, EXIT_OK } from '../cli.ts';
import type { ServeConfig } from '../config.ts';
import { hubIpCount, readerName } from '../core/hubs.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { localStates } from '../core/local-clusters.ts';
import type { ControllerManager } from '../controller/manager.ts';
import type { ReloadingKubeConfig } from '../kube/reloading-config.ts';
import { inCluster } from '../kube/in-cluster.ts';
import { createLogger, type Logger } from '../log.ts';
import { Metrics } from '../metrics.ts';
import { trackDrain } from '../server/drain.ts';
import { Readiness } from '../server/readiness.ts';
import { developmentTls } from '../dev-tls.ts';
import { buildInfo, userAgent } from '../version.ts';
import { CertificateWatcher, secureContextOptions, type TlsMaterial } from '../tls.ts';
import { errorMessage } from '../util/errors.ts';
import { PauseDetector } from '../util/pause-detector.ts';
import type { FailingReport, SourceReport } from '../server/debug-pairs.ts';
import type { ClusterShortcutSource } from '../view/cluster-source.ts';
import type { SourceFailure } from '../view/list-watch.ts';
import { FileShortcutSource } from '../view/file-source.ts';
import { SnapshotStore } from '../view/shortcut-view.ts';
import { logViewChanges } from '../view/view-log.ts';
import { AnsweredVersions } from '../util/answered-versions.ts';

/** The clusters serve reads: the local one, and one per hub reader (none: the FCCs are read on the local cluster). */
interface ServeClusters {
  readonly local: ReloadingKubeConfig | undefined;
  readonly hubs: readonly { readonly id: string | undefined; readonly config: ReloadingKubeConfig }[];
}

/**
 * The local cluster (Liqo Connections, the controller) and each hub reader's. In file mode KUBECONFIG is not
 * followed: `npm start` on a laptop must never reconcile whatever cluster the shell happens to point at. The
 * Kubernetes client is loaded only when some cluster may be there to talk to. Every config re-reads its file when it
 * changes and when the API answers 401 (reloading-config.ts).
 */
async function kubeConfigsFor(config: ServeConfig, env: NodeJS.ProcessEnv, logger: Logger): Promise<ServeClusters> {
  const localFile = config.kubeconfig ?? (config.source === 'cluster' ? env.KUBECONFIG || undefined : undefined);
  if (localFile === undefined && config.shortcutsKubeconfigs.length === 0 && !inCluster(env)) return { local: undefined, hubs: [] };
  const { reloadingKubeConfig } = await import('../kube/reloading-config.ts');
  const agent = userAgent();
  const local = reloadingKubeConfig(localFile, logger, env, agent);
  const hubs = config.shortcutsKubeconfigs.flatMap(({ hub, value }) => {
    const hubConfig = reloadingKubeConfig(value, logger, env, agent);
    return hubConfig === undefined ? [] : [{ id: hub, config: hubConfig }];
  });
  return { local, hubs };
}

/** shortcut_webhook_hub_readers: each reader's hub, read or away, and each consumer no reader stands for. */
function setHubReaders(metrics: Metrics, snapshot: Snapshot): void {
  metrics.hubReaders.reset();
  const readers = { parts: snapshot.hubs, consumers: snapshot.consumers };
  for (const part of snapshot.hubs) metrics.hubReaders.set({ hub: readerName(part, readers), state: part.away === undefined ? 'read' : 'away' }, 1);
  for (const hub of snapshot.unreadHubs) metrics.hubReaders.set({ hub, state: 'not-read' }, 1);
}

/** A source's failure as /debug/pairs shows it. */
function failingReport(failure: SourceFailure | undefined): FailingReport | null {
  return failure === undefined ? null : { since: new Date(failure.since).toISOString(), problem: failure.problem };
}


/** Below the Deployment's 30 s grace period minus its 5 s preStop pause, so the exit is ours and not a SIGKILL. */
const SHUTDOWN_DEADLINE_MS = 20_000;
const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The downward API's POD_NAMESPACE, else the service account's namespace file; undefined outside a pod. */
function podNamespace(env: NodeJS.ProcessEnv): string | undefined {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The serving certificate, watched and reloaded: --tls-cert/--tls-key, else a development pair made now (removed on
 * the way out by `cleanups`). Undefined, said in the log, when there is none to serve with.
 */
async function servingTls(config: ServeConfig, logger: Logger, cleanups: (() => void)[], onReload: (material: TlsMaterial) => void):
Promise<{ certificates: CertificateWatcher; tls: TlsMaterial } | undefined> {
  let files;
  try {
    if (config.tls !== undefined) files = config.tls;
    else {
      const development = developmentTls(logger);
      cleanups.push(development.remove);
      files = development.files;
    }
  } catch (error) {
    logger.fatal({ err: errorMessage(error) }, 'no --tls-cert/--tls-key and no development certificate could be made');
    return undefined;
  }
  const certificates = new CertificateWatcher({ files, logger, onReload });
  try {
    return { certificates, tls: await certificates.start() };
  } catch (error) {
    logger.fatal({ err: errorMessage(error) }, 'cannot load the serving certificate');
    return undefined;
  }
}

/** The view's source, whichever the flags name, and what readiness and /debug/pairs read of it. */
interface ViewSource {
  /** Types only: the cluster-mode classes are imported where they are built, so file mode never loads the client. */
  readonly source: ClusterShortcutSource | FileShortcutSource;
  /**
   * Whether the view's source keeps failing: every list and watch of the FCCs, or every read of the files (a path
   * that cannot be read, a broken edit). Either way the view is the last good one, no longer following its source.
   */
  readonly failing: () => SourceFailure | undefined;
  /** What the source reads, as the stale reason names it. */
  readonly sourceName: string;
  readonly sources: () => readonly SourceReport[];
}

async function viewSourceFor(
  config: ServeConfig, clusters: ServeClusters,
  { store, metrics, logger }: { store: SnapshotStore; metrics: Metrics; logger: Logger },
): Promise<ViewSource> {
  const { local, hubs } = clusters;
  const shortcuts = hubs[0]?.config ?? local;
  if (config.source === 'cluster' && shortcuts !== undefined) {
    const { ClusterShortcutSource } = await import('../view/cluster-source.ts');
    const clusterSource = new ClusterShortcutSource({
      store, logger, shortcutsConfig: local ?? shortcuts, namespace: config.shortcutsNamespace, localConfig: local,
      // Each hub reader reads that hub's FCCs and IPAM objects (the stock-Liqo path), as its part of the view.
      hubs, hubNamespaces: config.hubNamespaces, hubAwayAfterMs: config.staleViewAfterMs,
      onRestart: () => metrics.viewWatchRestarts.inc(),
      connectionStaleAfterMs: config.connectionStaleAfterMs,
      ...(config.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: config.watchTimeoutSeconds }),
    });
    for (const { id, config: hub } of hubs.length > 0 ? hubs : [{ id: undefined, config: shortcuts }]) {
      logger.info({ from: hub.origin, hub: id ?? null, namespace: config.shortcutsNamespace ?? (config.hubNamespaces.join(',') || 'all') }, 'watching ForeignClusterConnections');
    }
    return {
      source: clusterSource,
      failing: () => clusterSource.failing(),
      sourceName: 'the ForeignClusterConnections',
      sources: () => [
        ...(hubs.length === 0 ? [{ cluster: 'shortcuts', credentials: shortcuts.status(), failing: failingReport(clusterSource.failingOn('shortcuts')) }]
          : hubs.map(({ id, config: hub }) => ({
            cluster: 'shortcuts', ...(id === undefined ? {} : { hub: id }), credentials: hub.status(), failing: failingReport(clusterSource.failingOnHub(id)),
          }))),
        ...(local !== undefined && hubs.length > 0 ? [{ cluster: 'local', credentials: local.status(), failing: failingReport(clusterSource.failingOn('local')) }] : []),
      ],
    };
  }
  const fileSource = new FileShortcutSource({ paths: { shortcuts: config.shortcuts, hub: config.hub }, store, logger });
  logger.info({ paths: config.shortcuts, hub: config.hub }, 'reading ForeignClusterConnections from files');
  return {
    source: fileSource,
    failing: () => fileSource.failing(),
    sourceName: 'the shortcut files',
    sources: () => [{ files: { shortcuts: config.shortcuts, hub: config.hub }, failing: failingReport(fileSource.failing()) }],
  };
}

/** `::` reaches IPv6-only and dual-stack pods alike; a kernel without IPv6 refuses it, and then IPv4 will do. */
async function listenAll(app: { listen(options: { host: string; port: number }): Promise<string> }, host: string | undefined, port: number): Promise<void> {
  if (host !== undefined) {
    await app.listen({ host, port });
    return;
  }
  try {
    await app.listen({ host: '::', port });
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
    if (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL') throw error;
    await app.listen({ host: '0.0.0.0', port });
  }
}

/** What stops the server: SIGTERM (the kubelet, `kill`), SIGINT (Ctrl-C), SIGHUP (the terminal went away). */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * The first stop signal, and `release` to remove the handlers once the shutdown is logged. Until then a repeated
 * signal is only noted: with the default action it would kill the process mid-shutdown and lose the `shutting down`
 * and `stopped` lines, which is what a signal to `npm start`'s process group did in about half the runs (this
 * process gets it, and npm forwards its own). The shutdown is bounded by SHUTDOWN_DEADLINE_MS; SIGKILL still ends it.
 */
function signalled(onRepeat: (signal: string) => void): { first: Promise<string>; release: () => void } {
  let first: string | undefined;
  let resolveFirst: (signal: string) => void = () => undefined;
  const promise = new Promise<string>((resolve) => {
    resolveFirst = resolve;
  });
  const handle = (signal: string): void => {
    if (first !== undefined) {
      onRepeat(signal);
      return;
    }
    first = signal;
    resolveFirst(signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, handle);
  return { first: promise, release: () => { for (const signal of STOP_SIGNALS) process.off(signal, handle); } };
}

/** Both apps listening; false, said with the flag to change, when one cannot (a port in use). */
async function listenBoth(apps: { ops: ReturnType<typeof buildOpsApp>; webhook: WebhookApp }, config: ServeConfig, logger: Logger): Promise<boolean> {
  // Which flag to change when a port is taken: the message of EADDRINUSE alone names only the address.
  let listening = '--ops-port';
  try {
    await listenAll(apps.ops, config.host, config.opsPort);
    listening = '--port';
    await listenAll(apps.webhook, config.host, config.port);
    return true;
  } catch (error) {
    const busy = typeof error === 'object' && error !== null && 'code' in error && error.code === 'EADDRINUSE';
    logger.fatal({ err: errorMessage(error), ...(busy ? { hint: `the port is in use: choose another with ${listening}` } : {}) }, 'cannot listen');
    return false;
  }
}

/**
 * A process that stood still past its watches' timeouts (SIGSTOP, a frozen VM) resumes with a view that may be far
 * behind: the view lapses, and plans nothing, until every source has listed again. The files are read anew anyway.
 */
function lapseOnPause(source: ClusterShortcutSource | FileShortcutSource, store: SnapshotStore, logger: Logger): PauseDetector {
  return new PauseDetector({
    onPause: (pausedMs) => {
      logger.warn({ pausedMs: Math.round(pausedMs) }, 'the process was paused: the view plans no write until its sources have listed again');
      if (source instanceof FileShortcutSource) return;
      store.lapse(() => source.relist());
    },
  });
}

/** In-flight reviews finish, within SHUTDOWN_DEADLINE_MS. */
async function drainReviews(webhook: WebhookApp, drain: ReturnType<typeof trackDrain>, logger: Logger): Promise<void> {
  drain.closeSessions();
  const drained = await Promise.race([
    Promise.all([webhook.close(), drain.idle()]).then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), SHUTDOWN_DEADLINE_MS).unref()),
  ]);
  if (!drained) logger.warn({ deadlineMs: SHUTDOWN_DEADLINE_MS }, 'reviews still open at the shutdown deadline, stopping anyway');
}

/**
 * `serve` until stopped. What it leaves on disk (the development pair's keys) is removed on every way out: a return,
 * after a clean stop or a failed start, in the `finally`; a process.exit or an uncaught error on the way, by the
 * process's `exit` event.
 */
export async function serve(config: ServeConfig, env: NodeJS.ProcessEnv): Promise<number> {
  const cleanups: (() => void)[] = [];
  const cleanUp = (): void => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  };
  process.once('exit', cleanUp);
  try {
    return await serveUntilStopped(config, env, cleanups);
  } finally {
    cleanUp();
    process.off('exit', cleanUp);
  }
}

async function serveUntilStopped(config: ServeConfig, env: NodeJS.ProcessEnv, cleanups: (() => void)[]): Promise<number> {
  const logger = createLogger(config.logLevel);
  const build = buildInfo();
  const metrics = new Metrics({ build, processMetrics: true });
  const store = new SnapshotStore(Date.now, { restoreOnly: config.restoreOnly });
  if (config.restoreOnly) {
    logger.warn('restore-only: the view is read but nothing is moved; the controller puts back every address whose record the view vouches for');
  }
  metrics.trackView(store);
  store.subscribe((snapshot) => metrics.setPairStates(localStates(snapshot, config.clusterId)));
  store.subscribe((snapshot) => metrics.hubIps.set(hubIpCount(snapshot.hubs) ?? 0));
  store.subscribe((snapshot) => setHubReaders(metrics, snapshot));
  logViewChanges(store, logger, config.clusterId);

  let webhook: WebhookApp | undefined;
  const serving = await servingTls(config, logger, cleanups, (material) => webhook?.server.setSecureContext(secureContextOptions(material)));
  if (serving === undefined) return EXIT_INVALID_INPUT;
  const { certificates, tls } = serving;

  let clusters;
  try {
    clusters = await kubeConfigsFor(config, env, logger);
  } catch (error) {
    logger.fatal({ err: errorMessage(error) }, 'cannot load the kubeconfig');
    certificates.stop();
    return EXIT_INVALID_INPUT;
  }
  const { local, hubs } = clusters;
  if (config.source === 'cluster' && local === undefined && hubs.length === 0) {
    logger.fatal('no cluster to watch shortcuts on: run in a pod, give --kubeconfig (or KUBECONFIG) or --shortcuts-kubeconfig, or --shortcuts FILE for file mode');
    certificates.stop();
    return EXIT_INVALID_INPUT;
  }
  const { source, failing, sourceName, sources } = await viewSourceFor(config, clusters, { store, metrics, logger });
  let controller: ControllerManager | undefined;
  // What the webhook answers, for the controller's healing watch to pass the stored copies over (one per process).
  let answered: AnsweredVersions | undefined;
  if (!config.controller) logger.info('controller off (--no-controller)');
  else if (local === undefined) logger.info('controller off: no local cluster API to reconcile stored slices with (file mode without --kubeconfig)');
  else {
    const { ControllerManager } = await import('../controller/manager.ts');
    // Noted only while this replica leads: another replica's healing watch reads its own webhook's answers.
    answered = new AnsweredVersions({ wanted: () => controller?.leads() ?? false });
    controller = new ControllerManager({
      config: local, store, logger, metrics, clusterId: config.clusterId, namespace: podNamespace(env), podName: env.POD_NAME,
      resyncIntervalMs: config.resyncIntervalMs, maxConcurrentPatches: config.maxConcurrentPatches, maxPatchesPerSecond: config.maxPatchesPerSecond,
      watchTimeoutSeconds: config.watchTimeoutSeconds, answered,
    });
  }

  let sendAway = () => {};
  const readiness = new Readiness({
    view: store, logger, failing, sourceName, staleViewAfterMs: config.staleViewAfterMs,
    certificateLoaded: () => certificates.current() !== undefined, onStale: () => sendAway(),
  });
  webhook = buildWebhookApp({ view: store, metrics, logger, clusterId: config.clusterId, tls, budget: config.reviewBudget, answered });
  const drain = trackDrain(webhook);
  sendAway = () => drain.goAway();
  readiness.start();
  const ops = buildOpsApp({ view: store, metrics, logger, readiness: () => readiness.reasons(), clusterId: config.clusterId, sources, debugPairs: config.debugPairs });
  const stopSignal = signalled((signal) => logger.debug({ signal }, 'already shutting down'));
  if (!(await listenBoth({ ops, webhook }, config, logger))) {
    readiness.shuttingDown();
    await Promise.allSettled([webhook.close(), ops.close()]);
    certificates.stop();
    stopSignal.release();
    return EXIT_INVALID_INPUT;
  }
  local?.watch();
  for (const hub of hubs) hub.config.watch();
  const pauses = lapseOnPause(source, store, logger);
  pauses.start();
  await source.start();
  controller?.start();
  logger.info({
    version: build.version, commit: build.commit ?? null, webhook: webhook.addresses(), ops: ops.addresses(), source: config.source,
    clusterId: config.clusterId ?? null,
  }, 'serving');

  const signal = await stopSignal.first;
  readiness.shuttingDown();
  logger.info({ signal }, 'shutting down: finishing in-flight reviews');
  await drainReviews(webhook, drain, logger);
  pauses.stop();
  await controller?.stop();
  await source.stop();
  local?.close();
  for (const hub of hubs) hub.config.close();
  certificates.stop();
  await ops.close();
  logger.info('stopped');
  stopSignal.release();
  // Whatever still holds the event loop (a client's idle keep-alive socket, a slow API call) must not keep a
  // terminating pod alive until SIGKILL; an unref'd timer only fires if something else is still there.
  setTimeout(() => process.exit(EXIT_OK), 1000).unref();
  return EXIT_OK;
}
