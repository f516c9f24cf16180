// Records the product trusts, proven where they arrive: a hub tenant writes the product's record annotations on a
// hub EndpointSlice, Liqo v1.2.0's own EndpointSlice reflection (hub-reflector) copies them onto the leaf's
// ShadowEndpointSlice, Liqo v1.2.0's shadowendpointslice-controller (liqo-writer) onto the leaf's EndpointSlice, and
// the real `shortcut-webhook serve` runs on the leaf with the shipped manifests, on two real control planes. The
// world is hub-reflector.test.ts's (support/direct-world.ts seedReflectedWorld): every cluster declares 10.200.0.0/16
// for its pods, so the leaf may hold
//
//   from                                      in EndpointSlices                 in ShadowEndpointSlices (the hub's side)
//   Liqo's translation for the hub cluster1   10.201/16 (its pods), 10.202/16   10.200/16 (its pods), 10.70/16 (its IPAM),
//                                                                               10.72/16 (cluster3's, for direct connections)
//   the shortcut to cluster3                  10.203/16 (the direct network)    cluster3's pods at their own 10.200/16
//   Liqo alone, on a shadow stored            10.72/16: Liqo's writer leaves an address listed under cluster3 outside
//   unrepaired (the webhook failed open)      the 10.200/16 cluster3 declares as it is
//
// and nothing else: not the leaf's own pods (10.200/16 on the leaf), not 10.0.0.1, no address listed under the hub.
// Each test builds on the state the previous one left, in order.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { RunningServer } from '../support/process.ts';
import { debugPairs, killServer, logRecords, metricValue } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { liqoVersion } from './liqo-writer/build.ts';
import type { Canary } from './support/canary.ts';
import { startReflectorClusters, stopReflectorClusters } from './support/reflector-clusters.ts';
import { type ControlPlane } from './support/control-plane.ts';
import { HUB_NODE, installShippedWebhook, seedReflectedWorld, type InstalledWebhook } from './support/direct-world.ts';
import { hubEndpointSlice, putHubObject, startHubReflector, type HubEndpoint, type HubReflectorProcess } from './support/hub.ts';
import type { KubeClient, KubeObject, WatchEvent } from './support/kube-client.ts';
import { startLiqoWriter, type LiqoWriter } from './support/liqo.ts';
import { skipReason } from './support/skip.ts';
import { startTcpBalancer, type TcpBalancer } from './support/tcp-balancer.ts';
import { connectionPath, CONVERGE, SHADOWS, SLICES } from './support/world-paths.ts';

const DATA = 'liqo.io/direct-connections-data';
const SLICE_ORIGINALS = 'liqo.io/shortcut-original-addresses';
const SHADOW_ORIGINALS = 'liqo.io/shortcut-shadow-original-addresses';
const SHADOW_ORIGINAL_DATA = 'liqo.io/shortcut-original-direct-connections-data';
const TOUCH = 'e2e.shortcut-webhook.liqo.io/touch';
const IGNORED_SLICES = 'shortcut_webhook_records_ignored_total{resource="endpointslices"}';
const IGNORED_SHADOWS = 'shortcut_webhook_records_ignored_total{resource="shadowendpointslices"}';

/** Where Liqo's translation or the shortcut puts an address on the leaf: the table above, nothing else. */
const SLICE_SPACES = /^10\.(20[123]|72)\.\d+\.\d+$/;
const SHADOW_SPACES = /^10\.(200|70|72)\.\d+\.\d+$/;

