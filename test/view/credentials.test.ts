// The cluster source across credential rotations and outages: watches follow a reloaded kubeconfig, a 401 makes it
// read the kubeconfig again, no empty view is published on the way, and failing() says when the FCCs stop answering.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readKubeConfig, ReloadingKubeConfig } from '../../src/kube/reloading-config.ts';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { readListPage } from '../../src/kube/client.ts';
import { ClusterShortcutSource } from '../../src/view/cluster-source.ts';
import { keepObject, ListWatch } from '../../src/view/list-watch.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fccObject } from '../support/builders.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';
import { writeTokenKubeconfig } from '../support/token-kubeconfig.ts';

const FAST = { initialMs: 10, maxMs: 50 };
const dirs: string[] = [];
after(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); });

const writeKubeconfig = writeTokenKubeconfig;

interface Context {
  readonly server: KubeApiServer;
  readonly store: SnapshotStore;
  readonly source: ClusterShortcutSource;
  readonly config: ReloadingKubeConfig;
  readonly file: string;
  readonly records: readonly Record<string, unknown>[];
  /** FCC counts of every snapshot published after the first sync. */
  readonly published: number[];
  readonly restarts: () => number;
  readonly requests: (watch: boolean) => number;
}

async function withRotatingSource(run: (context: Context) => Promise<void>, options: { local?: boolean } = {}): Promise<void> {
  const server = await startKubeApiServer({ token: 'first' });
  await server.create(fccObject());
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-rotation-'));
  dirs.push(dir);
  const file = join(dir, 'kubeconfig');
  writeKubeconfig(file, server, 'first');
  const { logger, records } = recordingLogger();
  const config = new ReloadingKubeConfig({
    load: () => {
      const read = readKubeConfig(file, {});
      if (read === undefined) throw new Error('no config');
      return read;
    },
    origin: file, files: [file], logger, pollIntervalMs: 20,
  });
  const store = new SnapshotStore();
  const published: number[] = [];
  store.subscribe((snapshot) => published.push(snapshot.fccs.length));
  let restarts = 0;
  const source = new ClusterShortcutSource({
    store, logger, shortcutsConfig: config, namespace: undefined, localConfig: options.local === true ? config : undefined,
    backoff: FAST, onRestart: () => restarts++,
  });
  const requests = (watch: boolean) => server.requests.filter((r) => r.watch === watch && r.path.endsWith('/foreignclusterconnections')).length;
  try {
    await source.start();
    await waitFor(() => store.current().fccs.length === 1 && server.openWatches() >= 1, { description: 'synced and watching' });
    config.watch();
    await run({ server, store, source, config, file, records, published, restarts: () => restarts, requests });
  } finally {
    config.close();
    await source.stop();
    await server.close();
  }
}

test('a kubeconfig rotated on disk reopens the open watch with the new token, from where it stood: no relist, no restart counted', async () => {
  await withRotatingSource(async ({ server, store, file, records, restarts, requests, published }) => {
    const lists = requests(false);
    const watches = requests(true);
    server.setToken('second');
    writeKubeconfig(file, server, 'second');
    await waitFor(() => requests(true) === watches + 1 && server.openWatches() === 1, { description: 'the watch is reopened' });
    await server.create(fccObject({ name: 'after-rotation' }));
    await waitFor(() => store.current().fccs.length === 2, { description: 'a change after the rotation is followed' });
    assert.equal(requests(false), lists, 'resumed from its resourceVersion, not listed again');
    assert.equal(restarts(), 0, 'a reload is not a dropped watch');
    assert.deepEqual(published.filter((count) => count < 1), [], 'no empty view on the way');
    assert.equal(records.filter((r) => r.msg === 'credentials reloaded').length, 1);
    assert.equal(server.requests.filter((r) => r.status === 401).length, 0, 'the new token was used from the start');
  });
});

test('revoked under an open watch: the next list and watch get 401, the kubeconfig is read again, and the view follows with no empty moment', async () => {
  await withRotatingSource(async ({ server, store, source, config, file, records, published }) => {
    // The operator's new file is there, but no file event arrives (polling is slow, or the volume sends none): the 401 is the signal.
    config.close();
    writeKubeconfig(file, server, 'second');
    server.setToken('second');
    // The hub restarts: every stream ends, and the old token is refused from now on.
    server.dropWatches();
    await server.create(fccObject({ name: 'after-revocation' }));
    await waitFor(() => store.current().fccs.length === 2, { description: 'the view follows with the new token' });
    assert.ok(server.requests.some((r) => r.status === 401), 'the old token was refused first');
    assert.deepEqual(published.filter((count) => count < 1), [], 'no empty view on the way');
    assert.ok(records.some((r) => r.msg === 'the API server refuses these credentials (401): reading them again'));
    assert.equal(config.status().reloads, 1);
    assert.equal(config.status().refused, null, 'accepted again');
    assert.equal(source.failing(), undefined);
  });
});

test('while the token is refused, failing() says since when and why, and the view stays as it was', async () => {
  await withRotatingSource(async ({ server, store, source, config, records }) => {
    assert.equal(source.failing(), undefined);
    const before = Date.now();
    server.setToken('nobody-has-this');
    server.dropWatches();
    // The dropped stream is the first failure; the 401 of the next attempts is the problem said.
    const failure = await waitFor(() => { const now = source.failing(); return now !== undefined && /401/.test(now.problem) ? now : undefined; },
      { description: 'the FCC source fails with 401' });
    assert.ok(failure.since >= before);
    assert.equal(store.current().fccs.length, 1, 'the last good view is kept');
    await waitFor(() => config.status().refused?.status === 401);
    const first = failure.since;
    await waitFor(() => server.requests.filter((r) => r.status === 401).length >= 4, { description: 'retries' });
    assert.equal(source.failing()?.since, first, 'counted from the first failure, not the last');
    assert.equal(records.filter((r) => r.msg === 'the API server refuses these credentials (401): reading them again').length, 1,
      'one line for the outage, not one per retry');
    server.setToken('first');
    await waitFor(() => source.failing() === undefined, { description: 'answers again' });
  });
});

test('a list failure its owner expects (a resource this cluster does not serve) is not a failing source; an unexpected one is', async () => {
  const server = await startKubeApiServer();
  server.unregisterResource({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection' });
  const kubeconfig = await server.kubeconfig();
  const config = new ReloadingKubeConfig({
    load: () => {
      const read = readKubeConfig(kubeconfig, {});
      if (read === undefined) throw new Error('no config');
      return read;
    },
    origin: 'test', files: [], logger: recordingLogger().logger,
  });
  const api = config.makeApiClient(CustomObjectsApi);
  const watches = (['expected', 'unexpected'] as const).map((verdict) => new ListWatch({
    name: `connections-${verdict}`, config, logger: recordingLogger().logger, backoff: FAST, keep: keepObject,
    watchPath: '/apis/networking.liqo.io/v1beta1/connections',
    list: async () => readListPage(await api.listClusterCustomObject({ group: 'networking.liqo.io', version: 'v1beta1', plural: 'connections' })),
    onChange: () => {}, onListError: () => verdict,
  }));
  try {
    for (const watch of watches) watch.start();
    await waitFor(() => server.requests.filter((r) => r.path.endsWith('/connections') && r.status === 404).length >= 6, { description: 'retried 404s' });
    assert.equal(watches[0]?.failing(), undefined);
    assert.match(watches[1]?.failing()?.problem ?? '', /404/);
  } finally {
    await Promise.all(watches.map((watch) => watch.stop()));
    await server.close();
  }
});
