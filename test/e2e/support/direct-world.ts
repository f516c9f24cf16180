// The e2e world of Liqo's own direct connections, on two real control planes (direct-connections.test.ts and
// status.test.ts): every cluster declares 10.200.0.0/16 for its pods, as in Liqo's examples, so the hub remapped both
// leaves: cluster3 (a direct network from the leaf, `liqoctl network connect`) and cluster4 (none).
//
//   cluster           hub cluster1 sees its pods at    the leaf cluster2 sees its pods at   hub IPAM (10.70/16, seen at 10.202/16)
//   cluster1 (hub)    10.200/16                        10.201/16
//   cluster3          10.72/16                         10.203/16 (direct network)           web-1 10.72.0.11 -> 10.70.0.4,
//                                                                                           api-1 10.72.0.21 -> 10.70.0.6
//   cluster4          10.73/16                         -                                    web-2 10.73.0.12 -> 10.70.0.5
//
// And the webhook as the shipped manifests install it, with the shipped ServiceAccount's rights on the leaf and the
// hub reader's on the hub.
import { makeCerts } from '../../support/certs.ts';
import { freePortOutsideEphemeralRange } from '../../support/free-port.ts';
import { startServer, type RunningServer } from '../../support/process.ts';
import { waitFor } from '../../support/wait-for.ts';
import type { ControlPlane } from './control-plane.ts';
import { hubNode, hubReflectorCrds, hubService, offloadNamespaces } from './hub.ts';
import type { KubeClient, KubeObject } from './kube-client.ts';
import { createConfiguration, createConnection, createHubIp, createWithStatus, foreignCluster, installCrds, liqoCrds, shadowSlice } from './liqo.ts';
import { pathOf, shippedManifests } from './objects.ts';
import { CONVERGE } from './world-paths.ts';

/** A hub IPAM record of an offloaded pod: the pod's name, its address as the hub sees it, the address allocated for it. */
export interface HubIpSeed {
  readonly pod: string;
  readonly ip: string;
  readonly allocated: string;
}

/** The IPAM records of the world above. */
export const DIRECT_WORLD_HUB_IPS: readonly HubIpSeed[] = [
  { pod: 'web-1', ip: '10.72.0.11', allocated: '10.70.0.4' },
  { pod: 'web-2', ip: '10.73.0.12', allocated: '10.70.0.5' },
  { pod: 'api-1', ip: '10.72.0.21', allocated: '10.70.0.6' },
];

/** What a suite adds to the world: the builder seeds the same hub and leaf for every suite, these on top. */
export interface DirectWorldOptions {
  /** Namespaces on the leaf besides demo and the tenant namespaces of cluster1 and cluster3. */
  readonly leafNamespaces?: readonly string[];
  /** CRDs on the hub besides Liqo's (the reflector's NamespaceMap and the virtual kubelet's). */
  readonly hubCrds?: readonly KubeObject[];
  /** The hub's IPAM records, in place of DIRECT_WORLD_HUB_IPS. */
  readonly hubIps?: readonly HubIpSeed[];
  /** The hub's external CIDR in the leaf's Configuration for it (`spec.remote.cidr.external`), where a suite needs it. */
  readonly hubExternal?: string;
}

/**
 * The one world of the e2e suites on Liqo's direct connections (healing, hub-reflector, direct-connections, status):
 * namespaces, Liqo's CRDs on both, the hub's Configurations and IPs, the leaf's ForeignCluster, Configurations and
 * Connection. Each suite adds its own on top (nodes, Services, the NamespaceMap, writers).
 */