// Service stock: the hub's own pod web-0 and db-0 on cluster3, which the hub's IPAM allocated 10.70.0.6.
const STOCK: readonly HubEndpoint[] = [
  { address: '10.200.0.10', pod: 'web-0', node: HUB_NODE },
  { address: '10.72.0.21', pod: 'db-0', node: 'liqo-cluster3' },
];
// Service web, with direct connections: the hub's own pod web-0 and web-1 on cluster3.
const WEB: readonly HubEndpoint[] = [
  { address: '10.200.0.10', pod: 'web-0', node: HUB_NODE },
  { address: '10.72.0.11', pod: 'web-1', node: 'liqo-cluster3' },
];
/** The stock slice as the product leaves it: db-0 moved into the direct network, the product's own record for it. */
const STOCK_SHORTCUT = '[["10.201.0.10"],["10.203.0.21"]]';
const STOCK_RECORD = JSON.stringify({ '10.203.0.21': '10.202.0.6' });
const WEB_SHORTCUT = '[["10.201.0.10"],["10.203.0.11"]]';

const skip = skipReason();

function endpointsOf(object: KubeObject | undefined): { addresses?: string[] }[] {
  const endpoints = object?.kind === 'ShadowEndpointSlice' ? (object.spec as { template: { endpoints?: unknown } }).template.endpoints : object?.endpoints;
  return (endpoints ?? []) as { addresses?: string[] }[];
}

function addressesOf(object: KubeObject | undefined): string {
  return JSON.stringify(endpointsOf(object).map((endpoint) => endpoint.addresses));
}

/** What a stored object holds that neither Liqo's translation nor the shortcut could have put there, if anything. */
function foreignTo(object: KubeObject): string | undefined {
  const shadow = object.kind === 'ShadowEndpointSlice';
  const spaces = shadow ? SHADOW_SPACES : SLICE_SPACES;
  const outside = endpointsOf(object).flatMap((endpoint) => endpoint.addresses ?? []).filter((address) => !spaces.test(address));
  if (outside.length > 0) return `addresses ${outside.join(', ')}`;
  if (!shadow) return undefined;
  // An address listed under the hub or the leaf is left as it is by Liqo's leaf writer (ips.go:159): the leaf's own pods.
  const data = object.metadata?.annotations?.[DATA];
  const listed = data === undefined ? {} : (JSON.parse(data) as { clusterAddresses?: Record<string, string[]> }).clusterAddresses ?? {};
  const own = ['cluster1', 'cluster2'].filter((cluster) => (listed[cluster]?.length ?? 0) > 0);
  return own.length > 0 ? `${DATA} lists ${own.join(', ')}: ${data}` : undefined;
}

