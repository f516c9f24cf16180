// The shortcut view from the Kubernetes API: ForeignClusterConnections (local cluster, or the hub through
// --shortcuts-kubeconfig) and, where the leaf has them, its Liqo Connections (a tunnel liveness cross-check) and
// Configurations (its own views, for local-view safety and the stock path); with --shortcuts-kubeconfig, the hub's
// IPAM objects too (hub-source.ts).
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { decodeFcc, FCC_GROUP, FCC_PLURAL, FCC_VERSION, type ForeignClusterConnection } from '../core/fcc.ts';
import { isObject } from '../core/json.ts';
import { CONFIGURATION_PLURAL, CONNECTION_PLURAL, decodeConfiguration, type LiqoConfiguration } from '../core/leaf-views.ts';
import { OPTIONAL_RESOURCE_BACKOFF, type BackoffOptions } from '../util/backoff.ts';
import type { Logger } from '../log.ts';
import type { TimeSource } from '../util/time-source.ts';
import { readListPage } from '../kube/client.ts';
import { earliestFailure, keepObject, ListWatch, type SourceFailure } from './list-watch.ts';
import { ConnectionHeartbeats } from './connection-heartbeats.ts';
import { HubIpamSource } from './hub-source.ts';
import type { SnapshotStore } from './shortcut-view.ts';

export interface ClusterSourceOptions {
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** Where the FCCs are (the local cluster, or the hub). */
  readonly shortcutsConfig: KubeConfig;
  readonly namespace: string | undefined;
  /** The local cluster, for Liqo Connections and Configurations; undefined when there is none to ask. */
  readonly localConfig: KubeConfig | undefined;
  /** The hub, for its IPAM objects (the stock-Liqo path); undefined when the FCCs are read on the leaf itself. */
  readonly hubConfig?: KubeConfig | undefined;
  readonly onRestart?: () => void;
  readonly backoff?: BackoffOptions;
  readonly watchTimeoutSeconds?: number;
  /** How long the FCCs wait at start for the optional parts' first lists to settle (default 10 s). */
  readonly startupPatienceMs?: number;
  /**
   * A Connected Connection whose heartbeat is silent this long is down (`connection-stale`); 0 or absent turns it off.
   * serve and the live commands pass --connection-stale-after (config.ts holds its default).
   */
  readonly connectionStaleAfterMs?: number;
  /** The heartbeats' monotonic clock and timers, and the wall clock (tests move both by hand). */
  readonly heartbeatTime?: { readonly monotonic: TimeSource; readonly wallClock: () => number };
}

/** A Liqo resource of the leaf that may not be served there (no Liqo networking, or no right to read it). */
interface LeafResource {
  readonly plural: string;
  /** An empty map when the resource is missing: the FCCs alone decide. */
  readonly publish: (objects: ReadonlyMap<string, unknown>) => void;
  /** Said once when the resource is not there to read. */
  readonly missing: string;
}

export class ClusterShortcutSource {
  private readonly fccs: ListWatch<unknown>;
  private readonly leafWatches: readonly ListWatch<unknown>[];
  /** The hub's IPAM objects, read where the FCCs are read on the hub (`--shortcuts-kubeconfig`). */
  private readonly hub: HubIpamSource | undefined;
  /** By object: a watch event replaces one object, so only that one is decoded again, not all 10,000. */
  private readonly decodedFccs = new WeakMap<object, ForeignClusterConnection>();

  private readonly startupPatienceMs: number;
  private readonly heartbeats: ConnectionHeartbeats;

