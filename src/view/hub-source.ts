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
  /** The hub's cluster ID the reader is bound to; undefined for the unbound reader. */
  readonly hub?: string | undefined;
  /** List and watch only in these namespaces (`--hub-namespace`); empty or undefined: every namespace. */
  readonly namespaces?: readonly string[];
  readonly logger: Logger;
  readonly config: KubeConfig;
  readonly onRestart?: () => void;
  readonly backoff?: BackoffOptions;
  readonly watchTimeoutSeconds?: number;
}

const IP_PAGE = 500;

/** One of the two resources: its objects once listed, or why they cannot be read. */
type Part<T> = { readonly state: 'pending' } | { readonly state: 'missing'; readonly why: string } | { readonly state: 'read'; readonly value: T };

/** One resource read in every namespace, or in each named one: its objects once every watch listed, or why not. */
class NamespacedParts<T> {
  private readonly parts: Part<ReadonlyMap<string, T>>[];

  constructor(count: number) {
    this.parts = Array.from({ length: count }, () => ({ state: 'pending' }));
  }

  set(index: number, part: Part<ReadonlyMap<string, T>>): void {
    this.parts[index] = part;
  }

  /** Pending until every namespace was tried; missing where any is (a namespace refused is a hub half read). */
  combined(): Part<ReadonlyMap<string, T>> {
    const missing = this.parts.find((part) => part.state === 'missing');
    if (missing !== undefined) return missing;
    if (this.parts.some((part) => part.state === 'pending')) return { state: 'pending' };
    if (this.parts.length === 1 && this.parts[0] !== undefined) return this.parts[0];
    const all = new Map<string, T>();
    for (const part of this.parts) if (part.state === 'read') for (const [key, value] of part.value) all.set(key, value);
    return { state: 'read', value: all };
  }
}

export class HubIpamSource {
  private readonly watches: readonly (ListWatch<HubIp> | ListWatch<LiqoConfiguration>)[];
  private readonly ipParts: NamespacedParts<HubIp>;
  private readonly configurationParts: NamespacedParts<LiqoConfiguration>;
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
    // A hub reader scoped to named namespaces (a namespaced Role) lists in each; otherwise once, cluster-wide.
    const namespaces: readonly (string | undefined)[] = options.namespaces !== undefined && options.namespaces.length > 0 ? options.namespaces : [undefined];
    const path = (group: string, version: string, plural: string, namespace: string | undefined) => (namespace === undefined
      ? `/apis/${group}/${version}/${plural}` : `/apis/${group}/${version}/namespaces/${encodeURIComponent(namespace)}/${plural}`);
    const where = (namespace: string | undefined) => (namespace === undefined ? '' : ` in ${namespace}`);
    this.ipParts = new NamespacedParts(namespaces.length);
    this.configurationParts = new NamespacedParts(namespaces.length);
    const setIps = (index: number, part: Part<ReadonlyMap<string, HubIp>>) => {
      this.ipParts.set(index, part);
      this.update({ ips: this.ipParts.combined() });
    };
    const setConfigurations = (index: number, part: Part<ReadonlyMap<string, LiqoConfiguration>>) => {
      this.configurationParts.set(index, part);
      const combined = this.configurationParts.combined();
      this.update({ configurations: combined.state === 'read' ? { state: 'read', value: [...combined.value.values()] } : combined });
    };
    this.watches = namespaces.flatMap((namespace, index) => [
      new ListWatch<HubIp>({
        ...common,
        name: `hub ${ipsResource}${where(namespace)}`,
        watchPath: path(IPAM_GROUP, IPAM_VERSION, IP_PLURAL, namespace),
        labelSelector: POD_NAME_LABEL,
        // In pages: a hub with 50,000 offloaded pods answers some 50 MB of IPs, of which a few fields are kept.
        list: async (token) => {
          const page = { group: IPAM_GROUP, version: IPAM_VERSION, plural: IP_PLURAL, labelSelector: POD_NAME_LABEL, limit: IP_PAGE,
            ...(token === undefined ? {} : { _continue: token }) };
          return readListPage(namespace === undefined ? await api.listClusterCustomObject(page) : await api.listNamespacedCustomObject({ ...page, namespace }));
        },
        keep: (object, key) => (isObject(object) ? decodeHubIp(object, key) : undefined),
        onChange: (objects) => setIps(index, { state: 'read', value: objects }),
        onListError: missing(`${ipsResource}${where(namespace)}`, (why) => setIps(index, { state: 'missing', why })),
      }),
      new ListWatch<LiqoConfiguration>({
        ...common,
        name: `hub ${configurationsResource}${where(namespace)}`,
        watchPath: path(FCC_GROUP, FCC_VERSION, CONFIGURATION_PLURAL, namespace),
        list: async () => {
          const request = { group: FCC_GROUP, version: FCC_VERSION, plural: CONFIGURATION_PLURAL };
          return readListPage(namespace === undefined ? await api.listClusterCustomObject(request) : await api.listNamespacedCustomObject({ ...request, namespace }));
        },
        keep: (object, key) => (isObject(object) ? decodeConfiguration(object, key) : undefined),
        onChange: (objects) => setConfigurations(index, { state: 'read', value: objects }),
        onListError: missing(`${configurationsResource}${where(namespace)}`, (why) => setConfigurations(index, { state: 'missing', why })),
      }),
    ]);
  }

  private update(parts: { ips?: Part<ReadonlyMap<string, HubIp>>; configurations?: Part<readonly LiqoConfiguration[]> }): void {
    const before = this.hubIpam();
    if (parts.ips !== undefined) this.ips = parts.ips;
    if (parts.configurations !== undefined) this.configurations = parts.configurations;
    const after = this.hubIpam();
    if (after === undefined) return;
    if (!after.known && (before === undefined || before.known || before.why !== after.why)) {
      this.options.logger.info({ hub: this.options.hub ?? null, why: after.why }, 'the hub\'s IPAM objects cannot be read: addresses it allocated stay hub-external');
    }
    if (after.known && (before === undefined || !before.known)) {
      this.options.logger.info({ hub: this.options.hub ?? null, ips: after.ips.size, configurations: after.configurations.length }, 'reading the hub\'s IPAM objects: the stock-Liqo path is on');
    }
    this.options.store.publishHub(this.options.hub, { ipam: after });
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

