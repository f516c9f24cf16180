// The hub's IPAM objects from its API (`--shortcuts-kubeconfig`): the IPs of offloaded pods and the hub's
// Configurations, for the stock-Liqo path. Both are optional: a hub without Liqo's IPAM API, or a reader without
// the right to list it, leaves `hub-external` in force and is said once, never counted as a failing view.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { FCC_GROUP, FCC_VERSION } from '../core/fcc.ts';
import { decodeHubIp, indexHubIps, IP_PLURAL, IPAM_GROUP, IPAM_VERSION, POD_NAME_LABEL, type HubIp } from '../core/hub-ipam.ts';
import type { HubIpam } from '../core/hub-resolution.ts';
import { isObject } from '../core/json.ts';
import { CONFIGURATION_PLURAL, decodeConfiguration, type LiqoConfiguration } from '../core/leaf-views.ts';
import { readListPage } from '../kube/client.ts';
import type { Logger } from '../log.ts';
import { OPTIONAL_RESOURCE_BACKOFF, type BackoffOptions } from '../util/backoff.ts';
import { earliestFailure, ListWatch, type SourceFailure } from './list-watch.ts';
import type { SnapshotStore } from './shortcut-view.ts';

export interface HubSourceOptions {
  readonly store: SnapshotStore;
  readonly logger: Logger;
  readonly config: KubeConfig;
  readonly onRestart?: () => void;
  readonly backoff?: BackoffOptions;
  readonly watchTimeoutSeconds?: number;
}

const IP_PAGE = 500;

/** One of the two resources: its objects once listed, or why they cannot be read. */
type Part<T> = { readonly state: 'pending' } | { readonly state: 'missing'; readonly why: string } | { readonly state: 'read'; readonly value: T };

export class HubIpamSource {
  private readonly watches: readonly (ListWatch<HubIp> | ListWatch<LiqoConfiguration>)[];
  private ips: Part<ReadonlyMap<string, HubIp>> = { state: 'pending' };
  private configurations: Part<readonly LiqoConfiguration[]> = { state: 'pending' };

  constructor(private readonly options: HubSourceOptions) {
    const { config, logger } = options;
    const api = config.makeApiClient(CustomObjectsApi);
    const common = {
      logger,
      config,
      ...(options.onRestart === undefined ? {} : { onRestart: options.onRestart }),
      ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
      // An absent CRD or a refused list is a state of the hub, not an outage: look again now and then.
      backoff: options.backoff ?? OPTIONAL_RESOURCE_BACKOFF,
    };
    const missing = (resource: string, set: (why: string) => void) => (status: number | undefined): 'expected' | 'unexpected' => {
      if (status !== 404 && status !== 403) return 'unexpected';
      const why = status === 404 ? `the hub serves no ${resource}` : `the hub refuses to list ${resource} (403)`;
      set(why);
      return 'expected';
    };
    const ipsResource = `${IP_PLURAL}.${IPAM_GROUP}`;
    const configurationsResource = `${CONFIGURATION_PLURAL}.${FCC_GROUP}`;
    this.watches = [
      new ListWatch<HubIp>({
        ...common,
        name: `hub ${ipsResource}`,
        watchPath: `/apis/${IPAM_GROUP}/${IPAM_VERSION}/${IP_PLURAL}`,
        labelSelector: POD_NAME_LABEL,
        // In pages: a hub with 50,000 offloaded pods answers some 50 MB of IPs, of which a few fields are kept.
        list: async (token) => readListPage(await api.listClusterCustomObject({
          group: IPAM_GROUP, version: IPAM_VERSION, plural: IP_PLURAL, labelSelector: POD_NAME_LABEL, limit: IP_PAGE,
          ...(token === undefined ? {} : { _continue: token }),
        })),
        keep: (object, key) => (isObject(object) ? decodeHubIp(object, key) : undefined),
        onChange: (objects) => this.update({ ips: { state: 'read', value: objects } }),
        onListError: missing(ipsResource, (why) => this.update({ ips: { state: 'missing', why } })),
      }),
      new ListWatch<LiqoConfiguration>({
        ...common,
        name: `hub ${configurationsResource}`,
        watchPath: `/apis/${FCC_GROUP}/${FCC_VERSION}/${CONFIGURATION_PLURAL}`,
        list: async () => readListPage(await api.listClusterCustomObject({ group: FCC_GROUP, version: FCC_VERSION, plural: CONFIGURATION_PLURAL })),
        keep: (object, key) => (isObject(object) ? decodeConfiguration(object, key) : undefined),
        onChange: (objects) => this.update({ configurations: { state: 'read', value: [...objects.values()] } }),
        onListError: missing(configurationsResource, (why) => this.update({ configurations: { state: 'missing', why } })),
      }),
    ];
  }

  private update(parts: { ips?: Part<ReadonlyMap<string, HubIp>>; configurations?: Part<readonly LiqoConfiguration[]> }): void {
    const before = this.hubIpam();
    if (parts.ips !== undefined) this.ips = parts.ips;
    if (parts.configurations !== undefined) this.configurations = parts.configurations;
    const after = this.hubIpam();
    if (after === undefined) return;
    if (!after.known && (before === undefined || before.known || before.why !== after.why)) {
      this.options.logger.info({ why: after.why }, 'the hub\'s IPAM objects cannot be read: addresses it allocated stay hub-external');
    }
    if (after.known && (before === undefined || !before.known)) {
      this.options.logger.info({ ips: after.ips.size, configurations: after.configurations.length }, 'reading the hub\'s IPAM objects: the stock-Liqo path is on');
    }
    this.options.store.publish({ hub: after });
  }

  /** Undefined until both resources were tried once. */
  private hubIpam(): HubIpam | undefined {
    const { ips, configurations } = this;
    if (ips.state === 'pending' || configurations.state === 'pending') return undefined;
    if (ips.state === 'missing') return { known: false, why: ips.why };
    if (configurations.state === 'missing') return { known: false, why: configurations.why };
    return { known: true, ips: indexHubIps(ips.value.values()), configurations: configurations.value };
  }

  start(): void {
    for (const watch of this.watches) watch.start();
  }

  /** Since when a list or watch of the hub's IPs or Configurations keeps failing unexpectedly (not a 404 or 403). */
  failing(): SourceFailure | undefined {
    return earliestFailure(this.watches.map((watch) => ({ source: `the ${watch.name}`, failure: watch.failing() })));
  }

  /** Resolves after each resource was listed, or failed, once. */
  async attempted(): Promise<void> {
    await Promise.all(this.watches.map((watch) => watch.attempted()));
  }

  /** Resolves once each resource was listed, or found absent or forbidden. */
  async settled(): Promise<void> {
    await Promise.all(this.watches.map((watch) => watch.settled()));
  }

  /** Both resources listed again (ListWatch.relist). */
  async relist(): Promise<void> {
    await Promise.all(this.watches.map((watch) => watch.relist()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map((watch) => watch.stop()));
  }
}

