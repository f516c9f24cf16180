// The shortcut view from the Kubernetes API: ForeignClusterConnections (local cluster, or each hub through its
// reader, --shortcuts-kubeconfig [ID=]FILE) and, where the leaf has them, its Liqo Connections (a tunnel liveness
// cross-check), Configurations (its own views, for local-view safety and the stock path) and ForeignClusters (which
// peers are its hubs); with hub readers, each hub's IPAM objects too (hub-source.ts), as that hub's part of the view.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { FCC_GROUP, FCC_PLURAL, FCC_VERSION, type ForeignClusterConnection } from '../core/fcc.ts';
import { consumersOf, FOREIGN_CLUSTER_GROUP, FOREIGN_CLUSTER_PLURAL, FOREIGN_CLUSTER_VERSION } from '../core/hubs.ts';
import { isObject } from '../core/json.ts';
import { CONFIGURATION_PLURAL, CONNECTION_PLURAL, decodeConfiguration, type LiqoConfiguration } from '../core/leaf-views.ts';
import { OPTIONAL_RESOURCE_BACKOFF, type BackoffOptions } from '../util/backoff.ts';
import type { Logger } from '../log.ts';
import type { TimeSource } from '../util/time-source.ts';
import { readListPage } from '../kube/client.ts';
import { earliestFailure, keepObject, ListWatch, type SourceFailure } from './list-watch.ts';
import { ConnectionHeartbeats } from './connection-heartbeats.ts';
import { fccWatch } from './fcc-watch.ts';
import { HubIpamSource } from './hub-source.ts';
import type { SnapshotStore } from './shortcut-view.ts';

export interface ClusterSourceOptions {
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** Where the FCCs are read where no hub reader is given (the local cluster, or a mirror of the hub's FCCs). */
  readonly shortcutsConfig: KubeConfig;
  readonly namespace: string | undefined;
  /** The local cluster, for Liqo Connections, Configurations and ForeignClusters; undefined when there is none to ask. */
  readonly localConfig: KubeConfig | undefined;
  /** The one unbound hub reader (`--shortcuts-kubeconfig FILE`): its FCCs and IPAM objects. Shorthand for `hubs`. */
  readonly hubConfig?: KubeConfig | undefined;
  /** One reader per hub, each bound to its hub's cluster ID or unbound: where every FCC and IPAM object is read. */
  readonly hubs?: readonly HubReaderConfig[];
  /** The hub readers list and watch only in these namespaces (`--hub-namespace`); empty or undefined: all. */
  readonly hubNamespaces?: readonly string[];
  /** With several hub readers, one failing this long makes its hub's objects wait (`hub-not-read`); 0 or undefined: never. */
  readonly hubAwayAfterMs?: number;
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
  readonly now?: () => number;
}

export interface HubReaderConfig {
  /** The hub's cluster ID; undefined for the unbound reader. */
  readonly id: string | undefined;
  readonly config: KubeConfig;
}

/** A Liqo resource of the leaf that may not be served there (no Liqo networking, or no right to read it). */
interface LeafResource {
  readonly plural: string;
  readonly group: string;
  readonly version: string;
  /** Undefined when the resource is missing: the FCCs alone decide. */
  readonly publish: (objects: ReadonlyMap<string, unknown> | undefined) => void;
  /** Said once when the resource is not there to read. */
  readonly missing: string;
}

/** One hub reader: the FCCs and the IPAM objects of one hub, published as that hub's part of the view. */
interface HubReader {
  readonly id: string | undefined;
  readonly fccs: readonly ListWatch<unknown>[];
  readonly ipam: HubIpamSource;
  listed: boolean;
}

/** How often a hub reader's failures are checked against the away bound. */
const AWAY_CHECK_MS = 1000;

export class ClusterShortcutSource {
  /** The leaf's FCC watch, where no hub reader is given. */
  private readonly fccs: ListWatch<unknown> | undefined;
  private readonly leafWatches: readonly ListWatch<unknown>[];
  private readonly hubReaders: readonly HubReader[];
  private awayTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  private readonly startupPatienceMs: number;
  private readonly heartbeats: ConnectionHeartbeats;

