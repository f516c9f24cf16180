// What the view notices, seen where a user sees it: the slice a write stores through the webhook. A leaf whose
// writes go through the real review code (webhookHook) and a stock hub, on two test API servers, read by the
// cluster source as `serve --shortcuts-kubeconfig` reads them. Each test changes one object in a way that keeps
// something the same (the CIDR sets, the object itself) and checks that the change still reaches the next write;
// and the two policies for a refused list (403) are told apart: the FCCs' is a failure, the hub's IPs' is "not known".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { JsonObject } from '../../src/core/json.ts';
import { createLogger } from '../../src/log.ts';
import { ClusterShortcutSource } from '../../src/view/cluster-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { configurationObject, fccObject, hubIpObject, sliceObject } from '../support/builders.ts';
import { DEFAULT_RESOURCES, LIQO_IPS, startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { storedAddresses } from '../support/serve-cluster.ts';
import { createStockWorld } from '../support/stock-world.ts';
import { waitFor } from '../support/wait-for.ts';

const FAST = { initialMs: 10, maxMs: 50 };

async function configFor(server: KubeApiServer): Promise<KubeConfig> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return config;
}

interface World { readonly leaf: KubeApiServer; readonly hub: KubeApiServer; readonly store: SnapshotStore; readonly source: ClusterShortcutSource }

/** The stock world of support/stock-world.ts plus `seed`, read by a started cluster source; all stopped afterwards. */
async function withWorld(seed: (world: Omit<World, 'source'>) => Promise<void>, run: (world: World) => Promise<void>): Promise<void> {
  const store = new SnapshotStore();
  const leaf = await startKubeApiServer({ mutate: webhookHook(store) });
  const hub = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES, LIQO_IPS] });
  const source = new ClusterShortcutSource({
    store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub), namespace: undefined,
    localConfig: await configFor(leaf), hubConfig: await configFor(hub), backoff: FAST,
  });
  try {
    await seed({ leaf, hub, store });
    await source.start();
    await waitFor(() => store.isSynced() && store.current().hub.known, { description: 'the view synced with the hub\'s IPAM' });
    await run({ leaf, hub, store, source });
  } finally {
    await source.stop();
    await leaf.close();
    await hub.close();
  }
}

/** Creates a slice named `name` holding `address` and returns what the leaf stored. */
async function stored(leaf: KubeApiServer, name: string, address: string): Promise<string> {
  await leaf.create(sliceObject({ name, addresses: [[address]] }));
  return storedAddresses(leaf, name);
}

/** Writes the leaf's Configuration for cluster3 anew, spec then status (its own subresource), as Liqo does. */
async function replaceConfiguration(leaf: KubeApiServer, object: JsonObject): Promise<void> {
  const ref = { apiVersion: 'networking.liqo.io/v1beta1', kind: 'Configuration', namespace: 'liqo-tenant-cluster3', name: 'cluster3' } as const;
  await leaf.update({ ...object, metadata: { ...leaf.get(ref)?.metadata } });
  await leaf.updateStatus({ ...object, metadata: { ...leaf.get(ref)?.metadata } });
}

test('a leaf Configuration whose spec and status pair otherwise (the same CIDR lists, spec reordered) moves resolved addresses', async () => {
  // cluster3 declares 10.60/16 and 10.66/16; the leaf sees them at 10.61/16 and 10.65/16, position by position.
  const cluster3 = (declared: string[]) => configurationObject({ peer: 'cluster3', remotePod: declared, remotePodView: ['10.61.0.0/16', '10.65.0.0/16'], remoteExternalView: '10.72.0.0/16' });
  await withWorld(async ({ leaf, hub }) => {
    await createStockWorld(leaf, hub);
    await replaceConfiguration(leaf, cluster3(['10.60.0.0/16', '10.66.0.0/16']));
  }, async ({ leaf, store }) => {
    assert.equal(await stored(leaf, 'before', '10.71.0.12'), '[["10.61.0.151"]]', 'web-0 (10.60.0.151 on cluster3) is seen at 10.61.0.151');
    const version = store.current().version;
    // Liqo's IPAM remapped the other way round: cluster3's 10.60/16 is now seen at 10.65/16. Only the pairing moved.
    await replaceConfiguration(leaf, cluster3(['10.66.0.0/16', '10.60.0.0/16']));
    await waitFor(() => store.current().version > version, { description: 'a new snapshot for the new pairing' });
    assert.deepEqual(store.current().views.configurationsOf('cluster3').flatMap((c) => c.remotePod.map((cidr) => cidr.text)),
      ['10.61.0.0/16', '10.65.0.0/16'], 'where the leaf sees cluster3\'s pods did not change');
    assert.equal(await stored(leaf, 'after', '10.71.0.12'), '[["10.65.0.151"]]');
  });
});

