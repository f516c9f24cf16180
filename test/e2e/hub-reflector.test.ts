// The hub's writes from Liqo's own code: Liqo v1.2.0's EndpointSlice reflection (hub-reflector, the virtual kubelet's
// reflector, elected on a Lease of the hub) reflects the hub's EndpointSlices into the leaf as ShadowEndpointSlices,
// Liqo v1.2.0's shadowendpointslice-controller (liqo-writer) turns them into the leaf's EndpointSlices, and the real
// `shortcut-webhook serve` runs on the leaf with the shipped manifests, on two real control planes. Nothing the hub
// writes into the leaf is written by the tests: they write only what Kubernetes and Liqo's other components keep on
// the hub (Nodes, Services, EndpointSlices, IPs, Configurations, the NamespaceMap) and on the leaf (Configurations,
// Connections, the ForeignCluster). Every cluster declares 10.200.0.0/16 for its pods, as in Liqo's examples.
//
//   cluster          the hub cluster1 sees its pods at   the leaf cluster2 sees its pods at   the hub's IPAM (10.70/16, seen at 10.202/16)
//   cluster1 (hub)   10.200/16 (its own)                 10.201/16
//   cluster2 (leaf)  10.71/16 (virtual node)             -
//   cluster3         10.72/16 (virtual node)             10.203/16 (direct network)           web-1 10.72.0.11 -> 10.70.0.4, db-0 10.72.0.21 -> 10.70.0.6
//   cluster4         10.73/16 (virtual node)             -                                    web-2 10.73.0.12 -> 10.70.0.5
//
// Each test builds on the state the previous one left, in order.
import assert from 'node:assert/strict';
import { makeCerts } from '../support/certs.ts';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePortOutsideEphemeralRange } from '../support/free-port.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import { debugPairs, logRecords, metricValue } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { liqoVersion } from './liqo-writer/build.ts';
import type { Canary } from './support/canary.ts';
import { startReflectorClusters, stopReflectorClusters } from './support/reflector-clusters.ts';
import { type ControlPlane } from './support/control-plane.ts';
import { hubEndpointSlice, putHubObject, startHubReflector, USE_DIRECT_CONNECTIONS, type HubEndpoint, type HubReflectorProcess } from './support/hub.ts';
import type { KubeClient, KubeObject, WatchEvent } from './support/kube-client.ts';
import { HUB_NODE, seedReflectedWorld } from './support/direct-world.ts';
import {
  createHubIp, shadowSlice,
  startLiqoWriter, type LiqoWriter,
} from './support/liqo.ts';
import { pathOf, shippedManifests } from './support/objects.ts';
import { skipReason } from './support/skip.ts';
import { connectionPath, CONVERGE, SHADOWS, SLICES } from './support/world-paths.ts';

const DATA = 'liqo.io/direct-connections-data';
const SLICE_ORIGINALS = 'liqo.io/shortcut-original-addresses';
const SHORTCUT = 'liqo.io/shortcut-addresses';
const SHADOW_ORIGINALS = 'liqo.io/shortcut-shadow-original-addresses';
const SHADOW_ORIGINAL_DATA = 'liqo.io/shortcut-original-direct-connections-data';
const CONNECTION_PATH = connectionPath('cluster3');
/** How long the hub's reflector, Liqo's writer and our controller run side by side, watched, for a write none should make. */
const QUIET_WINDOW_MS = 10_000;

const skip = skipReason();

function addressesOf(object: KubeObject | undefined): string {
  const endpoints = object?.kind === 'ShadowEndpointSlice' ? (object.spec as { template: { endpoints?: unknown } }).template.endpoints : object?.endpoints;
  return JSON.stringify(((endpoints ?? []) as { addresses: string[] }[]).map((endpoint) => endpoint.addresses));
}

function endpointsOf(shadow: KubeObject): Record<string, unknown>[] {
  return (shadow.spec as { template: { endpoints: Record<string, unknown>[] } }).template.endpoints;
}

function managersOf(object: KubeObject): string[] {
  return (object.metadata?.managedFields ?? []).map((entry) => {
    const { manager, operation } = entry as { manager: string; operation: string };
    return `${manager}/${operation}`;
  });
}

