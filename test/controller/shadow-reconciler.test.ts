// The controller's shadow pass keeps Liqo's stored ShadowEndpointSlices in step (the failover of its direct
// connections), against the test API server with the shadow repair in its write path as the webhook's route puts it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { STORED_KINDS } from '../../src/controller/kinds.ts';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { repairShadowEndpointSlice } from '../../src/core/direct-connections.ts';
import { decodeHubIp, indexHubIps } from '../../src/core/hub-ipam.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { decodeConfiguration, tunnelStates } from '../../src/core/leaf-views.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { connectionObject, shadowObject } from '../support/builders.ts';
import { hubIps, hubToCluster2, hubToCluster3, hubToCluster4, leafToCluster3, leafToCluster4, leafToHub } from '../support/direct-world.ts';
import { DEFAULT_RESOURCES, startKubeApiServer, type KubeApiServer, type MutateHook, type ResourceDefinition } from '../support/kube-api-server.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const SHADOWS: ResourceDefinition = {
  group: 'offloading.liqo.io', version: 'v1beta1', plural: 'shadowendpointslices', singular: 'shadowendpointslice',
  kind: 'ShadowEndpointSlice', namespaced: true,
};
const SHADOW = { apiVersion: 'offloading.liqo.io/v1beta1', kind: 'ShadowEndpointSlice', namespace: 'demo' } as const;

/** What the webhook's shadow route does to every write of a shadow: the repair against the current view. */
function shadowRoute(store: SnapshotStore, route: { on: boolean }): MutateHook {
  return (object, context) => {
    if (context.resource.plural !== 'shadowendpointslices' || !store.isSynced() || !route.on) return object;
    const repair = repairShadowEndpointSlice(object, store.current(), {});
    return repair.kind === 'changed' ? structuredClone(repair.object) : object;
  };
}

/** As the hub wrote it: web-0 on cluster3 (the hub sees it at 10.203.0.5), web-1 on cluster4 (10.204.0.6). */
function hubWritten(name: string): JsonObject {
  const shadow = shadowObject({
    name,
    endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }, { addresses: ['10.204.0.6'], pod: 'web-1' }, { addresses: ['10.200.0.9'], pod: 'hub-0' }],
    data: { clusterAddresses: { cluster3: ['10.203.0.5'], cluster4: ['10.204.0.6'] } },
  });
  delete (shadow.metadata as { resourceVersion?: string }).resourceVersion;
  return shadow;
}

function tunnels(values: Record<string, string>, latency = '1.2ms') {
  return tunnelStates(Object.entries(values).map(([peer, value]) => {
    const connection = connectionObject(peer, value);
    return { ...connection, status: { value, latency: { value: latency, timestamp: '2026-11-26T14:00:00Z' } } };
  }));
}

/** The leaf with direct networks to cluster3 and cluster4 and the hub's IPAM known: a world where every listed address repairs. */
function publishWorld(store: SnapshotStore): void {
  store.publish({
    fccs: [],
    configurations: [leafToHub, leafToCluster3, leafToCluster4].map((c) => decodeConfiguration(c)),
    tunnels: tunnels({ cluster3: 'Connected', cluster4: 'Connected' }),
    hubs: [{
      id: undefined,
      ipam: {
        known: true,
        ips: indexHubIps(hubIps.flatMap((object) => decodeHubIp(object) ?? [])),
        configurations: [hubToCluster2, hubToCluster3, hubToCluster4].map((c) => decodeConfiguration(c)),
      },
      fccs: [],
    }],
  });
}

interface Context {
  readonly server: KubeApiServer;
  readonly store: SnapshotStore;
  readonly reconciler: SliceReconciler;
  readonly metrics: Metrics;
  /** Whether the API server calls the shadow route (off: as a webhook away, failing open). */
  readonly route: { on: boolean };
  passes(): number;
  said(text: RegExp): number;
  patches(name?: string): number;
  addresses(name: string): string;
}