  constructor(options: ClusterSourceOptions) {
    this.startupPatienceMs = options.startupPatienceMs ?? 10_000;
    const { namespace, logger, store } = options;
    const fccApi = options.shortcutsConfig.makeApiClient(CustomObjectsApi);
    const fccPath = namespace === undefined
      ? `/apis/${FCC_GROUP}/${FCC_VERSION}/${FCC_PLURAL}`
      : `/apis/${FCC_GROUP}/${FCC_VERSION}/namespaces/${encodeURIComponent(namespace)}/${FCC_PLURAL}`;
    const common = {
      logger,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
      ...(options.onRestart === undefined ? {} : { onRestart: options.onRestart }),
    };
    let noFccCrd = false;
    this.fccs = new ListWatch({
      ...common,
      name: FCC_PLURAL,
      config: options.shortcutsConfig,
      watchPath: fccPath,
      list: async () => readListPage(namespace === undefined
        ? await fccApi.listClusterCustomObject({ group: FCC_GROUP, version: FCC_VERSION, plural: FCC_PLURAL })
        : await fccApi.listNamespacedCustomObject({ group: FCC_GROUP, version: FCC_VERSION, namespace, plural: FCC_PLURAL })),
      keep: keepObject,
      onChange: (objects) => {
        noFccCrd = false;
        store.publishFccs(this.decoded(objects));
      },
      onFresh: () => store.confirm(),
      // A stock Liqo hub has no FCC CRD until a shortcut operator is installed: no FCCs, which is a state of the view
      // (the stock path needs none), not a failing source. Looked for again at the backoff's pace. A 403 stays a
      // failure: the hub reader's rules grant FCCs, so a refusal is a deployment to fix.
      onListError: (status) => {
        if (status !== 404) return 'unexpected';
        if (!noFccCrd) {
          noFccCrd = true;
          logger.info({ status, resource: FCC_PLURAL }, 'no ForeignClusterConnections to read on this cluster (their CRD is not installed): only the stock-Liqo path can rewrite');
          store.publishFccs([]);
        }
        return 'expected';
      },
    });
    this.hub = options.hubConfig === undefined ? undefined : new HubIpamSource({ ...common, store, config: options.hubConfig });
    this.heartbeats = new ConnectionHeartbeats({
      staleAfterMs: options.connectionStaleAfterMs ?? 0, logger, publish: (tunnels) => store.publishTunnels(tunnels),
      ...(options.heartbeatTime === undefined ? {} : { time: options.heartbeatTime.monotonic, wallClock: options.heartbeatTime.wallClock }),
    });
    const { localConfig } = options;
    if (localConfig === undefined) {
      logger.info('no local cluster API: FCCs alone decide whether a shortcut is up, and no local-overlap is checked');
      this.leafWatches = [];
      return;
    }
    const resources: readonly LeafResource[] = [
      {
        plural: CONNECTION_PLURAL,
        publish: (objects) => this.heartbeats.observe(objects),
        missing: 'no Liqo Connections to read on this cluster: FCCs alone decide whether a shortcut is up',
      },
      {
        plural: CONFIGURATION_PLURAL,
        publish: (objects) => store.publishConfigurations(this.configurations(objects)),
        missing: 'no Liqo Configurations to read on this cluster: no local-overlap check and no hub-external reason',
      },
    ];
    const api = localConfig.makeApiClient(CustomObjectsApi);
    this.leafWatches = resources.map((resource) => {
      let missing = false;
      return new ListWatch({
        ...common,
        name: resource.plural,
        config: localConfig,
        watchPath: `/apis/${FCC_GROUP}/${FCC_VERSION}/${resource.plural}`,
        keep: keepObject,
        list: async () => readListPage(await api.listClusterCustomObject({ group: FCC_GROUP, version: FCC_VERSION, plural: resource.plural })),
        onChange: (objects) => {
          missing = false;
          resource.publish(objects);
        },
        onListError: (status) => {
          if (status !== 404 && status !== 403) return 'unexpected';
          if (!missing) {
            missing = true;
            logger.info({ status, resource: resource.plural }, resource.missing);
            resource.publish(new Map());
          }
          return 'expected';
        },
        // An absent CRD is the normal case on some leaves: look again now and then, not in a tight loop.
        backoff: options.backoff ?? OPTIONAL_RESOURCE_BACKOFF,
      });
    });
  }

  private decoded(objects: ReadonlyMap<string, unknown>): ForeignClusterConnection[] {
    const fccs: ForeignClusterConnection[] = [];
    for (const [key, object] of objects) {
      if (!isObject(object)) continue;
      let fcc = this.decodedFccs.get(object);
      if (fcc === undefined) {
        fcc = decodeFcc(object, key);
        this.decodedFccs.set(object, fcc);
      }
      fccs.push(fcc);
    }
    return fccs;
  }

  /** A leaf has one Configuration per peer: a handful, decoded again whole on each change. */
  private configurations(objects: ReadonlyMap<string, unknown>): LiqoConfiguration[] {
    const configurations: LiqoConfiguration[] = [];
    for (const [key, object] of objects) if (isObject(object)) configurations.push(decodeConfiguration(object, key));
    return configurations;
  }

  /**
   * The leaf's Connections and Configurations first (one attempt each, however it ends), then FCCs: the first
   * snapshot already knows which tunnels are down and which sources overlap the leaf's views, so a shortcut is
   * never used for a moment at start-up only to be dropped a second later.
   */
  async start(): Promise<void> {
    for (const watch of this.leafWatches) watch.start();
    this.hub?.start();
    // A first list that failed by chance (a 500) is tried again after its backoff: wait for that too, a while, so the
    // first view does not lack the hub's IPAM or the leaf's tunnels and flip stored slices twice. A source down for
    // longer is the stale-view bound's business, not a reason to keep the FCCs waiting.
    const optional = [...this.leafWatches, ...(this.hub === undefined ? [] : [this.hub])];
    await Promise.all(optional.map((part) => part.attempted()));
    let patience: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(optional.map((part) => part.settled())),
      new Promise<void>((resolve) => { patience = setTimeout(resolve, this.startupPatienceMs); }),
    ]);
    clearTimeout(patience);
    this.fccs.start();
  }

  /**
   * Whether a part of the view has been failing, since when and why: the FCCs, the leaf's Liqo resources, the hub's
   * IPAM. A resource absent or forbidden (404, 403) is optional and never counts; an API that keeps failing does, as
   * the view no longer follows what it reads there.
   */
  failing(): SourceFailure | undefined {
    return this.failingOn('shortcuts') ?? this.failingOn('local');
  }

  /**
   * The same, for what is read on one cluster: the FCCs (said first when they fail: the one part no view does
   * without) and the hub's IPAM, or the local cluster's Liqo resources.
   */
  failingOn(cluster: 'shortcuts' | 'local'): SourceFailure | undefined {
    if (cluster === 'local') return earliestFailure(this.leafWatches.map((watch) => ({ source: `the leaf's ${watch.name}`, failure: watch.failing() })));
    const fccs = this.fccs.failing();
    return fccs === undefined ? this.hub?.failing() : { ...fccs, source: 'the ForeignClusterConnections' };
  }

  /**
   * Every part lists again: after a pause of the process its watches may have ended or be replaying history, and
   * only a list says what is there now (the store is lapsed meanwhile: see SnapshotStore.lapse).
   */
  async relist(): Promise<void> {
    await Promise.all([this.fccs.relist(), ...this.leafWatches.map((watch) => watch.relist()), this.hub?.relist()]);
  }

  async stop(): Promise<void> {
    this.heartbeats.stop();
    await Promise.all([this.fccs.stop(), ...this.leafWatches.map((watch) => watch.stop()), this.hub?.stop()]);
  }
}
