// Everything the data-path test and `npm run demo -- datapath` run, in one place: two real control planes (hub
// cluster1, leaf cluster2) with Liqo's CRDs and the world's Liqo objects (world.ts), Liqo's own writer on the leaf,
// the data path (topology.ts) generated from the Configurations and IPs read back from those API servers plus
// cluster3's own, the real kube-proxy in cluster2's node namespace, two ClusterIP Services on the leaf whose
// reflected EndpointSlices the writer stores (one per path of the product), Liqo's connection check in the two
// gateways of the direct network (cluster2's writes its Connection to cluster3, the heartbeat), and on demand the
// product itself: `shortcut-webhook serve` on the leaf, registered with the shipped MutatingWebhookConfiguration.
import { join } from 'node:path';
import { makeCerts } from '../../../support/certs.ts';
import { freePortOutsideEphemeralRange } from '../../../support/free-port.ts';
import { startServer, type RunningServer } from '../../../support/process.ts';
import { killServer } from '../../../support/serve-cluster.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { startCanary, type Canary } from '../canary.ts';
import { startControlPlane, type ControlPlane } from '../control-plane.ts';
import type { KubeClient, KubeObject } from '../kube-client.ts';
import {
  createConfiguration, createConnection, createHubIp, createWithStatus, foreignCluster, installCrds, liqoCrds, setStatus, shadowSlice,
  startLiqoWriter, type LiqoWriter,
} from '../liqo.ts';
import { pathOf, shippedManifests } from '../objects.ts';
import { buildControlPlane } from '../../controlplane/build.ts';
import { buildKubeProxy, buildWireguard } from '../../datapath-tools/build.ts';
import { buildLiqoWriter } from '../../liqo-writer/build.ts';
import { startConncheck, type ConncheckTiming } from './conncheck.ts';
import { startKubeProxy, type KubeProxy } from './kube-proxy.ts';
import { DataPath, type LinkCounts } from './topology.ts';
import {
  CLIENT_LEAF, CLIENT_POD, HUB, LINKS, SERVER_LEAF, SERVER_POD, WEB, dataPathSpec, fcc, hubConfigurationSpecs, hubIpSpecs,
  leafConfigurationSpecs,
} from './world.ts';
import { connectionPath, CONVERGE, FCC_PATH, HUB_WRITER, SHADOWS, SLICES } from '../world-paths.ts';

const CONNECTION_PATH = connectionPath(SERVER_LEAF);
/** The port the server pod echoes UDP on, and the Services' port. */
export const ECHO_PORT = 8080;
const SERVICE_PORT = 80;

/**
 * The direct gateway's connection check at a quarter of Liqo's defaults (ping every 2 s, Error after 5 lost,
 * ping-update-status-interval 10 s): a PING every 500 ms, `Error` 2.5 s after the last PONG, the heartbeat rewritten
 * every 1 to 2 s (the timestamp is stored to the second). The product's --connection-stale-after keeps the
 * default's ratio to the heartbeat (30 s against 10 to 12 s): 5 s.
 */
export const CONNCHECK: ConncheckTiming = { pingMs: 500, lossThreshold: 5, updateStatusMs: 1000 };
export const CONNECTION_STALE_AFTER_MS = 5000;

/** The leaf's Connection to cluster3 as stored: its value and its heartbeat (the latency's timestamp). */
export interface ConnectionStatus {
  readonly value: string | undefined;
  readonly heartbeat: string | undefined;
}

/**
 * The product's three paths, each a Service of the leaf reaching web-0 of cluster3: `fcc` reflected by a hub that
 * sends hub-view addresses, `stock` by a stock Liqo hub (its IPAM's allocation), `direct` by a hub using Liqo's own
 * direct connections (a hub Service annotated liqo.io/use-direct-connections: the hub's view of web-0, listed in the
 * ShadowEndpointSlice's direct-connections data).
 */
export type PathName = 'fcc' | 'stock' | 'direct';
export const PATH_NAMES: readonly PathName[] = ['fcc', 'stock', 'direct'];

export interface ServiceInfo {
  readonly name: string;
  readonly clusterIP: string;
  /** The shadow's name. */
  readonly shadow: string;
  /** What Liqo alone stores for web-0: none where its writer fails on the shadow (the direct path, hub remapped). */
  readonly withoutProduct: string | undefined;
  /** What is stored with the product while the direct network is down: an address through the hub. */
  readonly throughHub: string;
}

export interface BatchResult {
  readonly sent: number;
  readonly answered: number;
  /** Packets each link carried during the batch (into and out of its tunnel). */
  readonly counts: LinkCounts;
}