export async function seedDirectWorld(admin: KubeClient, hubAdmin: KubeClient, options: DirectWorldOptions = {}): Promise<void> {
  const crds = liqoCrds();
  for (const name of ['demo', ...(options.leafNamespaces ?? []), 'liqo-tenant-cluster1', 'liqo-tenant-cluster3']) {
    await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  for (const name of ['demo', 'liqo-tenant-cluster2', 'liqo-tenant-cluster3', 'liqo-tenant-cluster4']) {
    await hubAdmin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  await Promise.all([installCrds(admin, crds), installCrds(hubAdmin, [...crds, ...(options.hubCrds ?? [])])]);

  // The hub: its views of both leaves (remapped: all clusters declare 10.200/16) and the IPAM records of the
  // offloaded pods on them.
  await createConfiguration(hubAdmin, { peer: 'cluster2', localPod: '10.200.0.0/16', remotePod: '10.200.0.0/16', remotePodView: '10.71.0.0/16', remoteExternalView: '10.81.0.0/16' });
  await createConfiguration(hubAdmin, { peer: 'cluster3', localPod: '10.200.0.0/16', remotePod: '10.200.0.0/16', remotePodView: '10.72.0.0/16', remoteExternalView: '10.82.0.0/16' });
  await createConfiguration(hubAdmin, { peer: 'cluster4', localPod: '10.200.0.0/16', remotePod: '10.200.0.0/16', remotePodView: '10.73.0.0/16', remoteExternalView: '10.83.0.0/16' });
  for (const ip of options.hubIps ?? DIRECT_WORLD_HUB_IPS) await createHubIp(hubAdmin, ip);
  // The leaf: the hub's ForeignCluster, its Configurations for the hub and for cluster3 (its direct network), and
  // its Connection to cluster3. None for cluster4.
  const hubCluster = foreignCluster('cluster1');
  await createWithStatus(admin, hubCluster.object, hubCluster.status);
  await createConfiguration(admin, { peer: 'cluster1', localPod: '10.200.0.0/16', remotePod: '10.200.0.0/16', remotePodView: '10.201.0.0/16',
    ...(options.hubExternal === undefined ? {} : { remoteExternal: options.hubExternal }), remoteExternalView: '10.202.0.0/16' });
  await createConfiguration(admin, { peer: 'cluster3', localPod: '10.200.0.0/16', remotePod: '10.200.0.0/16', remotePodView: '10.203.0.0/16', remoteExternalView: '10.204.0.0/16' });
  await createConnection(admin, 'cluster3', 'Connected');
}

/** The hub's own node, where its own pods run, in the world Liqo's reflector reflects (seedReflectedWorld). */
export const HUB_NODE = 'hub-worker-1';

/**
 * The world of Liqo's own reflection (hub-reflector.test.ts, forged-records.test.ts): the direct world with db-0 where
 * it has api-1, the reflector's CRDs on the hub and the hub's external CIDR (10.70/16) in the leaf's Configuration for
 * it; on top, the hub's own node and the virtual nodes of the three leaves, the NamespaceMap offloading demo to the
 * leaf, and the hub's Services stock and web (direct connections). The Services exist before the reflector starts:
 * its informers list them before it handles any slice (the manager marks a namespace ready once every informer
 * synced), so that it reads the direct-connections annotation from its first Handle on. A slice handled before its
 * Service is cached is reflected as a plain one.
 */
export async function seedReflectedWorld(admin: KubeClient, hubAdmin: KubeClient): Promise<void> {
  await seedDirectWorld(admin, hubAdmin, {
    hubCrds: hubReflectorCrds(),
    hubIps: DIRECT_WORLD_HUB_IPS.map((ip) => (ip.pod === 'api-1' ? { ...ip, pod: 'db-0' } : ip)),
    hubExternal: '10.70.0.0/16',
  });
  await hubAdmin.ok('POST', '/api/v1/nodes', hubNode(HUB_NODE));
  for (const cluster of ['cluster2', 'cluster3', 'cluster4']) await hubAdmin.ok('POST', '/api/v1/nodes', hubNode(`liqo-${cluster}`, cluster));
  await offloadNamespaces(hubAdmin, 'cluster2', ['demo']);
  await hubAdmin.ok('POST', '/api/v1/namespaces/demo/services', hubService('stock'));
  await hubAdmin.ok('POST', '/api/v1/namespaces/demo/services', hubService('web', { directConnections: true }));
}

/** Service web's shadow as the hub reflects it into the leaf: its own pod, one on cluster3, one on cluster4, both listed. */
export function webShadow(): KubeObject {
  return shadowSlice({
    name: 'web', addresses: [['10.200.0.10'], ['10.72.0.11'], ['10.73.0.12']], pods: ['web-0', 'web-1', 'web-2'],
    annotations: { 'liqo.io/direct-connections-data': JSON.stringify({ clusterAddresses: { cluster3: ['10.72.0.11'], cluster4: ['10.73.0.12'] } }) },
  });
}

export interface ShippedWebhookOptions {
  readonly leaf: ControlPlane;
  readonly hub: ControlPlane;
  /** Folders the caller removes when done (the serving certificate's is added). */
  readonly made: string[];
  /** Runs once the manifests are applied, before the webhook starts (e.g. wait until the API server uses them). */
  readonly afterManifests?: () => Promise<void>;
  /** More flags for `serve` (e.g. a short --connection-stale-after). */
  readonly serveArgs?: readonly string[];
  /** Puts something in front of `serve`'s port (e.g. a balancer that can refuse) and gives the port the API server calls. */
  readonly front?: (port: number) => Promise<number>;
}

/** The shipped manifests applied; `start` runs `serve` (again, once the last one is stopped) on the port they call. */
export interface InstalledWebhook {
  start(): Promise<RunningServer>;
}

/** The shipped manifests applied (the webhook configuration pointed at a local port), and `serve` run there until ready. */
export async function startShippedWebhook(options: ShippedWebhookOptions): Promise<RunningServer> {
  return (await installShippedWebhook(options)).start();
}

/** The shipped manifests applied, the webhook configuration pointed at a local port; `serve` not yet started. */
export async function installShippedWebhook(options: ShippedWebhookOptions): Promise<InstalledWebhook> {
  const { leaf, hub } = options;
  const port = await freePortOutsideEphemeralRange();
  const called = options.front === undefined ? port : await options.front(port);
  const serving = makeCerts();
  options.made.push(serving.dir);
  for (const object of shippedManifests()) {
    if (object.kind === 'CustomResourceDefinition') continue;
    if (object.kind === 'MutatingWebhookConfiguration') {
      for (const hook of object.webhooks as { clientConfig: Record<string, unknown> }[]) {
        const { path } = hook.clientConfig.service as { path: string };
        hook.clientConfig = { url: `https://127.0.0.1:${called}${path}`, caBundle: serving.ca.toString('base64') };
      }
    }
    await leaf.admin.ok('POST', pathOf(object), object);
  }
  for (const object of shippedManifests('hub')) await hub.admin.ok('POST', pathOf(object), object);
  await options.afterManifests?.();
  const token = async (client: KubeClient, account: string) => (await client.ok<{ status: { token: string } }>('POST',
    `/api/v1/namespaces/shortcut-webhook/serviceaccounts/${account}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } })).status.token;
  const leafConfig = leaf.writeTokenKubeconfig('shortcut-webhook', await token(leaf.admin, 'shortcut-webhook'));
  const hubConfig = hub.writeTokenKubeconfig('hub-reader', await token(hub.admin, 'shortcut-webhook-reader'));
  const args = ['--port', String(port), '--tls-cert', serving.certFile, '--tls-key', serving.keyFile,
    '--kubeconfig', leafConfig, '--shortcuts-kubeconfig', hubConfig, '--resync-interval', '0', ...(options.serveArgs ?? [])];
  return {
    async start() {
      const webhook = await startServer(args, { POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'webhook-0' });
      await waitFor(async () => (await fetch(`http://127.0.0.1:${webhook.opsPort}/readyz`)).status === 200, { ...CONVERGE, description: 'the webhook is ready' });
      return webhook;
    },
  };
}