describe(`the hub's writes from Liqo ${liqoVersion()}'s own EndpointSlice reflection, on real Kubernetes ${kubernetesVersion()}`, { skip }, () => {
  let hub: ControlPlane;
  let leaf: ControlPlane;
  let admin: KubeClient;
  let hubAdmin: KubeClient;
  let canary: Canary;
  let writer: LiqoWriter | undefined;
  let reflector: HubReflectorProcess | undefined;
  let webhook: RunningServer | undefined;
  let logDir: string;
  const made: string[] = [];
  const started = Date.now();

  const slice = async (name: string) => {
    const answer = await admin.request<KubeObject>('GET', `${SLICES}/${name}`);
    return answer.status === 200 ? answer.body : undefined;
  };
  const shadow = async (name: string) => {
    const answer = await admin.request<KubeObject>('GET', `${SHADOWS}/${name}`);
    return answer.status === 200 ? answer.body : undefined;
  };
  const untilSlice = (name: string, what: string, accept: (stored: KubeObject) => boolean) =>
    waitFor(async () => {
      const stored = await slice(name);
      return stored !== undefined && accept(stored) ? stored : undefined;
    }, { ...CONVERGE, description: `${what} (EndpointSlice ${name})` });
  const untilShadow = (name: string, what: string, accept: (stored: KubeObject) => boolean) =>
    waitFor(async () => {
      const stored = await shadow(name);
      return stored !== undefined && accept(stored) ? stored : undefined;
    }, { ...CONVERGE, description: `${what} (ShadowEndpointSlice ${name})` });
  const setTunnel = (value: string) =>
    admin.ok('PATCH', `${CONNECTION_PATH}/status`, { status: { value } }, { contentType: 'application/merge-patch+json' });
  /** Writes the hub's EndpointSlice `name` of Service `service` as Kubernetes' endpointslice controller would. */
  const putHubSlice = (name: string, service: string, endpoints: readonly HubEndpoint[], annotations?: Record<string, string>) =>
    putHubObject(hubAdmin, hubEndpointSlice({ name, service, endpoints, ...(annotations === undefined ? {} : { annotations }) }));
  /** Records every event of the leaf's shadows and slices in demo from now on, until `stop()`. */
  const watchBoth = async () => {
    const events: string[] = [];
    const stops: (() => void)[] = [];
    for (const path of [SHADOWS, SLICES]) {
      const list = await admin.get<{ metadata: { resourceVersion: string } }>(path);
      const watch = await admin.watch(path, list.metadata.resourceVersion, (event: WatchEvent) => {
        if (event.type !== 'BOOKMARK') {
          events.push(`${event.type} ${String(event.object.kind)} ${event.object.metadata?.name} ${addressesOf(event.object)}`
            + ` rv=${event.object.metadata?.resourceVersion} by ${managersOf(event.object).join(',')}`);
        }
      });
      stops.push(() => watch.stop());
    }
    return { events, stop: () => stops.forEach((stop) => stop()) };
  };

  // The Go builds (cached) happen here, outside any test's timeout: on a cold cache they can take minutes.
  before(async () => {
    if (skip) return;
    ({ hub, leaf, canary, logDir } = await startReflectorClusters('hubrefl', made));
    admin = leaf.admin;
    hubAdmin = hub.admin;
    await seedReflectedWorld(admin, hubAdmin);
    writer = startLiqoWriter(leaf.adminKubeconfig, join(logDir, 'liqo-writer.log'));
  });

  after(async () => {
    await stopReflectorClusters({ reflector, webhook, writer, clusters: { canary, hub, leaf } }, made);
    process.stdout.write(`# hub-reflector e2e took ${Date.now() - started} ms\n`);
  });

  test('the webhook runs from the shipped manifests on the leaf, and Liqo\'s reflection starts on the hub as the virtual kubelet starts it', async () => {
    const port = await freePortOutsideEphemeralRange();
    const serving = makeCerts();
    made.push(serving.dir);
    for (const object of shippedManifests()) {
      if (object.kind === 'CustomResourceDefinition') continue;
      if (object.kind === 'MutatingWebhookConfiguration') {
        for (const hook of object.webhooks as { clientConfig: Record<string, unknown> }[]) {
          const { path } = hook.clientConfig.service as { path: string };
          hook.clientConfig = { url: `https://127.0.0.1:${port}${path}`, caBundle: serving.ca.toString('base64') };
        }
      }
      await admin.ok('POST', pathOf(object), object);
    }
    for (const object of shippedManifests('hub')) await hubAdmin.ok('POST', pathOf(object), object);
    await canary.configurationsSeen();
    const token = async (client: KubeClient, account: string) => (await client.ok<{ status: { token: string } }>('POST',
      `/api/v1/namespaces/shortcut-webhook/serviceaccounts/${account}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } })).status.token;
    const leafConfig = leaf.writeTokenKubeconfig('shortcut-webhook', await token(admin, 'shortcut-webhook'));
    const hubConfig = hub.writeTokenKubeconfig('hub-reader', await token(hubAdmin, 'shortcut-webhook-reader'));
    webhook = await startServer(['--port', String(port), '--tls-cert', serving.certFile, '--tls-key', serving.keyFile,
      '--kubeconfig', leafConfig, '--shortcuts-kubeconfig', hubConfig, '--resync-interval', '0'],
    { POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'webhook-0' });
    const running = webhook;
    await waitFor(async () => (await fetch(`http://127.0.0.1:${running.opsPort}/readyz`)).status === 200, { ...CONVERGE, description: 'the webhook is ready' });
    await waitFor(async () => {
      const { hub: known } = await debugPairs(running);
      return known.known && known.ips === 3;
    }, { ...CONVERGE, description: 'the webhook knows the hub\'s three IPs' });

    // Resolves once elected and reflecting demo: from here on every write into the leaf's demo is Liqo's.
    reflector = await startHubReflector({
      hubKubeconfig: hub.adminKubeconfig, leafKubeconfig: leaf.adminKubeconfig, hubCluster: 'cluster1', leafCluster: 'cluster2',
      hubPodCidrs: ['10.200.0.0/16'], namespaces: ['demo'], logFile: join(logDir, 'hub-reflector.log'),
    });
    const lease = await hubAdmin.get<{ spec: { holderIdentity: string } }>('/apis/coordination.k8s.io/v1/namespaces/liqo-tenant-cluster2/leases/virtual-kubelet-leader-election');
    assert.equal(lease.spec.holderIdentity, 'hub-reflector-cluster2');
  });

  test('stock path: the leaf receives the address the hub\'s IPAM allocated, and the webhook resolves it into the leaf\'s direct network to the pod\'s cluster', async () => {
    await putHubSlice('stock-7f2k9', 'stock', [
      { address: '10.200.0.10', pod: 'web-0', node: HUB_NODE },
      { address: '10.72.0.21', pod: 'db-0', node: 'liqo-cluster3' },
      // A pod the leaf runs itself: the leaf's own endpointslice controller lists it, so the hub does not reflect it.
      { address: '10.71.0.30', pod: 'local-0', node: 'liqo-cluster2' },
    ]);
    const reflected = await untilShadow('stock-7f2k9', 'the hub reflected its slice', () => true);
    // The hub's own pod untranslated (in its --local-podcidr), db-0 as its IP's allocated address, the leaf's pod dropped.
    assert.equal(addressesOf(reflected), '[["10.200.0.10"],["10.70.0.6"]]');
    assert.deepEqual(endpointsOf(reflected)[1], {
      addresses: ['10.70.0.6'], conditions: { ready: true }, nodeName: 'cluster1',
      targetRef: { kind: 'RemotePod', name: 'db-0', namespace: 'demo', uid: '00000000-0000-4000-8000-64622d300000' },
    });
    assert.deepEqual(reflected.metadata?.labels, {
      'kubernetes.io/service-name': 'stock', 'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io',
      'offloading.liqo.io/origin': 'cluster1', 'offloading.liqo.io/destination': 'cluster2',
    });
    assert.deepEqual(managersOf(reflected), ['reflection.liqo.io/Update']);

    // Liqo's writer maps both through the leaf's Configuration for the hub (10.70.0.6 to 10.202.0.6); the route
    // resolves db-0's through the hub's IP and Configuration for cluster3 into the leaf's direct network to it.
    const resolved = await untilSlice('stock-7f2k9', 'db-0 resolved into the direct network', (stored) => addressesOf(stored) === '[["10.201.0.10"],["10.203.0.21"]]');
    assert.equal(resolved.metadata?.annotations?.[SHORTCUT], '10.203.0.21');
    assert.deepEqual(JSON.parse(resolved.metadata?.annotations?.[SLICE_ORIGINALS] ?? '{}'), { '10.203.0.21': '10.202.0.6' });

    await setTunnel('Error');
    await untilSlice('stock-7f2k9', 'restored while the tunnel to cluster3 is down', (stored) => addressesOf(stored) === '[["10.201.0.10"],["10.202.0.6"]]');
    await setTunnel('Connected');
    await untilSlice('stock-7f2k9', 'resolved again once it is up', (stored) => addressesOf(stored) === '[["10.201.0.10"],["10.203.0.21"]]');
    assert.deepEqual(reflector!.failures(), []);
  });

  test('the hub\'s translation is cached for the slice\'s life: db-0\'s address, given to db-1, is still sent for db-0, and the webhook never resolves it to db-1', async () => {
    const running = webhook!;
    // The hub's IPAM frees db-0's allocation and gives the address to db-1 (another pod of cluster3).
    await hubAdmin.ok('DELETE', '/apis/ipam.liqo.io/v1alpha1/namespaces/demo/ips/db-0');
    await untilSlice('stock-7f2k9', 'restored once db-0\'s IP is gone', (stored) => addressesOf(stored) === '[["10.201.0.10"],["10.202.0.6"]]');
    await createHubIp(hubAdmin, { pod: 'db-1', ip: '10.72.0.99', allocated: '10.70.0.6' });
    await waitFor(async () => {
      const { hub: known } = await debugPairs(running);
      return known.known && known.ips === 3;
    }, { ...CONVERGE, description: 'the webhook knows db-1\'s IP' });
    // The hub's slice changes (an annotation, copied to the shadow), so the reflector forges db-0's endpoint again:
    // from its cache, not from the IPs (endpointslice.go lines 373-392).
    const touched = { 'e2e.shortcut-webhook.liqo.io/touch': '1' };
    await putHubSlice('stock-7f2k9', 'stock', [
      { address: '10.200.0.10', pod: 'web-0', node: HUB_NODE },
      { address: '10.72.0.21', pod: 'db-0', node: 'liqo-cluster3' },
    ], touched);
    const forged = await untilShadow('stock-7f2k9', 'the hub reflected the touched slice', (stored) => stored.metadata?.annotations?.['e2e.shortcut-webhook.liqo.io/touch'] === '1');
    assert.equal(addressesOf(forged), '[["10.200.0.10"],["10.70.0.6"]]', 'the cached translation, for db-0');
    // Liqo's writer copies the shadow's annotations: once the leaf's slice has the touch, it is the writer's write of it.
    const written = await untilSlice('stock-7f2k9', 'Liqo wrote the touched shadow', (stored) => stored.metadata?.annotations?.['e2e.shortcut-webhook.liqo.io/touch'] === '1');
    assert.equal(addressesOf(written), '[["10.201.0.10"],["10.202.0.6"]]', 'never db-1\'s address (10.203.0.99)');
    assert.ok(await metricValue(running, 'shortcut_webhook_addresses_untouched_total{reason="no-hub-ip"}') > 0);

    // db-0 goes, db-1 comes in its place: a new hub address, a translation the reflector asks the IPs for.
    await putHubSlice('stock-7f2k9', 'stock', [
      { address: '10.200.0.10', pod: 'web-0', node: HUB_NODE },
      { address: '10.72.0.99', pod: 'db-1', node: 'liqo-cluster3' },
    ], touched);
    await untilSlice('stock-7f2k9', 'db-1 resolved into the direct network', (stored) => addressesOf(stored) === '[["10.201.0.10"],["10.203.0.99"]]');
    assert.deepEqual(reflector!.failures(), []);
  });

  test('direct connections: the reflector lists the peers\' addresses, the route repairs the shadow as Liqo creates it, and Liqo\'s writer writes the peer\'s endpoint into the leaf\'s view of it', async () => {
    const list = await admin.get<{ metadata: { resourceVersion: string } }>(SHADOWS);
    const added: KubeObject[] = [];
    const watch = await admin.watch(`${SHADOWS}?fieldSelector=metadata.name%3Dweb-x8d2q`, list.metadata.resourceVersion,
      (event: WatchEvent) => { if (event.type === 'ADDED') added.push(event.object); });
    try {
      await putHubSlice('web-x8d2q', 'web', [
        { address: '10.200.0.10', pod: 'web-0', node: HUB_NODE },
        { address: '10.72.0.11', pod: 'web-1', node: 'liqo-cluster3' },
        { address: '10.73.0.12', pod: 'web-2', node: 'liqo-cluster4' },
        { address: '10.71.0.40', pod: 'web-3', node: 'liqo-cluster2' },
      ]);
      // Its log line comes after the create's answer, the watch's event after the store: both are waited for.
      await waitFor(() => added.length > 0 && reflector!.writes('demo/web-x8d2q').created > 0, { ...CONVERGE, description: 'the hub created the shadow' });
    } finally {
      watch.stop();
    }
    // The shadow as first stored: the reflector's create, repaired by the route as it was made.
    const repaired = added[0]!;
    assert.equal(reflector!.writes('demo/web-x8d2q').created, 1);
    assert.equal(addressesOf(repaired), '[["10.200.0.10"],["10.200.0.11"],["10.70.0.5"]]', 'cluster3\'s pod at its own address, cluster4\'s on the hub path');
    const annotations = repaired.metadata?.annotations ?? {};
    assert.deepEqual(JSON.parse(annotations[DATA] ?? '{}'), { clusterAddresses: { cluster3: ['10.200.0.11'] } });
    assert.deepEqual(JSON.parse(annotations[SHADOW_ORIGINALS] ?? '{}'), { '10.200.0.11': '10.72.0.11', '10.70.0.5': '10.73.0.12' });
    // The data annotation as Liqo's reflector wrote it (Go's encoding/json of directconnection.ClusterAddresses).
    assert.equal(annotations[SHADOW_ORIGINAL_DATA], '{"clusterAddresses":{"cluster3":["10.72.0.11"],"cluster4":["10.73.0.12"]}}');
    assert.deepEqual(managersOf(repaired), ['reflection.liqo.io/Update'], 'repaired by the route alone: no write of ours');
    // Liqo's writer copies the shadow's annotations (less the data): the slice written from this shadow carries them.
    const written = await untilSlice('web-x8d2q', 'Liqo wrote the slice from the repaired shadow', (stored) => stored.metadata?.annotations?.[SHADOW_ORIGINALS] === annotations[SHADOW_ORIGINALS]);
    assert.equal(addressesOf(written), '[["10.201.0.10"],["10.203.0.11"],["10.202.0.5"]]');
    assert.equal(written.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslice.reflection.liqo.io');
    assert.equal(written.metadata?.annotations?.[DATA], undefined, 'Liqo\'s writer strips the data annotation');
    assert.deepEqual(reflector!.failures(), []);
  });

  test('the reflector\'s PUT over the repaired shadow stores nothing, and with the reflector, Liqo\'s writer and our controller running nothing is written for 10 s', async () => {
    const before = (await shadow('web-x8d2q'))!;
    const puts = reflector!.writes('demo/web-x8d2q').updated;
    const watched = await watchBoth();
    try {
      // A change of the hub's Service makes the reflector handle its slices again (its Service informer): the forged
      // shadow differs from the stored, repaired one, so it PUTs the forged one whole.
      await hubAdmin.ok('PATCH', '/api/v1/namespaces/demo/services/web', { metadata: { labels: { 'e2e.shortcut-webhook.liqo.io/touch': '1' } } },
        { contentType: 'application/merge-patch+json' });
      await waitFor(() => reflector!.writes('demo/web-x8d2q').updated > puts, { ...CONVERGE, description: 'the reflector PUT the shadow again' });
      // An observation window, not a wait for something: the claim is that nothing happens in it.
      await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS));
    } finally {
      watched.stop();
    }
    assert.deepEqual(watched.events, [], 'no shadow or slice of demo changed');
    const after = (await shadow('web-x8d2q'))!;
    assert.equal(after.metadata?.resourceVersion, before.metadata?.resourceVersion, 'the PUT stored nothing');
    assert.deepEqual(reflector!.failures(), []);
  });

  test('a Connection to Error sends the peer\'s endpoint back through the hub, and Connected brings it back, with the reflector\'s PUTs in between', async () => {
    const puts = reflector!.writes('demo/web-x8d2q').updated;
    const t0 = Date.now();
    await setTunnel('Error');
    await untilSlice('web-x8d2q', 'cluster3\'s endpoint through the hub', (stored) => addressesOf(stored) === '[["10.201.0.10"],["10.202.0.4"],["10.202.0.5"]]');
    const down = Date.now() - t0;
    // Our controller's patch of the shadow is an event of the reflector's informer: it PUTs its forged copy over it,
    // which the route repairs to the same hub path.
    await waitFor(() => reflector!.writes('demo/web-x8d2q').updated > puts, { ...CONVERGE, description: 'the reflector PUT over our patch' });
    assert.equal(addressesOf(await shadow('web-x8d2q')), '[["10.200.0.10"],["10.70.0.4"],["10.70.0.5"]]');
    const t1 = Date.now();
    await setTunnel('Connected');
    await untilSlice('web-x8d2q', 'cluster3\'s endpoint through the direct network again', (stored) => addressesOf(stored) === '[["10.201.0.10"],["10.203.0.11"],["10.202.0.5"]]');
    const up = Date.now() - t1;
    process.stdout.write(`# failover with Liqo's reflector: Connection Error -> through the hub in ${down} ms; Connected -> direct again in ${up} ms\n`);
    assert.ok(down < 10_000 && up < 10_000, `failover within 10 s (${down} ms, ${up} ms)`);
    assert.deepEqual(reflector!.failures(), []);
  });

  test('a Service flipped to direct connections: Liqo\'s reflector sends the pod untranslated, and the slice ends with the address Liqo sends itself, no §8 original naming it', async () => {
    await hubAdmin.ok('PATCH', '/api/v1/namespaces/demo/services/stock', { metadata: { annotations: { [USE_DIRECT_CONNECTIONS]: 'true' } } },
      { contentType: 'application/merge-patch+json' });
    const flipped = await untilShadow('stock-7f2k9', 'the hub reflected the slice with direct connections', (stored) => stored.metadata?.annotations?.[SHADOW_ORIGINAL_DATA] !== undefined);
    assert.equal(flipped.metadata?.annotations?.[SHADOW_ORIGINAL_DATA], '{"clusterAddresses":{"cluster3":["10.72.0.99"]}}');
    assert.equal(addressesOf(flipped), '[["10.200.0.10"],["10.200.0.99"]]');
    const settled = await untilSlice('stock-7f2k9', 'Liqo wrote the slice from the repaired shadow',
      (stored) => stored.metadata?.annotations?.[SHADOW_ORIGINALS] === JSON.stringify({ '10.200.0.99': '10.72.0.99' }));
    assert.equal(addressesOf(settled), '[["10.201.0.10"],["10.203.0.99"]]');
    const originals: Record<string, string> = JSON.parse(settled.metadata?.annotations?.[SLICE_ORIGINALS] ?? '{}');
    assert.equal(originals['10.203.0.99'], undefined, `no §8 original for the address Liqo sends itself (${JSON.stringify(settled.metadata?.annotations)})`);
    assert.deepEqual(reflector!.failures(), []);
    assert.deepEqual(logRecords(webhook!).filter((r) => r.level === 'error' || r.level === 'fatal'), []);
  });

  test('a shadow labelled as the reflector\'s own with no hub slice behind it is deleted by the reflector: the emulation of support/virtual-kubelet.ts cannot share its namespace', async () => {
    await admin.ok('POST', SHADOWS, shadowSlice({ name: 'orphan', addresses: [['10.200.0.77']], pods: ['orphan-0'] }));
    await waitFor(async () => (await shadow('orphan')) === undefined, { ...CONVERGE, description: 'the reflector deleted the orphan shadow' });
    assert.deepEqual(reflector!.failures(), []);
  });
});
