// The shortcut view from the Kubernetes API, against a test server speaking the real list/watch protocol.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { ClusterShortcutSource } from '../../src/view/cluster-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { configurationObject, connectionObject, fccObject, type FccSpec } from '../support/builders.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const FAST = { initialMs: 10, maxMs: 50 };

async function configFor(server: KubeApiServer): Promise<KubeConfig> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return config;
}

function usable(store: SnapshotStore, cluster = 'cluster2'): string[] {
  return store.current().forCluster(cluster).states.map((s) => (s.usable ? `${s.fcc}:usable` : `${s.fcc}:${s.reason}`));
}

async function withSource(
  run: (context: { server: KubeApiServer; store: SnapshotStore; source: ClusterShortcutSource; restarts: () => number }) => Promise<void>,
  options: {
    namespace?: string; local?: boolean; seed?: FccSpec[]; connections?: object[]; withoutConnections?: boolean;
    configurations?: object[]; withoutConfigurations?: boolean;
  } = {},
): Promise<void> {
  const server = await startKubeApiServer();
  if (options.withoutConnections) server.unregisterResource({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection' });
  if (options.withoutConfigurations) server.unregisterResource({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'Configuration' });
  for (const spec of options.seed ?? []) await server.create(fccObject(spec));
  for (const object of options.connections ?? []) await server.create(object);
  for (const object of options.configurations ?? []) await server.create(object);
  const store = new SnapshotStore();
  let restarts = 0;
  const config = await configFor(server);
  const source = new ClusterShortcutSource({
    store, logger: createLogger('silent'), shortcutsConfig: config, namespace: options.namespace,
    localConfig: options.local === false ? undefined : config, onRestart: () => restarts++, backoff: FAST,
  });
  try {
    await source.start();
    await run({ server, store, source, restarts: () => restarts });
  } finally {
    await source.stop();
    await server.close();
  }
}

test('is ready after the first list, even with no FCCs at all', async () => {
  await withSource(async ({ store }) => {
    await waitFor(() => store.isSynced(), { description: 'synced' });
    assert.equal(store.current().fccs.length, 0);
  });
});

test('follows FCCs being created, connected, changed and deleted', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => store.isSynced());
    await server.create(fccObject({ connected: false }));
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:not-connected');
    const stored = server.get({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' });
    assert.ok(stored);
    await server.updateStatus({ ...stored, status: { ...(stored.status as object), isConnected: true } });
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable');
    await server.remove({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' });
    await waitFor(() => store.current().fccs.length === 0);
  });
});

test('watches one namespace when asked', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => store.isSynced());
    await server.create(fccObject({ name: 'elsewhere', namespace: 'other', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' }));
    await server.create(fccObject({ name: 'here', namespace: 'liqo' }));
    await waitFor(() => store.current().fccs.length === 1);
    assert.equal(store.current().fccs[0]?.ref, 'liqo/here');
  }, { namespace: 'liqo', seed: [{ name: 'seeded', namespace: 'other' }] });
});

test('a dropped watch is restarted and counted, and no change is lost', async () => {
  await withSource(async ({ server, store, restarts }) => {
    // All three watches (FCCs, Connections, Configurations) open, so the drop hits the FCC watch for sure.
    await waitFor(() => store.isSynced() && server.openWatches() >= 3);
    server.dropWatches();
    await server.create(fccObject());
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable', { description: 'the change after the drop is seen' });
    assert.ok(restarts() >= 1);
  });
});

test('view_watch_restarts counts restarts only: 0 after the first sync, exactly 1 after one dropped watch', async () => {
  // Without a local cluster there is one watch (FCCs), so one drop is one restart.
  await withSource(async ({ server, store, restarts }) => {
    const watchRequests = () => server.requests.filter((r) => r.watch && r.path.endsWith('/foreignclusterconnections')).length;
    await waitFor(() => store.isSynced() && server.openWatches() === 1);
    assert.equal(restarts(), 0, 'the first watch is no restart');
    server.dropWatches();
    await waitFor(() => watchRequests() === 2 && server.openWatches() === 1, { description: 'the watch is open again' });
    assert.equal(restarts(), 1);
  }, { local: false });
});

test('410 Gone after compaction makes it list again, consistently', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => store.isSynced() && server.openWatches() >= 1);
    await waitFor(() => server.openWatches() >= 3);
    server.dropWatches();
    await server.create(fccObject({ name: 'during-outage' }));
    await server.remove({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'seeded' });
    server.compact();
    await waitFor(() => store.current().fccs.map((f) => f.ref).join() === 'liqo/during-outage', { description: 'relisted view' });
    const lists = server.requests.filter((r) => !r.watch && r.method === 'GET' && r.path.endsWith('/foreignclusterconnections'));
    assert.ok(lists.length >= 2, 'listed again');
  }, { seed: [{ name: 'seeded' }] });
});