async function withShadowPass(options: { readonly crd?: boolean; readonly absentRetryMs?: number },
  run: (context: Context) => Promise<void>, stored: readonly string[] = ['web-abcde']): Promise<void> {
  const store = new SnapshotStore();
  const route = { on: true };
  const server = await startKubeApiServer({
    mutate: shadowRoute(store, route), resources: options.crd === false ? DEFAULT_RESOURCES : [...DEFAULT_RESOURCES, SHADOWS],
  });
  // Stored before the webhook could see them: as the hub wrote them.
  if (options.crd !== false) for (const name of stored) await server.create(hubWritten(name));
  publishWorld(store);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const metrics = new Metrics();
  const { logger, records } = recordingLogger();
  // As serve runs it: both kinds in one pass.
  const reconciler = new SliceReconciler({
    config, view: store, clusterId: undefined, logger, metrics, resyncIntervalMs: 0, settleMs: 5, resources: STORED_KINDS,
    backoff: { initialMs: 20, maxMs: 100 }, ...(options.absentRetryMs === undefined ? {} : { absentRetryMs: options.absentRetryMs }),
  });
  const context: Context = {
    server, store, reconciler, metrics, route,
    passes: () => records.filter((r) => r.msg === 'reconcile pass done').length,
    said: (text) => records.filter((r) => typeof r.msg === 'string' && text.test(r.msg)).length,
    patches: (name) => server.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/shadowendpointslices/')
      && (name === undefined || r.path.endsWith(`/${name}`))).length,
    addresses: (name) => {
      const spec = server.get({ ...SHADOW, name })?.spec as { template: { endpoints: { addresses: string[] }[] } } | undefined;
      return JSON.stringify(spec?.template.endpoints.map((endpoint) => endpoint.addresses));
    },
  };
  try {
    reconciler.start();
    await run(context);
  } finally {
    await reconciler.stop();
    await server.close();
  }
}

const REPAIRED = '[["10.200.0.5"],["10.200.0.6"],["10.200.0.9"]]';

test('shadows stored as the hub wrote them are repaired by the first pass, with a guarded patch each, and never written twice', async () => {
  await withShadowPass({}, async ({ passes, patches, addresses, reconciler, server, metrics }) => {
    await waitFor(() => passes() >= 1, { description: 'the first pass' });
    assert.equal(addresses('web-abcde'), REPAIRED);
    assert.equal(patches(), 1);
    const patch = server.requests.find((r) => r.method === 'PATCH');
    assert.equal(patch?.contentType, 'application/json-patch+json');
    const guard = (patch?.body as Record<string, unknown>[])[0];
    assert.deepEqual([guard?.op, guard?.path, typeof guard?.value], ['test', '/metadata/resourceVersion', 'string']);
    reconciler.trigger('again', 0);
    await waitFor(() => passes() >= 2);
    assert.equal(patches(), 1, 'a repaired shadow is in step: nothing is written again');
    // Counted as shadows, not as EndpointSlices: the dashboard's panels of each kind.
    const text = await metrics.registry.metrics();
    assert.match(text, /shortcut_webhook_shadows_reconciled_total\{result="patched"\} 1\n/);
    assert.match(text, /shortcut_webhook_shadows_reconciled_total\{result="unchanged"\} 1\n/);
    assert.match(text, /shortcut_webhook_slices_reconciled_total\{result="patched"\} 0\n/);
  }, ['web-abcde']);
});

test('a Connection going to Error moves the peer to the hub path, and Connected moves it back', async () => {
  await withShadowPass({}, async ({ passes, store, addresses }) => {
    await waitFor(() => passes() >= 1);
    store.publishTunnels(tunnels({ cluster3: 'Error', cluster4: 'Connected' }));
    await waitFor(() => addresses('web-abcde') === '[["10.70.0.12"],["10.200.0.6"],["10.200.0.9"]]', { description: 'cluster3 on the hub path' });
    store.publishTunnels(tunnels({ cluster3: 'Connected', cluster4: 'Connected' }));
    await waitFor(() => addresses('web-abcde') === REPAIRED, { description: 'cluster3 direct again' });
  });
});

test('a Connection\'s latency update makes no pass, and its status.value does', async () => {
  await withShadowPass({}, async ({ passes, store, reconciler, addresses }) => {
    await waitFor(() => passes() >= 1);
    const version = store.current().version;
    store.publishTunnels(tunnels({ cluster3: 'Connected', cluster4: 'Connected' }, '7.9ms'));
    assert.equal(store.current().version, version, 'the view does not move on a latency update');
    reconciler.trigger('probe', 0);
    await waitFor(() => passes() >= 2);
    assert.equal(passes(), 2, 'only the probe made a pass');
    store.publishTunnels(tunnels({ cluster3: 'Connecting', cluster4: 'Connected' }, '7.9ms'));
    await waitFor(() => passes() >= 3, { description: 'a status.value makes a pass' });
    assert.equal(addresses('web-abcde'), '[["10.70.0.12"],["10.200.0.6"],["10.200.0.9"]]');
  });
});