export interface Timings {
  controlPlanesMs: number;
  dataPathMs: number;
  kubeProxyMs: number;
}

export class Stack {
  product: RunningServer | undefined;
  readonly timings: Timings = { controlPlanesMs: 0, dataPathMs: 0, kubeProxyMs: 0 };

  private constructor(
    readonly hub: ControlPlane,
    readonly leaf: ControlPlane,
    readonly path: DataPath,
    readonly kubeProxy: KubeProxy,
    readonly writer: LiqoWriter,
    readonly canary: Canary,
    readonly services: Record<PathName, ServiceInfo>,
    private readonly certs: ReturnType<typeof makeCerts>,
  ) {}

  get admin(): KubeClient {
    return this.leaf.admin;
  }

  /** Starts it all; on any failure, stops what was started and throws. */
  static async start(log: (line: string) => void = () => {}): Promise<Stack> {
    const stops: (() => Promise<void>)[] = [];
    const stopAll = async () => {
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
    };
    try {
      // The builds first (minutes on a cold Go cache, nothing once cached), before anything runs that could time out.
      for (const built of [buildWireguard(), buildKubeProxy(), buildLiqoWriter(), buildControlPlane()]) {
        if (built.built) log(`built ${built.dir} in ${built.seconds} s`);
      }
      const began = Date.now();
      const [hub, leaf] = await Promise.all([startControlPlane(), startControlPlane()]);
      stops.push(() => hub.stop(), () => leaf.stop());
      const controlPlanesMs = Date.now() - began;
      log(`control planes ready in ${controlPlanesMs} ms`);
      await seedClusters(hub, leaf);

      // The data path from the Liqo objects as stored: what the product reads is what the gateways are made of.
      const list = async (client: KubeClient, path: string) => (await client.get<{ items: KubeObject[] }>(path)).items;
      const pathBegan = Date.now();
      const path = await DataPath.start(dataPathSpec({
        leafConfigurations: await list(leaf.admin, '/apis/networking.liqo.io/v1beta1/configurations'),
        hubConfigurations: await list(hub.admin, '/apis/networking.liqo.io/v1beta1/configurations'),
        hubIps: await list(hub.admin, '/apis/ipam.liqo.io/v1alpha1/ips'),
        fcc: (await list(hub.admin, FCC_PATH))[0] ?? fcc(),
      }));
      stops.push(() => path.destroy());
      const dataPathMs = Date.now() - pathBegan;
      log(`data path laid out in ${dataPathMs} ms (wireguard-go ${path.wireguardBuild.built ? `built in ${path.wireguardBuild.seconds} s` : 'cached'})`);
      await path.echoServer(SERVER_LEAF, SERVER_POD.name, ECHO_PORT);

      // Everything on disk goes in the run's folder, which the run (or the next one, after a crash) removes.
      const writer = startLiqoWriter(leaf.adminKubeconfig, join(path.lab.dir, 'liqo-writer.log'));
      stops.push(() => writer.stop());
      const services = await createServices(leaf.admin);
      const proxyBegan = Date.now();
      const kubeProxy = await startKubeProxy({
        lab: path.lab, ns: path.nodeNs(CLIENT_LEAF), kubeconfig: leaf.adminKubeconfig, apiServerUrl: leaf.url,
        clusterCidr: '10.60.0.0/16', nodeName: `${CLIENT_LEAF}-node`, nodeIp: path.nodeIp(CLIENT_LEAF), admin: leaf.admin,
      });
      // Liqo's connection check on the direct network: cluster3's gateway answers, cluster2's pings and writes.
      const direct = path.tunnelAddresses(CLIENT_LEAF, SERVER_LEAF);
      await startConncheck({ lab: path.lab, ns: path.gatewayNs(SERVER_LEAF, CLIENT_LEAF), address: direct.peer, peerAddress: direct.own, peer: CLIENT_LEAF, timing: CONNCHECK });
      await startConncheck({
        lab: path.lab, ns: path.gatewayNs(CLIENT_LEAF, SERVER_LEAF), address: direct.own, peerAddress: direct.peer, peer: SERVER_LEAF, timing: CONNCHECK,
        writer: { path: CONNECTION_PATH, socket: kubeProxy.apiSocket, kubeconfig: leaf.adminKubeconfig },
      });
      const certs = makeCerts(join(path.lab.dir, 'certs'));
      const canary = await startCanary(leaf.admin, makeCerts(join(path.lab.dir, 'canary-certs'), 'canary'));
      stops.push(() => canary.close());
      const stack = new Stack(hub, leaf, path, kubeProxy, writer, canary, services, certs);
      stack.timings.controlPlanesMs = controlPlanesMs;
      stack.timings.dataPathMs = dataPathMs;
      await waitFor(async () => (await stack.connection()).heartbeat !== undefined, { ...CONVERGE, description: 'the direct gateway\'s first heartbeat' });
      for (const name of PATH_NAMES) {
        const stored = services[name].withoutProduct;
        if (stored === undefined) continue;
        await stack.untilStored(name, stored);
        await stack.untilProxied(name, stored);
      }
      // Liqo's writer fails on the direct path's shadow (the address is in the hub's view of cluster3, not in
      // cluster3's declared CIDR) and stores nothing: the Service has no endpoint.
      // controller-runtime's line: "Reconciler error" err="... no remote pod CIDR contains address ..." ShadowEndpointSlice="demo/<name>"
      await waitFor(() => writer.log().split('\n').some((line) => line.includes('"Reconciler error"') && line.includes(`ShadowEndpointSlice="demo/${services.direct.shadow}"`)),
        { ...CONVERGE, description: 'Liqo\'s writer failing on the direct-connections shadow' }).catch((error: unknown) => {
        throw new Error(`${String(error)}\nliqo-writer's log ends:\n${writer.log().split('\n').slice(-15).join('\n')}`, { cause: error });
      });
      stack.timings.kubeProxyMs = Date.now() - proxyBegan;
      log(`kube-proxy (${kubeProxy.built ? `built in ${kubeProxy.buildSeconds} s` : 'cached'}) serves the Services ${stack.timings.kubeProxyMs} ms after its start`);
      return stack;
    } catch (error) {
      await stopAll();
      throw error;
    }
  }

