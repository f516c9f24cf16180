// The list/watch loop under the faults a hub meets in production: an outage of any length followed by an answer the
// owner expects (a 404 for an optional CRD), a right revoked while a watch is open (the watch's 403, or an ERROR event
// with 403), a server that keeps failing every watch. In each, what the server answers must reach the list, where the
// owner decides, and the source must be live again once the server answers.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { ClusterShortcutSource } from '../../src/view/cluster-source.ts';
import { HubIpamSource } from '../../src/view/hub-source.ts';
import { keepObject, ListWatch } from '../../src/view/list-watch.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { configurationObject, hubIpObject } from '../support/builders.ts';
import { FOREIGN_CLUSTER_CONNECTIONS, LIQO_IPS, startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { localKubeConfig } from '../support/local-kubeconfig.ts';
import { waitFor } from '../support/wait-for.ts';

const FAST = { initialMs: 10, maxMs: 50 };

async function configFor(server: KubeApiServer): Promise<KubeConfig> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return config;
}

test('a hub away for longer than the longest backoff, then answering 404 for the FCCs (stock Liqo), is live again', async () => {
  const hub = await startKubeApiServer();
  hub.unregisterResource({ apiVersion: 'networking.liqo.io/v1beta1', kind: FOREIGN_CLUSTER_CONNECTIONS.kind });
  const store = new SnapshotStore();
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub), namespace: undefined, localConfig: undefined, backoff: FAST });
  try {
    await source.start();
    await waitFor(() => store.isSynced(), { description: 'synced with no FCC CRD' });
    assert.equal(source.failing(), undefined, 'no FCC CRD is a state, not a failure');
    hub.setAvailable(false);
    await waitFor(() => source.failing() !== undefined, { description: 'the outage seen' });
    // Six refused lists: past the backoff's cap (50 ms here, reached at the third), the outage outlasts every step.
    await waitFor(() => hub.requests.filter((r) => r.status === 503).length >= 6, { description: 'the outage lasts' });
    const listsBefore = hub.requests.length;
    hub.setAvailable(true);
    await waitFor(() => hub.requests.some((r, i) => i >= listsBefore && r.path.includes('foreignclusterconnections') && r.status === 404),
      { description: 'the FCC list answered 404 again' });
    // A 404 from a server back from an outage is believed after 5 s of it (its CRDs may not be served yet): then live.
    await waitFor(() => source.failing() === undefined, { description: 'the source is live again', timeoutMs: 10_000 });
  } finally {
    await source.stop();
    await hub.close();
  }
});

test('with no FCC CRD (a stock hub) each 404 keeps the view fresh: view_last_sync moves on, so no stale-view alert fires', async () => {
  const hub = await startKubeApiServer();
  hub.unregisterResource({ apiVersion: 'networking.liqo.io/v1beta1', kind: FOREIGN_CLUSTER_CONNECTIONS.kind });
  let now = 1000;
  const store = new SnapshotStore(() => now);
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: await configFor(hub), namespace: undefined, localConfig: undefined, backoff: FAST });
  try {
    await source.start();
    await waitFor(() => store.isSynced(), { description: 'synced with no FCC CRD' });
    const first = store.lastSync();
    now = 2000;
    const refused = () => hub.requests.filter((r) => r.path.includes('foreignclusterconnections') && r.status === 404).length;
    const before = refused();
    await waitFor(() => refused() > before + 1, { description: 'two more 404 lists' });
    assert.equal(first, 1000);
    assert.equal(store.lastSync(), 2000, 'a list answered 404 is the source answering: the view of no FCCs is current');
  } finally {
    await source.stop();
    await hub.close();
  }
});