test('keeps serving the last good view while the API is away, then catches up', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => usable(store).length === 1);
    const syncedBefore = store.lastSync();
    server.setAvailable(false);
    await waitFor(() => server.requests.filter((r) => r.status === 503).length >= 3, { description: 'retries while down' });
    assert.deepEqual(usable(store), ['liqo/cluster2-cluster3:usable']);
    assert.equal(store.lastSync(), syncedBefore, 'lastSync does not pretend');
    server.setAvailable(true);
    await server.create(fccObject({ name: 'after', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' }));
    await waitFor(() => usable(store).length === 2, { description: 'caught up after the outage' });
    assert.ok((store.lastSync() ?? 0) > (syncedBefore ?? 0));
  }, { seed: [{}] });
});

function connection(peer: string, value: string): object {
  return {
    apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection',
    metadata: { name: 'gw', namespace: `liqo-tenant-${peer}`, labels: { 'liqo.io/remote-cluster-id': peer } },
    spec: {}, status: { value },
  };
}

test('a peer whose Liqo Connection is not Connected is tunnel-down until it is', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:tunnel-down', { description: 'tunnel down at start' });
    assert.equal(store.current().version <= 2, true, 'the first FCC snapshot already knew the tunnel state');
    const stored = server.get({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection', namespace: 'liqo-tenant-cluster3', name: 'gw' });
    assert.ok(stored);
    await server.updateStatus({ ...stored, status: { value: 'Connected' } });
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable', { description: 'tunnel up' });
  }, { seed: [{}], connections: [connection('cluster3', 'Error')] });
});

test('an FCC touched where the view does not read (status.lastUpdated) is published but makes no new snapshot', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable', { description: 'usable at start' });
    let published = 0;
    const publish = store.publishFccs.bind(store);
    store.publishFccs = (fccs) => { published++; return publish(fccs); };
    const snapshot = store.current();
    const ref = { apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' };
    const stored = server.get(ref);
    assert.ok(stored);
    await server.updateStatus({ ...stored, status: { ...(stored.status as object), lastUpdated: '2026-11-22T00:00:00Z' } });
    await waitFor(() => published > 0, { description: 'the touch was published' });
    assert.equal(store.current(), snapshot);
    const touched = server.get(ref);
    assert.ok(touched);
    await server.updateStatus({ ...touched, status: { ...(touched.status as object), isConnected: false } });
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:not-connected', { description: 'a real change still lands' });
  }, { seed: [{}], withoutConnections: true });
});

test('without the Connection CRD the FCC alone decides', async () => {
  await withSource(async ({ store }) => {
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable');
  }, { seed: [{}], withoutConnections: true });
});

test('FCCs can come from another cluster (the hub) while Connections come from the local one', async () => {
  const hub = await startKubeApiServer();
  const leaf = await startKubeApiServer();
  await hub.create(fccObject());
  await leaf.create(connection('cluster3', 'Connecting'));
  const store = new SnapshotStore();
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub),
    namespace: undefined, localConfig: await configFor(leaf), backoff: FAST });
  try {
    await source.start();
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:tunnel-down');
    assert.equal(leaf.requests.some((r) => r.path.includes('foreignclusterconnections')), false, 'FCCs are not read from the leaf');
  } finally {
    await source.stop();
    await hub.close();
    await leaf.close();
  }
});

test('a rejected token (401) keeps the view unsynced and retrying, without a crash', async () => {
  const server = await startKubeApiServer({ token: 'right' });
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig({ token: 'wrong' }));
  const store = new SnapshotStore();
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: config, namespace: undefined,
    localConfig: undefined, backoff: FAST });
  try {
    await source.start();
    await waitFor(() => server.requests.filter((r) => r.status === 401).length >= 3, { description: 'retries after 401' });
    assert.equal(store.isSynced(), false);
  } finally {
    await source.stop();
    await server.close();
  }
});

test('an injected 500 on the list is retried and the view then syncs', async () => {
  const server = await startKubeApiServer();
  server.failNext({ method: 'GET', pathIncludes: '/foreignclusterconnections', watch: false, count: 2 }, 500);
  await server.create(fccObject());
  const store = new SnapshotStore();
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: await configFor(server),
    namespace: undefined, localConfig: undefined, backoff: FAST });
  try {
    await source.start();
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable');
    assert.ok(server.requests.filter((r) => r.status === 500).length >= 2);
  } finally {
    await source.stop();
    await server.close();
  }
});