  /** The addresses of the Service's reflected slice as stored. */
  async storedAddresses(name: PathName): Promise<string[]> {
    const slices = await this.admin.get<{ items: KubeObject[] }>(`${SLICES}?labelSelector=kubernetes.io%2Fservice-name%3D${this.services[name].name}`);
    return slices.items.flatMap((slice) => ((slice.endpoints ?? []) as { addresses: string[] }[]).flatMap((endpoint) => endpoint.addresses));
  }

  async untilStored(name: PathName, address: string): Promise<void> {
    await waitFor(async () => JSON.stringify(await this.storedAddresses(name)) === JSON.stringify([address]),
      { ...CONVERGE, description: `the ${name} slice stored as [${address}]` });
  }

  /** Waits until the Service's reflected slice holds `address`, and kube-proxy sends the Service there. */
  async untilServed(name: PathName, address: string): Promise<void> {
    await this.untilStored(name, address);
    await this.untilProxied(name, address);
  }

  /** Waits until kube-proxy's service chain for the Service sends to `address` and to nothing else. */
  async untilProxied(name: PathName, address: string): Promise<void> {
    const service = this.services[name].name;
    await waitFor(async () => {
      const table = await this.kubeProxy.table();
      // One endpoint: `dnat to IP:PORT` in the service chain itself; more: a numgen vmap to endpoint chains named
      // `endpoint-...__IP/PORT`. The chain ends at the first line that is only a closing brace.
      const chain = new RegExp(`chain service-[^ ]*-demo/${service}/udp/udp \\{\\n([\\s\\S]*?)\\n\\t\\}`).exec(table)?.[1] ?? '';
      const endpoints = [...chain.matchAll(/(?:dnat to |__)([0-9.]+)[:/]\d+/g)].map((match) => match[1]);
      return JSON.stringify(endpoints) === JSON.stringify([address]);
    }, { ...CONVERGE, description: `kube-proxy sends ${service} to ${address}` }).catch((error: unknown) => {
      throw new Error(`${String(error)}\nkube-proxy's log ends:\n${this.kubeProxy.logTail()}`, { cause: error });
    });
  }

  /** `count` UDP probes from the client pod to the Service's ClusterIP, one after the other. */
  async probeBatch(name: PathName, count: number, timeoutMs = 1000): Promise<BatchResult> {
    const before = await this.path.counts();
    let answered = 0;
    for (let i = 0; i < count; i++) {
      const result = await this.path.probeOnce({ cluster: CLIENT_LEAF, pod: CLIENT_POD.name }, { host: this.services[name].clusterIP, port: SERVICE_PORT }, timeoutMs);
      if (result.ok) answered++;
    }
    const after = await this.path.counts();
    const counts = Object.fromEntries(Object.keys(after).map((link) => [link, (after[link] ?? 0) - (before[link] ?? 0)]));
    return { sent: count, answered, counts };
  }

