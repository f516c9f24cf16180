// One reader per hub, as `serve --shortcuts-kubeconfig cluster1=F1 --shortcuts-kubeconfig cluster9=F9` runs them: each
// hub's FCCs and IPAM objects land in that hub's part of the view, a reader scoped with --hub-namespace reads nothing
// elsewhere, and one hub away makes only its own objects wait, on test API servers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { ClusterShortcutSource } from '../../src/view/cluster-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fccObject, hubIpObject } from '../support/builders.ts';
import { DEFAULT_RESOURCES, LIQO_IPS, startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { waitFor } from '../support/wait-for.ts';

const FAST = { initialMs: 10, maxMs: 50 };

async function configFor(server: KubeApiServer): Promise<KubeConfig> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return config;
}

async function hubServer(): Promise<KubeApiServer> {
  return startKubeApiServer({ resources: [...DEFAULT_RESOURCES, LIQO_IPS] });
}

test('each bound reader\'s FCCs and IPs are its own hub\'s part; one hub away makes only its objects wait', async () => {
  const [hub1, hub9] = [await hubServer(), await hubServer()];
  const store = new SnapshotStore();
  await hub1.create(fccObject({ name: 'on-cluster1' }));
  await hub9.create(fccObject({ name: 'on-cluster9' }));
  await hub9.create(hubIpObject({ pod: 'web-0', ip: '10.64.0.20', allocated: '10.70.0.12' }));
  const source = new ClusterShortcutSource({
    store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub1), namespace: undefined, localConfig: undefined,
    hubs: [{ id: 'cluster1', config: await configFor(hub1) }, { id: 'cluster9', config: await configFor(hub9) }],
    hubAwayAfterMs: 300, backoff: FAST, startupPatienceMs: 0,
  });
  try {
    await source.start();
    await waitFor(() => store.isSynced() && store.current().hubs.every((part) => part.ipam.known), { description: 'both hubs read' });
    const parts = store.current().hubs.map((part) => ({ id: part.id, fccs: part.fccs.map((fcc) => fcc.ref), ips: part.ipam.known ? part.ipam.ips.size : -1 }));
    assert.deepEqual(parts, [{ id: 'cluster1', fccs: ['liqo/on-cluster1'], ips: 0 }, { id: 'cluster9', fccs: ['liqo/on-cluster9'], ips: 1 }]);
    assert.equal(store.current().hubFor('cluster9').read, true);

    await hub9.close();
    await waitFor(() => !store.current().hubFor('cluster9').read, { timeoutMs: 10_000, description: 'cluster9 away' });
    const away = store.current().hubFor('cluster9');
    assert.match(away.read ? '' : away.detail, /away: every read of .* has failed since/);
    assert.equal(store.current().hubFor('cluster1').read, true, 'the other hub is decided as before');
    assert.equal(source.failing(), undefined, 'one hub away is not the view failing: the replica stays ready');
  } finally {
    await source.stop();
    await hub1.close();
    await hub9.close().catch(() => undefined);
  }
});

test('--hub-namespace: the reader lists and watches only the named namespaces', async () => {
  const hub = await hubServer();
  const store = new SnapshotStore();
  await hub.create(fccObject({ name: 'named', namespace: 'default' }));
  await hub.create(fccObject({ name: 'elsewhere', namespace: 'other', a: 'cluster2', b: 'cluster4' }));
  await hub.create(hubIpObject({ pod: 'web-0', namespace: 'demo', ip: '10.63.0.151', allocated: '10.70.0.12' }));
  await hub.create(hubIpObject({ pod: 'web-1', namespace: 'secret', ip: '10.63.0.152', allocated: '10.70.0.13' }));
  const source = new ClusterShortcutSource({
    store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub), namespace: undefined, localConfig: undefined,
    hubs: [{ id: undefined, config: await configFor(hub) }], hubNamespaces: ['default', 'demo'], backoff: FAST, startupPatienceMs: 0,
  });
  try {
    await source.start();
    await waitFor(() => store.isSynced() && store.current().hub.known, { description: 'the hub read' });
    const [part] = store.current().hubs;
    assert.deepEqual(part?.fccs.map((fcc) => fcc.ref), ['default/named']);
    assert.deepEqual(part?.ipam.known ? [...part.ipam.ips.ipv4.values()].flat().map((ip) => ip.ref) : [], ['demo/web-0']);
    const paths = hub.requests.map((request) => request.path.split('?')[0] ?? '').filter((path) => /foreignclusterconnections|\/ips|configurations/.test(path));
    assert.ok(paths.length > 0 && paths.every((path) => /\/namespaces\/(default|demo)\//.test(path)), paths.join('\n'));
  } finally {
    await source.stop();
    await hub.close();
  }
});