async function hubWithOneIp(): Promise<{ hub: KubeApiServer; store: SnapshotStore; source: HubIpamSource }> {
  const hub = await startKubeApiServer();
  hub.registerResource(LIQO_IPS);
  await hub.create(configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.81.0.0/16' }));
  await hub.create(hubIpObject({ pod: 'db-0', ip: '10.81.0.17', allocated: '10.70.0.5' }));
  const store = new SnapshotStore();
  const source = new HubIpamSource({ store, logger: createLogger('silent'), config: await configFor(hub), backoff: FAST });
  source.start();
  await waitFor(() => { const known = store.current().hub; return known.known && known.ips.size === 1; }, { description: 'the hub\'s IP known' });
  return { hub, store, source };
}

for (const [what, resource] of [['IPs', '/ips'], ['Configurations', '/configurations']] as const) {
  test(`the hub's ${what} refused on an open watch's renewal (403) are listed again: hub-external, and known again once given back`, async () => {
    const { hub, store, source } = await hubWithOneIp();
    try {
      // The right revoked: the open watch carries on (RBAC is checked when a request starts) until the server ends it
      // at its timeout; the renewed watch is refused, and so are the lists, until the right is given back.
      hub.failNext({ pathIncludes: resource, watch: true, count: 1 }, 403);
      hub.failNext({ pathIncludes: resource, watch: false, count: 3 }, 403);
      hub.endWatches();
      await waitFor(() => !store.current().hub.known, { description: 'the hub\'s IPAM unknown once refused' });
      const hubState = store.current().hub;
      assert.ok(!hubState.known && hubState.why.includes('403'), JSON.stringify(hubState));
      assert.equal(source.failing(), undefined, 'a refusal is a state of the hub, not a failing source');
      await waitFor(() => { const known = store.current().hub; return known.known && known.ips.size === 1; },
        { description: 'known again once the lists are allowed' });
    } finally {
      await source.stop();
      await hub.close();
    }
  });
}

/**
 * A server for one ListWatch: lists answer one object at resourceVersion 5; each watch is answered by `watch`
 * (called with how many watches came before).
 */
async function scriptedServer(watch: (index: number, response: ServerResponse) => void) {
  const listedAt: number[] = [];
  /** How many watches had come before each list. */
  const watchesBeforeList: number[] = [];
  let watches = 0;
  const open: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.searchParams.get('watch') === 'true') {
      open.push(response);
      watch(watches++, response);
      return;
    }
    listedAt.push(performance.now());
    watchesBeforeList.push(watches);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: [], metadata: { resourceVersion: '5' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const config = localKubeConfig(server);
  const close = () => {
    for (const response of open) response.destroy();
    server.close();
  };
  return { config, lists: () => listedAt.length, listedAt, watchesBeforeList, watches: () => watches, close };
}

function loopOn(config: KubeConfig, statuses: (number | undefined)[]): ListWatch<unknown> {
  const api = new URL(config.getCurrentCluster()?.server ?? '');
  return new ListWatch({
    name: 'things', config, watchPath: '/api/v1/things', keep: keepObject, onChange: () => {}, logger: createLogger('silent'), backoff: FAST,
    list: async () => {
      const answer = await fetch(new URL('/api/v1/things', api));
      const body = await answer.json() as { items: unknown[]; metadata: { resourceVersion: string } };
      return { items: body.items, resourceVersion: body.metadata.resourceVersion };
    },
    onListError: (status) => { statuses.push(status); return 'unexpected'; },
  });
}

test('an ERROR event with code 403 (a watch the server ends as refused) lists again, where the owner decides', async () => {
  const server = await scriptedServer((index, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
    if (index === 0) response.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403 } })}\n`);
  });
  const loop = loopOn(server.config, []);
  loop.start();
  try {
    await waitFor(() => server.lists() >= 2, { description: 'a second list after the refused watch' });
  } finally {
    await loop.stop();
    server.close();
  }
});

test('a watch refused again after the list that followed a refusal lists again only after the backoff: no hot loop', async () => {
  const server = await scriptedServer((_index, response) => {
    response.writeHead(403, { 'content-type': 'application/json' }).end('{"kind":"Status","code":403}');
  });
  const loop = loopOn(server.config, []);
  loop.start();
  try {
    await waitFor(() => server.lists() >= 5, { description: 'lists after refused watches' });
    // The first refusal lists at once; each one after it waits out a backoff (at least 5 ms here) before its list.
    const gaps = server.listedAt.slice(2, 5).map((at, i) => at - server.listedAt[i + 1]!);
    assert.ok(gaps.every((gap) => gap >= 5), `gaps between lists: ${gaps.map((gap) => gap.toFixed(1)).join(', ')} ms`);
  } finally {
    await loop.stop();
    server.close();
  }
});

test('a server that fails every watch with a 5xx is listed again after three attempts, so a list can say what it now serves', async () => {
  const server = await scriptedServer((_index, response) => {
    response.writeHead(504, { 'content-type': 'application/json' }).end('{"kind":"Status","code":504,"reason":"Timeout","message":"Too large resource version"}');
  });
  const loop = loopOn(server.config, []);
  loop.start();
  try {
    await waitFor(() => server.lists() >= 2, { description: 'a list after three failed watches' });
    assert.deepEqual(server.watchesBeforeList.slice(0, 2), [0, 3], 'three watches before the second list');
  } finally {
    await loop.stop();
    server.close();
  }
});

test('a list answered 429 with Retry-After (a restarted API server filling its watch cache) is tried again when asked, not after the backoff', async () => {
  const server = await scriptedServer((_index, response) => { response.writeHead(200, { 'content-type': 'application/json' }).flushHeaders(); });
  let lists = 0;
  const statuses: (number | undefined)[] = [];
  const loop = new ListWatch({
    name: 'things', config: server.config, watchPath: '/api/v1/things', keep: keepObject, onChange: () => {}, logger: createLogger('silent'),
    // A backoff far longer than the test: only Retry-After can bring the next list in time.
    backoff: { initialMs: 600_000, maxMs: 600_000 },
    list: async () => {
      if (++lists <= 2) throw new ApiException(429, 'Too Many Requests', '{"kind":"Status","code":429,"message":"storage is (re)initializing"}', { 'retry-after': '0' });
      return { items: [], resourceVersion: '5' };
    },
    onListError: (status) => { statuses.push(status); return 'unexpected'; },
  });
  loop.start();
  try {
    await waitFor(() => lists >= 3 && loop.failing() === undefined, { description: 'listed after two 429s', timeoutMs: 10_000 });
    assert.deepEqual(statuses, [429, 429]);
  } finally {
    await loop.stop();
    server.close();
  }
});

test('stop() ends a loop whose watch the server has not answered yet (a hub that accepts and stays silent): shutdown is not held up', async () => {
  // Headers never sent: the watch request waits for them, and client-node hands over no abort handle until they come.
  const server = await scriptedServer(() => {});
  const loop = loopOn(server.config, []);
  loop.start();
  try {
    await waitFor(() => server.watches() >= 1, { description: 'the watch asked for' });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      loop.stop().then(() => 'stopped'),
      new Promise<string>((resolve) => { timer = setTimeout(() => resolve('still waiting after 5 s'), 5000); }),
    ]);
    clearTimeout(timer);
    assert.equal(outcome, 'stopped');
  } finally {
    server.close();
  }
});

for (const [status, what] of [[403, 'a right revoked on an open watch (its renewal answered 403)'], [404, 'a resource no longer served (a watch answered 404: its CRD removed, its namespace gone)']] as const) {
  test(`${what} is listed again at once, not after a backoff`, async () => {
    const server = await scriptedServer((index, response) => {
      if (index === 0) response.writeHead(status, { 'content-type': 'application/json' }).end(`{"kind":"Status","code":${status}}`);
      else response.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
    });
    const api = new URL(server.config.getCurrentCluster()?.server ?? '');
    const loop = new ListWatch({
      name: 'things', config: server.config, watchPath: '/api/v1/things', keep: keepObject, onChange: () => {}, logger: createLogger('silent'),
      // A backoff far longer than the test: only a list at once brings the owner's decision in time.
      backoff: { initialMs: 600_000, maxMs: 600_000 },
      list: async () => {
        const answer = await fetch(new URL('/api/v1/things', api));
        const body = await answer.json() as { items: unknown[]; metadata: { resourceVersion: string } };
        return { items: body.items, resourceVersion: body.metadata.resourceVersion };
      },
    });
    loop.start();
    try {
      await waitFor(() => server.lists() >= 2, { description: `the list after the watch answered ${status}`, timeoutMs: 10_000 });
      assert.deepEqual(server.watchesBeforeList.slice(0, 2), [0, 1]);
    } finally {
      await loop.stop();
      server.close();
    }
  });
}

test('a server that gives the same continue token again fails the list, said as a problem, and is asked again after the backoff: no list read for ever', async () => {
  const server = await startKubeApiServer();
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const tokens: (string | undefined)[] = [];
  const watch = new ListWatch<unknown>({
    name: 'connections', config, logger: createLogger('silent'), backoff: FAST,
    watchPath: '/apis/networking.liqo.io/v1beta1/connections',
    list: async (token) => {
      tokens.push(token);
      // A page as from the network, after a turn of the event loop; its token is always the same one.
      await new Promise((resolve) => setImmediate(resolve));
      return { items: [], resourceVersion: '1', continueToken: 'page-2' };
    },
    keep: keepObject,
    onChange: () => {},
  });
  try {
    watch.start();
    const failure = await waitFor(() => watch.failing(), { description: 'the list said failing' });
    assert.match(failure.problem, /same continue token twice/);
    await waitFor(() => tokens.filter((token) => token === undefined).length >= 2, { description: 'a second list from its first page' });
    // Each list asks for the first page and the repeated token's page once, then gives up.
    assert.deepEqual(tokens.slice(0, 3), [undefined, 'page-2', undefined]);
  } finally {
    await watch.stop();
    await server.close();
  }
});