  /** One probe without counting (probes may overlap): answered within `timeoutMs` or not. */
  probeOnce(name: PathName, timeoutMs = 1000): Promise<{ ok: boolean; ms: number }> {
    return this.path.probeOnce({ cluster: CLIENT_LEAF, pod: CLIENT_POD.name }, { host: this.services[name].clusterIP, port: SERVICE_PORT }, timeoutMs);
  }

  /**
   * Probes each Service on its own, side by side, one probe after the other until one is answered or `boundMs` has
   * passed since `since`: per Service, the ms from `since` to its first answer (none: no entry). `between` runs before
   * each probe (what a caller reads while the path switches).
   */
  async firstReplies(since: number, options: { boundMs: number; probeMs: number; between?: () => Promise<void> }): Promise<Map<PathName, number>> {
    const replies = new Map<PathName, number>();
    await Promise.all(PATH_NAMES.map(async (name) => {
      while (Date.now() - since < options.boundMs) {
        await options.between?.();
        if ((await this.probeOnce(name, options.probeMs)).ok) {
          replies.set(name, Date.now() - since);
          return;
        }
      }
    }));
    return replies;
  }

  /** One probe, with the links it crossed. */
  probe(name: PathName, timeoutMs = 1000) {
    return this.path.probe({ cluster: CLIENT_LEAF, pod: CLIENT_POD.name }, { host: this.services[name].clusterIP, port: SERVICE_PORT }, timeoutMs);
  }

  /**
   * Registers the product with the shipped MutatingWebhookConfiguration, then starts it on the leaf, in the order the
   * chart installs it: the API server calls the webhook before the controller's first pass writes. Started the other
   * way round, a pass could patch a slice before the API server called the webhook, and Liqo's writer, putting the
   * shadow's content back, would store it unrewritten with nothing left to write it again (no resync here).
   */
  async startProduct(): Promise<RunningServer> {
    const port = await freePortOutsideEphemeralRange();
    const configuration = shippedManifests().find((object) => object.kind === 'MutatingWebhookConfiguration');
    if (configuration === undefined) throw new Error('manifests/ has no MutatingWebhookConfiguration');
    // Each webhook (EndpointSlices; ShadowEndpointSlices) at its own path, on this process instead of the Service.
    for (const hook of configuration.webhooks as { clientConfig: { service?: { path?: string } } & Record<string, unknown> }[]) {
      const path = hook.clientConfig.service?.path;
      if (path === undefined) throw new Error('a shipped webhook without a service path');
      hook.clientConfig = { url: `https://127.0.0.1:${port}${path}`, caBundle: this.certs.ca.toString('base64') };
    }
    await this.admin.ok('POST', pathOf(configuration), configuration);
    await this.canary.configurationsSeen();
    const product = await startServer(['--port', String(port), '--tls-cert', this.certs.certFile, '--tls-key', this.certs.keyFile,
      '--kubeconfig', this.leaf.adminKubeconfig, '--shortcuts-kubeconfig', this.hub.adminKubeconfig, '--resync-interval', '0',
      '--connection-stale-after', `${CONNECTION_STALE_AFTER_MS / 1000}s`],
    { POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'webhook-0' });
    this.product = product;
    await waitFor(async () => (await fetch(`http://127.0.0.1:${product.opsPort}/readyz`)).status === 200, { ...CONVERGE, description: 'the webhook is ready' });
    return product;
  }

  /** The leaf's Connection to cluster3, as its gateway last wrote it. */
  async connection(): Promise<ConnectionStatus> {
    const object = await this.admin.get<{ status?: { value?: string; latency?: { timestamp?: string | null } } }>(CONNECTION_PATH);
    return { value: object.status?.value, heartbeat: object.status?.latency?.timestamp ?? undefined };
  }

  /** Waits until the gateway has written the Connection `value` (its connection check: the tunnel's state). */
  async untilConnection(value: 'Connected' | 'Error'): Promise<void> {
    await waitFor(async () => (await this.connection()).value === value, { ...CONVERGE, intervalMs: 50, description: `the Connection to ${SERVER_LEAF} written ${value}` });
  }

  /** Freezes (SIGSTOP) or resumes (SIGCONT) cluster2's gateway for the direct network: its tunnel and its heartbeat. */
  setDirectGateway(state: 'frozen' | 'running'): Promise<number[]> {
    return this.path.setGateway(CLIENT_LEAF, SERVER_LEAF, state);
  }