test('where the ShadowEndpointSlice CRD is absent the pass idles, says so once, and runs once it is there', async () => {
  await withShadowPass({ crd: false, absentRetryMs: 50 }, async ({ server, said, reconciler, addresses, route }) => {
    await waitFor(() => said(/resource not served/) >= 1, { description: 'said' });
    // Every way a pass is asked for: it stays idle, and quiet.
    for (let i = 0; i < 3; i++) reconciler.trigger('probe', 0);
    await waitFor(() => server.requests.filter((r) => r.path.endsWith('/shadowendpointslices') && r.method === 'GET').length >= 6,
      { description: 'looked for again' });
    assert.equal(said(/resource not served/), 1, 'said once');
    assert.equal(said(/pass failed/), 0, 'not a failing pass');
    // Looked for with a probe of one item, not with a pass over every slice each time.
    const slicePasses = server.requests.filter((r) => r.path.endsWith('/endpointslices') && r.method === 'GET').length;
    assert.ok(slicePasses <= 4, `${slicePasses} lists of slices: the first pass and the three asked for`);
    server.registerResource(SHADOWS);
    // Stored while the webhook was away: as the hub wrote it.
    route.on = false;
    await server.create(hubWritten('later'));
    route.on = true;
    assert.notEqual(addresses('later'), REPAIRED);
    await waitFor(() => said(/served and granted again/) >= 1, { description: 'found once the CRD is there' });
    await waitFor(() => addresses('later') === REPAIRED, { description: 'repaired by a pass' });
  });
});

test('where listing shadows is refused (403) the pass idles and says so once, with no retry storm', async () => {
  await withShadowPass({ absentRetryMs: 50 }, async ({ server, said, reconciler, patches, passes }) => {
    server.failNext({ method: 'GET', pathIncludes: '/shadowendpointslices', count: 1000 }, 403);
    reconciler.trigger('probe', 0);
    await waitFor(() => server.requests.filter((r) => r.path.endsWith('/shadowendpointslices') && r.status === 403).length >= 6,
      { description: 'looked for again' });
    // Looked for with one cheap list, not a pass over every EndpointSlice each time: the first pass and the probe's.
    assert.ok(passes() <= 2, `${passes()} passes while the shadows stay refused`);
    assert.equal(said(/resource not granted/), 1, 'said once');
    assert.equal(patches(), 0);
    assert.equal(said(/pass failed/), 0, 'not a failing pass');
  });
});

test('a list answered 429 with a Retry-After (the API server building its cache of shadows) is asked again, not a failed pass', async () => {
  await withShadowPass({}, async ({ server, said, passes, addresses }) => {
    server.failNext({ method: 'GET', pathIncludes: '/shadowendpointslices' }, 429);
    await waitFor(() => passes() >= 1, { timeoutMs: 5000, description: 'the first pass' });
    assert.equal(said(/pass failed/), 0);
    assert.equal(addresses('web-abcde'), REPAIRED);
    assert.equal(server.requests.filter((r) => r.path.endsWith('/shadowendpointslices') && r.status === 429).length, 1);
  });
});

test('a shadow deleted between the list and its patch (404) is gone, not an error: no warning, no retry of the pass', async () => {
  await withShadowPass({}, async ({ passes, server, metrics, said }) => {
    server.failNext({ method: 'PATCH', pathIncludes: '/shadowendpointslices/' }, 404);
    await waitFor(() => passes() >= 1, { description: 'the first pass' });
    const text = await metrics.registry.metrics();
    assert.match(text, /shortcut_webhook_shadows_reconciled_total\{result="gone"\} 1\n/);
    assert.match(text, /shortcut_webhook_shadows_reconciled_total\{result="error"\} 0\n/);
    assert.equal(said(/had errors or conflicts/), 0, 'no retry scheduled');
  });
});