test('a hub IP that stops being kept on a watch update (its status.ip cleared: allocation undone) leaves the view', async () => {
  await withWorld(({ leaf, hub }) => createStockWorld(leaf, hub), async ({ leaf, hub, store }) => {
    assert.equal(await stored(leaf, 'before', '10.71.0.12'), '[["10.61.0.151"]]');
    const ip = hub.get({ apiVersion: 'ipam.liqo.io/v1alpha1', kind: 'IP', namespace: 'demo', name: 'web-0' });
    await hub.updateStatus({ ...hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: null }), metadata: { ...ip?.metadata } });
    await waitFor(() => {
      const { hub: ipam } = store.current();
      return ipam.known && ipam.ips.size === 0;
    }, { description: 'the IP left the view' });
    assert.equal(await stored(leaf, 'after', '10.71.0.12'), '[["10.71.0.12"]]', 'no pod is at 10.70.0.12 any more');
  });
});

test('an FCC that stops naming this cluster on a watch update stops rewriting its slices', async () => {
  await withWorld(async ({ hub }) => {
    await hub.create(fccObject());
  }, async ({ leaf, hub, store }) => {
    assert.equal(await stored(leaf, 'before', '10.63.0.151'), '[["10.61.0.151"]]');
    const current = hub.get({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' });
    const moved = fccObject({ a: 'cluster4' });
    await hub.update({ ...moved, metadata: { ...current?.metadata } });
    await waitFor(() => store.current().fccs[0]?.clusterA === 'cluster4', { description: 'the FCC update is in the view' });
    assert.equal(store.current().forCluster('cluster2').states.length, 0);
    assert.equal(await stored(leaf, 'after', '10.63.0.151'), '[["10.63.0.151"]]');
  });
});

test('403 on the FCC list is a failing source (the hub reader lacks rights it is given), never synced as empty', async () => {
  const hub = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES, LIQO_IPS] });
  hub.failNext({ method: 'GET', pathIncludes: '/foreignclusterconnections', count: 1_000_000 }, 403);
  const store = new SnapshotStore();
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub), namespace: undefined,
    localConfig: undefined, hubConfig: await configFor(hub), backoff: FAST });
  try {
    await source.start();
    const failure = await waitFor(() => source.failing(), { description: 'the FCCs fail' });
    assert.equal(failure.source, 'the ForeignClusterConnections');
    assert.match(failure.problem, /403|[Ff]orbidden/);
    await waitFor(() => hub.requests.filter((r) => r.path.includes('/foreignclusterconnections') && r.status === 403).length >= 3,
      { description: 'the list is tried again' });
    assert.equal(store.isSynced(), false, 'a refused list is not an empty one');
  } finally {
    await source.stop();
    await hub.close();
  }
});

test('403 on the hub\'s IPs means "not known": hub-external stays, the view is synced and nothing fails', async () => {
  const store = new SnapshotStore();
  const leaf = await startKubeApiServer({ mutate: webhookHook(store) });
  const hub = await startKubeApiServer({ resources: [...DEFAULT_RESOURCES, LIQO_IPS] });
  await createStockWorld(leaf, hub);
  hub.failNext({ method: 'GET', pathIncludes: '/ips', count: 1_000_000 }, 403);
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub), namespace: undefined,
    localConfig: await configFor(leaf), hubConfig: await configFor(hub), backoff: FAST });
  try {
    await source.start();
    await waitFor(() => store.isSynced(), { description: 'synced' });
    const { hub: ipam } = store.current();
    assert.equal(ipam.known, false);
    assert.match(ipam.known ? '' : ipam.why, /refuses to list ips\.ipam\.liqo\.io \(403\)/);
    await waitFor(() => hub.requests.filter((r) => r.path.endsWith('/ips') && r.status === 403).length >= 2, { description: 'a second refused list' });
    assert.equal(source.failing(), undefined);
    assert.equal(await stored(leaf, 'allocated', '10.71.0.12'), '[["10.71.0.12"]]', 'left as it is: hub-external');
  } finally {
    await source.stop();
    await leaf.close();
    await hub.close();
  }
});