  async stop(): Promise<void> {
    await killServer(this.product).catch(() => undefined);
    await this.writer.stop().catch(() => undefined);
    await this.canary.close().catch(() => undefined);
    await this.path.destroy();
    await Promise.all([this.leaf.stop(), this.hub.stop()]);
  }
}

async function seedClusters(hub: ControlPlane, leaf: ControlPlane): Promise<void> {
  const namespace = (client: KubeClient, name: string) => client.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const name of ['demo', 'shortcut-webhook', `liqo-tenant-${HUB}`, `liqo-tenant-${SERVER_LEAF}`]) await namespace(leaf.admin, name);
  for (const name of ['demo', 'liqo', `liqo-tenant-${CLIENT_LEAF}`, `liqo-tenant-${SERVER_LEAF}`]) await namespace(hub.admin, name);
  const crds = liqoCrds();
  const fccCrd = shippedManifests().filter((object) => object.kind === 'CustomResourceDefinition');
  await Promise.all([installCrds(leaf.admin, crds), installCrds(hub.admin, [...crds, ...fccCrd])]);
  // The leaf: the hub's ForeignCluster (Liqo's writer maps and readies endpoints only with its networking up), its
  // Configurations, its Connection to cluster3.
  const hubCluster = foreignCluster(HUB);
  await createWithStatus(leaf.admin, hubCluster.object, hubCluster.status);
  for (const spec of leafConfigurationSpecs()) await createConfiguration(leaf.admin, spec);
  await createConnection(leaf.admin, SERVER_LEAF, 'Connected');
  // The hub: its Configurations, the IP it allocated to web-0, and the FCC (status through its subresource).
  for (const spec of hubConfigurationSpecs()) await createConfiguration(hub.admin, spec);
  for (const spec of hubIpSpecs()) await createHubIp(hub.admin, spec);
  const shortcut = fcc() as KubeObject;
  const created = await hub.admin.ok('POST', FCC_PATH, shortcut);
  await setStatus(hub.admin, created, shortcut.status as Record<string, unknown>);
}

/**
 * Three selectorless ClusterIP Services on the leaf, as Liqo makes the twins of offloaded Services, and their
 * ShadowEndpointSlices as the hub's virtual kubelet writes them: `web-fcc` from a hub reflecting hub-view addresses
 * (10.63.0.151), `web-stock` from a stock hub (its IPAM allocation 10.70.0.12), `web-direct` from a hub Service with
 * Liqo's direct connections (10.63.0.151 untranslated, listed for cluster3). Liqo's writer stores the slices.
 */
async function createServices(admin: KubeClient): Promise<Record<PathName, ServiceInfo>> {
  const make = async (name: string, hubWrites: string, stored: Omit<ServiceInfo, 'name' | 'clusterIP' | 'shadow'>, directFor?: string): Promise<ServiceInfo> => {
    const service = await admin.ok<{ spec: { clusterIP: string } }>('POST', '/api/v1/namespaces/demo/services', {
      apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'demo' },
      spec: { ports: [{ name: 'udp', port: SERVICE_PORT, targetPort: ECHO_PORT, protocol: 'UDP' }] },
    });
    const shadowName = `${name}-abcde`;
    const shadow = shadowSlice({
      name: shadowName, addresses: [[hubWrites]], pods: [SERVER_POD.name], ports: [{ name: 'udp', port: ECHO_PORT, protocol: 'UDP' }],
      // pkg/virtualKubelet/reflection/exposition/endpointslice.go: the addresses of pods on other leaves, by cluster.
      ...(directFor === undefined ? {} : { annotations: { 'liqo.io/direct-connections-data': JSON.stringify({ clusterAddresses: { [directFor]: [hubWrites] } }) } }),
    });
    (shadow.metadata as { labels: Record<string, string> }).labels['kubernetes.io/service-name'] = name;
    await admin.apply(`${SHADOWS}/${shadowName}`, shadow, HUB_WRITER, true);
    return { name, clusterIP: service.spec.clusterIP, shadow: shadowName, ...stored };
  };
  return {
    fcc: await make('web-fcc', WEB.hubView, { withoutProduct: WEB.hubView, throughHub: WEB.hubView }),
    stock: await make('web-stock', WEB.hubAllocated, { withoutProduct: WEB.leafViewOfAllocated, throughHub: WEB.leafViewOfAllocated }),
    direct: await make('web-direct', WEB.hubView, { withoutProduct: undefined, throughHub: WEB.leafViewOfAllocated }, SERVER_LEAF),
  };
}

export { LINKS, WEB };