  constructor(private readonly options: ClusterSourceOptions) {
    this.startupPatienceMs = options.startupPatienceMs ?? 10_000;
    this.now = options.now ?? Date.now;
    const { namespace, logger, store } = options;
    const common = {
      logger,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
      ...(options.onRestart === undefined ? {} : { onRestart: options.onRestart }),
    };
    const readers = options.hubs ?? (options.hubConfig === undefined ? [] : [{ id: undefined, config: options.hubConfig }]);
    const hubNamespaces = options.hubNamespaces ?? [];
    // FCCs are read in --shortcuts-namespace where given, else in the hub's named namespaces, else everywhere.
    const fccNamespaces = namespace !== undefined ? [namespace] : hubNamespaces.length > 0 ? hubNamespaces : [undefined];
    this.fccs = readers.length > 0 ? undefined : fccWatch({
      ...common, config: options.shortcutsConfig, namespace, name: FCC_PLURAL,
      publish: (fccs) => store.publishFccs(fccs), onFresh: () => store.confirm(),
    });
    const allListed = () => this.hubReaders.every((each) => each.listed);
    this.hubReaders = readers.map(({ id, config }) => {
      const byNamespace = new Map<string | undefined, readonly ForeignClusterConnection[]>();
      const reader: HubReader = {
        id,
        listed: false,
        fccs: fccNamespaces.map((fccNamespace) => fccWatch({
          ...common, config, namespace: fccNamespace, name: `${id ?? 'hub'} ${FCC_PLURAL}`,
          publish: (fccs) => {
            byNamespace.set(fccNamespace, fccs);
            if (byNamespace.size < fccNamespaces.length) return;
            reader.listed = true;
            // Synced once every reader has listed its FCCs, as with one reader: confirmed before the publish, so
            // listeners of that publish see the view synced.
            if (allListed()) store.confirm();
            store.publishHub(id, { fccs: [...byNamespace.values()].flat(), away: undefined });
          },
          onFresh: () => { if (allListed()) store.confirm(); },
        })),
        ipam: new HubIpamSource({ ...common, store, config, hub: id, namespaces: hubNamespaces }),
      };
      // Known from the start, so that no other reader stands for this hub's objects while it lists.
      store.publishHub(id, { away: 'its ForeignClusterConnections are not listed yet' });
      return reader;
    });
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
        plural: CONNECTION_PLURAL, group: FCC_GROUP, version: FCC_VERSION,
        publish: (objects) => this.heartbeats.observe(objects ?? new Map()),
        missing: 'no Liqo Connections to read on this cluster: FCCs alone decide whether a shortcut is up',
      },
      {
        plural: CONFIGURATION_PLURAL, group: FCC_GROUP, version: FCC_VERSION,
        publish: (objects) => store.publishConfigurations(this.configurations(objects ?? new Map())),
        missing: 'no Liqo Configurations to read on this cluster: no local-overlap check and no hub-external reason',
      },
      // Which peers are this leaf's consumers (its hubs): asked only where hub readers are given.
      ...(readers.length === 0 ? [] : [{
        plural: FOREIGN_CLUSTER_PLURAL, group: FOREIGN_CLUSTER_GROUP, version: FOREIGN_CLUSTER_VERSION,
        publish: (objects: ReadonlyMap<string, unknown> | undefined) => store.publish({ consumers: objects === undefined ? undefined : consumersOf(objects.values()) }),
        missing: 'no Liqo ForeignClusters to read on this cluster: which hubs this leaf has is not checked, and an unbound hub reader stands for any hub no bound one reads',
      }]),
    ];
    const api = localConfig.makeApiClient(CustomObjectsApi);
    this.leafWatches = resources.map((resource) => {
      let missing = false;
      return new ListWatch({
        ...common,
        name: resource.plural,
        config: localConfig,
        watchPath: `/apis/${resource.group}/${resource.version}/${resource.plural}`,
        keep: keepObject,
        list: async () => readListPage(await api.listClusterCustomObject({ group: resource.group, version: resource.version, plural: resource.plural })),
        onChange: (objects) => {
          missing = false;
          resource.publish(objects);
        },
        onListError: (status) => {
          if (status !== 404 && status !== 403) return 'unexpected';
          if (!missing) {
            missing = true;
            logger.info({ status, resource: resource.plural }, resource.missing);
            resource.publish(undefined);
          }
          return 'expected';
        },
        // An absent CRD is the normal case on some leaves: look again now and then, not in a tight loop.
        backoff: options.backoff ?? OPTIONAL_RESOURCE_BACKOFF,
      });
    });
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
    for (const reader of this.hubReaders) reader.ipam.start();
    // A first list that failed by chance (a 500) is tried again after its backoff: wait for that too, a while, so the
    // first view does not lack the hub's IPAM or the leaf's tunnels and flip stored slices twice. A source down for
    // longer is the stale-view bound's business, not a reason to keep the FCCs waiting.
    const optional = [...this.leafWatches, ...this.hubReaders.map((reader) => reader.ipam)];
    await Promise.all(optional.map((part) => part.attempted()));
    let patience: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(optional.map((part) => part.settled())),
      new Promise<void>((resolve) => { patience = setTimeout(resolve, this.startupPatienceMs); }),
    ]);
    clearTimeout(patience);
    this.fccs?.start();
    for (const reader of this.hubReaders) for (const watch of reader.fccs) watch.start();
    const awayAfterMs = this.options.hubAwayAfterMs ?? 0;
    // With one reader, its outage is the view's (readiness); with several, each hub's objects wait for their own.
    if (awayAfterMs > 0 && this.hubReaders.length > 1) {
      this.awayTimer = setInterval(() => this.markAway(awayAfterMs), AWAY_CHECK_MS);
      this.awayTimer.unref();
    }
  }

  /** A hub reader failing past the bound: its hub's objects wait (hub-not-read) until it reads again. */
  private markAway(awayAfterMs: number): void {
    const now = this.now();
    const { store, logger } = this.options;
    for (const reader of this.hubReaders) {
      if (!reader.listed) continue;
      const failure = this.readerFailing(reader);
      const away = failure !== undefined && now - failure.since >= awayAfterMs
        ? `every read of ${failure.source ?? 'it'} has failed since ${new Date(failure.since).toISOString()} (${failure.problem})` : undefined;
      if (away === store.current().hubs.find((part) => part.id === reader.id)?.away) continue;
      if (away === undefined) logger.info({ hub: reader.id ?? null }, 'hub reader reads again: its hub\'s objects are decided again');
      else logger.error({ hub: reader.id ?? null, why: away }, 'hub reader away: its hub\'s objects are left alone until it reads again, every other hub\'s are decided as before');
      store.publishHub(reader.id, { away });
    }
  }

  private readerFailing(reader: HubReader): SourceFailure | undefined {
    const fccs = earliestFailure(reader.fccs.map((watch) => ({ source: reader.id === undefined ? 'the ForeignClusterConnections' : `${reader.id}'s ForeignClusterConnections`, failure: watch.failing() })));
    return fccs ?? reader.ipam.failing();
  }

  /**
   * Whether the view as a whole has been failing, since when and why: the leaf's Liqo resources, the FCCs read on
   * the leaf, or, with hub readers, every one of them at once (one hub away makes only its own objects wait). A
   * resource absent or forbidden (404, 403) is optional and never counts; an API that keeps failing does, as the view
   * no longer follows what it reads there.
   */
  failing(): SourceFailure | undefined {
    return this.failingOn('shortcuts') ?? this.failingOn('local');
  }

  /**
   * The same, for what is read on one side: the FCCs and the hubs' IPAM (every reader failing: the one that failed
   * last is said), or the local cluster's Liqo resources.
   */
  failingOn(cluster: 'shortcuts' | 'local'): SourceFailure | undefined {
    if (cluster === 'local') return earliestFailure(this.leafWatches.map((watch) => ({ source: `the leaf's ${watch.name}`, failure: watch.failing() })));
    if (this.fccs !== undefined) {
      const fccs = this.fccs.failing();
      return fccs === undefined ? undefined : { ...fccs, source: 'the ForeignClusterConnections' };
    }
    let latest: SourceFailure | undefined;
    for (const reader of this.hubReaders) {
      const failure = this.readerFailing(reader);
      if (failure === undefined) return undefined;
      if (latest === undefined || failure.since > latest.since) latest = failure;
    }
    return latest;
  }

  /** What one hub reader's reads say: failing since when, or undefined. */
  failingOnHub(id: string | undefined): SourceFailure | undefined {
    const reader = this.hubReaders.find((each) => each.id === id);
    return reader === undefined ? undefined : this.readerFailing(reader);
  }

  /**
   * Every part lists again: after a pause of the process its watches may have ended or be replaying history, and
   * only a list says what is there now (the store is lapsed meanwhile: see SnapshotStore.lapse).
   */
  async relist(): Promise<void> {
    await Promise.all([this.fccs?.relist(), ...this.leafWatches.map((watch) => watch.relist()),
      ...this.hubReaders.flatMap((reader) => [...reader.fccs.map((watch) => watch.relist()), reader.ipam.relist()])]);
  }

  async stop(): Promise<void> {
    this.heartbeats.stop();
    clearInterval(this.awayTimer);
    await Promise.all([this.fccs?.stop(), ...this.leafWatches.map((watch) => watch.stop()),
      ...this.hubReaders.flatMap((reader) => [...reader.fccs.map((watch) => watch.stop()), reader.ipam.stop()])]);
  }
}
