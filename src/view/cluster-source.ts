// The shortcut view from the Kubernetes API: ForeignClusterConnections (local cluster, or the hub through
// --shortcuts-kubeconfig) and, where the leaf has them, Liqo Connections as a tunnel liveness cross-check.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { decodeFcc, FCC_GROUP, FCC_PLURAL, FCC_VERSION, type ForeignClusterConnection } from '../core/fcc.ts';
import { isObject } from '../core/json.ts';
import { CONNECTION_PLURAL, tunnelStates } from '../core/leaf-views.ts';
import type { BackoffOptions } from '../util/backoff.ts';
import type { Logger } from '../log.ts';
import { readListPage } from '../kube/client.ts';
import { ListWatch } from './list-watch.ts';
import type { SnapshotStore } from './shortcut-view.ts';


export interface ClusterSourceOptions {
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** Where the FCCs are (the local cluster, or the hub). */
  readonly shortcutsConfig: KubeConfig;
  readonly namespace: string | undefined;
  /** The local cluster, for Liqo Connections; undefined when there is none to ask. */
  readonly localConfig: KubeConfig | undefined;
  readonly onRestart?: () => void;
  readonly backoff?: BackoffOptions;
  readonly watchTimeoutSeconds?: number;
}

export class ClusterShortcutSource {
  private readonly fccs: ListWatch;
  private readonly connections: ListWatch | undefined;
  private connectionsMissing = false;
  /** By object: a watch event replaces one object, so only that one is decoded again, not all 10,000. */
  private readonly decodedFccs = new WeakMap<object, ForeignClusterConnection>();

  constructor(options: ClusterSourceOptions) {
    const { namespace, logger } = options;
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
    this.fccs = new ListWatch({
      ...common,
      name: FCC_PLURAL,
      config: options.shortcutsConfig,
      watchPath: fccPath,
      list: async () => readListPage(namespace === undefined
        ? await fccApi.listClusterCustomObject({ group: FCC_GROUP, version: FCC_VERSION, plural: FCC_PLURAL })
        : await fccApi.listNamespacedCustomObject({ group: FCC_GROUP, version: FCC_VERSION, namespace, plural: FCC_PLURAL })),
      onChange: (objects) => options.store.publishFccs(this.decoded(objects)),
      onFresh: () => options.store.confirm(),
    });
    if (options.localConfig !== undefined) {
      const connectionApi = options.localConfig.makeApiClient(CustomObjectsApi);
      this.connections = new ListWatch({
        ...common,
        name: CONNECTION_PLURAL,
        config: options.localConfig,
        watchPath: `/apis/${FCC_GROUP}/${FCC_VERSION}/${CONNECTION_PLURAL}`,
        list: async () => readListPage(await connectionApi.listClusterCustomObject({ group: FCC_GROUP, version: FCC_VERSION, plural: CONNECTION_PLURAL })),
        onChange: (objects) => {
          this.connectionsMissing = false;
          options.store.publishTunnels(tunnelStates(objects.values()));
        },
        onListError: (status) => {
          if ((status === 404 || status === 403) && !this.connectionsMissing) {
            this.connectionsMissing = true;
            logger.info({ status }, 'no Liqo Connections to read on this cluster: FCCs alone decide whether a shortcut is up');
            options.store.publishTunnels(new Map());
          }
        },
        // An absent CRD is the normal case on some leaves: look again now and then, not in a tight loop.
        backoff: options.backoff ?? { initialMs: 5000, maxMs: 300_000 },
      });
    } else {
      logger.info('no local cluster API: FCCs alone decide whether a shortcut is up');
    }
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

  /**
   * Connections first (one attempt, however it ends), then FCCs: the first snapshot already knows which tunnels
   * are down, so a shortcut is never used for a moment at start-up only to be dropped a second later.
   */
  async start(): Promise<void> {
    if (this.connections !== undefined) {
      this.connections.start();
      await this.connections.attempted();
    }
    this.fccs.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.fccs.stop(), this.connections?.stop()]);
  }
}