describe(`records forged on the hub, through Liqo ${liqoVersion()}'s own reflection, on real Kubernetes ${kubernetesVersion()}`, { skip }, () => {
  let hub: ControlPlane;
  let leaf: ControlPlane;
  let admin: KubeClient;
  let hubAdmin: KubeClient;
  let canary: Canary;
  let writer: LiqoWriter | undefined;
  let reflector: HubReflectorProcess | undefined;
  let installed: InstalledWebhook;
  let webhook: RunningServer | undefined;
  let balancer: TcpBalancer | undefined;
  /** Whether the API server reaches the webhook: while false its calls are refused and it fails open. */
  let reachable = true;
  let logDir: string;
  const made: string[] = [];
  const stops: (() => void)[] = [];
  /** Every stored version of the leaf's slices and shadows in demo, from the world's start. */
  const stored: KubeObject[] = [];
  /** Where the running test's versions start in `stored`: each test answers for what was stored while it ran. */
  let testFrom = 0;
  const started = Date.now();

  const get = async (path: string, name: string) => {
    const answer = await admin.request<KubeObject>('GET', `${path}/${name}`);
    return answer.status === 200 ? answer.body : undefined;
  };
  const putHubSlice = (name: string, service: string, endpoints: readonly HubEndpoint[], annotations: Record<string, string>) =>
    putHubObject(hubAdmin, hubEndpointSlice({ name, service, endpoints, annotations }));
  const setTunnel = (value: string) =>
    admin.ok('PATCH', `${connectionPath('cluster3')}/status`, { status: { value } }, { contentType: 'application/merge-patch+json' });
  const foreignStored = () => stored.slice(testFrom).flatMap((object) => {
    const why = foreignTo(object);
    return why === undefined ? [] : [`${object.kind} ${object.metadata?.name} rv=${object.metadata?.resourceVersion}: ${why}`];
  });
  /** `serve` started on the installed port, ready and knowing the hub's IPs (the stock path's translation). */
  const startWebhook = async () => {
    const running = await installed.start();
    await waitFor(async () => {
      const { hub: known } = await debugPairs(running);
      return known.known && known.ips === 3;
    }, { ...CONVERGE, description: 'the webhook knows the hub\'s three IPs' });
    return running;
  };
  /** Waits for `name` to be as `accept` wants it, and stops at once when a version outside Liqo's and the shortcut's spaces was stored. */
  const until = async (path: string, name: string, what: string, accept: (object: KubeObject) => boolean): Promise<KubeObject> => {
    const description = `${what} (${path === SLICES ? 'EndpointSlice' : 'ShadowEndpointSlice'} ${name})`;
    const found = await waitFor(async () => {
      if (foreignStored().length > 0) return 'foreign';
      const object = await get(path, name);
      return object !== undefined && accept(object) ? object : undefined;
    }, { ...CONVERGE, description });
    if (found === 'foreign') assert.fail(`stored while waiting for ${description}: ${foreignStored().join('; ')}`);
    return found;
  };

  before(async () => {
    if (skip) return;
    ({ hub, leaf, canary, logDir } = await startReflectorClusters('forged', made));
    admin = leaf.admin;
    hubAdmin = hub.admin;
    await seedReflectedWorld(admin, hubAdmin);
    writer = startLiqoWriter(leaf.adminKubeconfig, join(logDir, 'liqo-writer.log'));
    // The API server calls the webhook through a balancer that refuses while the test makes it unreachable: the
    // webhook, its controller and its healing watch keep running, as in a cluster where only the path to it breaks.
    installed = await installShippedWebhook({
      leaf, hub, made, afterManifests: () => canary.configurationsSeen(),
      front: async (port) => {
        balancer = await startTcpBalancer({ backends: () => (reachable ? [{ port }] : []) });
        return balancer.port;
      },
    });
    webhook = await startWebhook();
    // Watched from before the hub's first write into the leaf (once the webhook is ready, the CRDs' storage is).
    for (const path of [SLICES, SHADOWS]) {
      const list = await admin.get<{ metadata: { resourceVersion: string } }>(path);
      const watch = await admin.watch(path, list.metadata.resourceVersion, (event: WatchEvent) => {
        if (event.type === 'ADDED' || event.type === 'MODIFIED') stored.push(event.object);
      });
      stops.push(() => watch.stop());
    }
    reflector = await startHubReflector({
      hubKubeconfig: hub.adminKubeconfig, leafKubeconfig: leaf.adminKubeconfig, hubCluster: 'cluster1', leafCluster: 'cluster2',
      hubPodCidrs: ['10.200.0.0/16'], namespaces: ['demo'], logFile: join(logDir, 'hub-reflector.log'),
    });
  });

  beforeEach(() => {
    testFrom = stored.length;
  });

  after(async () => {
    for (const stop of stops) stop();
    await stopReflectorClusters({ reflector, webhook, balancer, writer, clusters: { canary, hub, leaf } }, made);
    process.stdout.write(`# forged-records e2e took ${Date.now() - started} ms\n`);
  });

  test('EndpointSlice route: a record mapping Liqo\'s addresses to the leaf\'s own pod and to 10.0.0.1 reaches the leaf and is ignored at admission', async () => {
    const running = webhook!;
    // Both entries name addresses Liqo writes on the leaf (web-0's 10.201.0.10, db-0's 10.202.0.6).
    const forged = JSON.stringify({ '10.201.0.10': '10.200.0.5', '10.202.0.6': '10.0.0.1' });
    await putHubSlice('stock-forged', 'stock', STOCK, { [SLICE_ORIGINALS]: forged });
    const reflected = await until(SHADOWS, 'stock-forged', 'the hub reflected the forged record', () => true);
    assert.equal(reflected.metadata?.annotations?.[SLICE_ORIGINALS], forged, 'Liqo\'s reflection copies the record down');
    const settled = await until(SLICES, 'stock-forged', 'Liqo wrote the slice, db-0 in the direct network', (object) => addressesOf(object) === STOCK_SHORTCUT);
    assert.equal(settled.metadata?.annotations?.[SLICE_ORIGINALS], STOCK_RECORD, 'the forged entries dropped, the product\'s own record written');
    assert.deepEqual(foreignStored(), []);
    assert.ok(await metricValue(running, IGNORED_SLICES) > 0, 'the forged entries counted');
    assert.deepEqual(reflector!.failures(), []);
  });

  test('shadow route: a forged record listing the hub\'s own pod under the hub reaches the leaf\'s shadow and is ignored at admission', async () => {
    const running = webhook!;
    await putHubSlice('web-forged', 'web', WEB, {
      [SHADOW_ORIGINAL_DATA]: JSON.stringify({ clusterAddresses: { cluster1: ['10.200.0.10'], cluster3: ['10.72.0.11'] } }),
      [SHADOW_ORIGINALS]: JSON.stringify({ '10.200.0.10': '10.200.0.10', '10.200.0.11': '10.72.0.11' }),
    });
    const repaired = await until(SHADOWS, 'web-forged', 'the hub reflected the slice, repaired', (object) => object.metadata?.annotations?.[DATA] !== undefined);
    assert.equal(addressesOf(repaired), '[["10.200.0.10"],["10.200.0.11"]]');
    assert.deepEqual(JSON.parse(repaired.metadata?.annotations?.[DATA] ?? '{}'), { clusterAddresses: { cluster3: ['10.200.0.11'] } });
    await until(SLICES, 'web-forged', 'Liqo wrote the slice from the repaired shadow', (object) => addressesOf(object) === WEB_SHORTCUT);
    assert.deepEqual(foreignStored(), []);
    assert.ok(await metricValue(running, IGNORED_SHADOWS) > 0, 'the forged record counted');
    assert.deepEqual(reflector!.failures(), []);
  });

  test('a window in which the webhook failed open stores the forged records as they are; the healing watch finds them and does not restore from them', async () => {
    const running = webhook!;
    const ignoredBefore = await metricValue(running, IGNORED_SLICES);
    const seen = stored.length;
    const storedAsIs = (kind: string, name: string, key: string, value: string) => () =>
      stored.slice(seen).some((object) => object.kind === kind && object.metadata?.name === name && object.metadata?.annotations?.[key] === value);
    const forgedSlice = JSON.stringify({ '10.201.0.10': '10.0.0.1' });
    const forgedData = JSON.stringify({ clusterAddresses: { cluster1: ['10.200.0.10'] } });
    reachable = false;
    balancer!.drop();
    try {
      // The hub's tenant rewrites both: Liqo writes them into the leaf with no review.
      await putHubSlice('stock-forged', 'stock', STOCK, { [SLICE_ORIGINALS]: forgedSlice });
      await putHubSlice('web-forged', 'web', WEB, { [SHADOW_ORIGINAL_DATA]: forgedData, [TOUCH]: '1' });
      await waitFor(storedAsIs('EndpointSlice', 'stock-forged', SLICE_ORIGINALS, forgedSlice), { ...CONVERGE, description: 'the forged slice stored as is' });
      await waitFor(storedAsIs('ShadowEndpointSlice', 'web-forged', SHADOW_ORIGINAL_DATA, forgedData), { ...CONVERGE, description: 'the forged shadow stored as is' });
      // The healing watch patches what was stored (its patches, too, pass unreviewed): from Liqo's addresses, not the records.
      await until(SLICES, 'stock-forged', 'the healing watch moved db-0 into the direct network', (object) => addressesOf(object) === STOCK_SHORTCUT
        && object.metadata?.annotations?.[SLICE_ORIGINALS] === STOCK_RECORD);
      await until(SHADOWS, 'web-forged', 'the healing watch repaired the shadow', (object) => addressesOf(object) === '[["10.200.0.10"],["10.200.0.11"]]'
        && object.metadata?.annotations?.[TOUCH] === '1');
    } finally {
      reachable = true;
    }
    await until(SLICES, 'web-forged', 'Liqo wrote the slice from the healed shadow', (object) => addressesOf(object) === WEB_SHORTCUT && object.metadata?.annotations?.[TOUCH] === '1');
    await until(SLICES, 'stock-forged', 'the slice settled with the webhook reachable again', (object) => addressesOf(object) === STOCK_SHORTCUT);
    assert.deepEqual(foreignStored(), []);
    assert.ok(await metricValue(running, IGNORED_SLICES) > ignoredBefore, 'the stored forged entry counted');
    assert.deepEqual(reflector!.failures(), []);
  });

  test('the product\'s own records still restore: a tunnel down sends both Services back through the hub, and up again through the shortcut', async () => {
    await setTunnel('Error');
    await until(SLICES, 'stock-forged', 'db-0 restored to Liqo\'s address', (object) => addressesOf(object) === '[["10.201.0.10"],["10.202.0.6"]]');
    await until(SLICES, 'web-forged', 'web-1 through the hub', (object) => addressesOf(object) === '[["10.201.0.10"],["10.202.0.4"]]');
    await setTunnel('Connected');
    await until(SLICES, 'stock-forged', 'db-0 in the direct network again', (object) => addressesOf(object) === STOCK_SHORTCUT);
    await until(SLICES, 'web-forged', 'web-1 in the direct network again', (object) => addressesOf(object) === WEB_SHORTCUT);
    assert.deepEqual(foreignStored(), []);
    assert.deepEqual(reflector!.failures(), []);
    assert.deepEqual(logRecords(webhook!).filter((r) => r.level === 'error' || r.level === 'fatal'), []);
  });

  test('a replica started after the forged record was stored with no webhook running: its controller finds the record and does not restore from it', async () => {
    await killServer(webhook);
    webhook = undefined;
    const seen = stored.length;
    const forged = JSON.stringify({ '10.201.0.10': '10.200.0.7', '10.202.0.6': '10.0.0.1' });
    await putHubSlice('stock-forged', 'stock', STOCK, { [SLICE_ORIGINALS]: forged, [TOUCH]: '2' });
    await waitFor(() => stored.slice(seen).some((object) => object.kind === 'EndpointSlice' && object.metadata?.name === 'stock-forged'
      && object.metadata.annotations?.[SLICE_ORIGINALS] === forged), { ...CONVERGE, description: 'the forged slice stored as is' });
    assert.equal(addressesOf(await get(SLICES, 'stock-forged')), '[["10.201.0.10"],["10.202.0.6"]]', 'Liqo\'s addresses, unreviewed');
    webhook = await startWebhook();
    const running = webhook;
    const settled = await until(SLICES, 'stock-forged', 'the new replica moved db-0 into the direct network', (object) => addressesOf(object) === STOCK_SHORTCUT
      && object.metadata?.annotations?.[SLICE_ORIGINALS] === STOCK_RECORD);
    assert.equal(settled.metadata?.annotations?.[TOUCH], '2');
    assert.deepEqual(foreignStored(), []);
    assert.ok(await metricValue(running, IGNORED_SLICES) > 0, 'the stored forged entries counted by the new replica');
    await setTunnel('Error');
    await until(SLICES, 'stock-forged', 'db-0 restored from the new replica\'s own record', (object) => addressesOf(object) === '[["10.201.0.10"],["10.202.0.6"]]');
    await setTunnel('Connected');
    await until(SLICES, 'stock-forged', 'db-0 in the direct network again', (object) => addressesOf(object) === STOCK_SHORTCUT);
    assert.deepEqual(foreignStored(), []);
    assert.deepEqual(reflector!.failures(), []);
  });
});