test('several Connections to one peer: the shortcut is usable only while all of them are Connected', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:tunnel-down', { description: 'one of two down' });
    const stored = server.get({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection', namespace: 'liqo-tenant-cluster3', name: 'gw-cluster3-b' });
    assert.ok(stored);
    await server.updateStatus({ ...stored, status: { value: 'Connected' } });
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable', { description: 'both up' });
  }, { seed: [{}], connections: [connectionObject('cluster3', 'Connected'), connectionObject('cluster3', 'Connecting', 'gw-cluster3-b')] });
});

const CONFIGURATION = { apiVersion: 'networking.liqo.io/v1beta1', kind: 'Configuration' } as const;

test('the leaf\'s Configurations make a pair local-overlap from the first snapshot, and follow changes', async () => {
  // cluster2's view of the hub's pods is where this FCC's A side claims cluster3's pods are.
  await withSource(async ({ server, store }) => {
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:local-overlap', { description: 'local-overlap at start' });
    assert.equal(store.current().version <= 3, true, 'the first FCC snapshot already knew the views');
    assert.deepEqual(store.current().views.externalOf('cluster1', 'IPv4').map((c) => c.text), ['10.71.0.0/16']);
    const stored = server.get({ ...CONFIGURATION, namespace: 'liqo-tenant-cluster1', name: 'cluster1' });
    assert.ok(stored);
    await server.updateStatus({ ...stored, status: { remote: { cidr: { pod: ['10.210.0.0/16'], external: ['10.71.0.0/16'] } } } });
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable', { description: 'the hub\'s pods seen elsewhere now' });
    await server.create(configurationObject({ peer: 'cluster4', remotePodView: '10.200.0.0/16' }));
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:local-overlap', { description: 'another peer\'s pods there' });
    await server.remove({ ...CONFIGURATION, namespace: 'liqo-tenant-cluster4', name: 'cluster4' });
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable', { description: 'gone again' });
  }, { seed: [{ aPod: '10.200.0.0/16', aRemapped: '10.201.0.0/16' }], configurations: [configurationObject({ peer: 'cluster1' })] });
});

test('the identity pair on the leaf\'s own view of the peer stays usable in cluster mode', async () => {
  await withSource(async ({ store }) => {
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable');
    assert.equal(store.current().views.configurations.length, 2);
  }, {
    seed: [{ aPod: '10.61.0.0/16', aRemapped: '10.61.0.0/16' }],
    configurations: [configurationObject({ peer: 'cluster1' }), configurationObject({ peer: 'cluster3', remotePod: '10.63.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' })],
  });
});

test('without the Configuration CRD the view syncs and no pair is local-overlap', async () => {
  await withSource(async ({ server, store }) => {
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable');
    await waitFor(() => server.openWatches() >= 2);
    assert.ok(server.requests.some((r) => r.path.endsWith('/configurations') && r.status === 404), 'asked, and was told it is not there');
  }, { seed: [{ aPod: '10.200.0.0/16', aRemapped: '10.201.0.0/16' }], withoutConfigurations: true });
});

test('a Configuration forbidden to read (403) is handled like an absent one, said once and not as a problem', async () => {
  const server = await startKubeApiServer();
  server.failNext({ method: 'GET', pathIncludes: '/configurations', watch: false, count: 1000 }, 403);
  await server.create(fccObject({ aPod: '10.200.0.0/16', aRemapped: '10.201.0.0/16' }));
  await server.create(configurationObject({ peer: 'cluster1' }));
  const store = new SnapshotStore();
  const config = await configFor(server);
  const { logger, records } = recordingLogger();
  const source = new ClusterShortcutSource({ store, logger, shortcutsConfig: config, namespace: undefined, localConfig: config, backoff: FAST });
  try {
    await source.start();
    await waitFor(() => usable(store).join() === 'liqo/cluster2-cluster3:usable');
    assert.equal(store.current().views.configurations.length, 0);
    await waitFor(() => server.requests.filter((r) => r.path.endsWith('/configurations') && r.status === 403).length >= 2,
      { description: 'a second refused list' });
    const aboutConfigurations = records.filter((r) => JSON.stringify(r).includes('configurations'));
    assert.deepEqual(aboutConfigurations.map((r) => r.level), ['info'], 'one info line, no warning');
  } finally {
    await source.stop();
    await server.close();
  }
});
