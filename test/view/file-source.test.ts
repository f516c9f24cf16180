// --shortcuts as a live source: edits, atomic renames and broken edits.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { createLogger, type Logger } from '../../src/log.ts';
import { FileShortcutSource } from '../../src/view/file-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { configurationObject, connectionObject, fccObject, hubIpObject } from '../support/builders.ts';
import { waitFor } from '../support/wait-for.ts';

interface Running { readonly dir: string; readonly store: SnapshotStore; readonly source: FileShortcutSource }

/**
 * A file source over `paths(dir)` in a fresh folder, started after `prepare(dir)`; stopped and the folder removed
 * after `body`, however it ends.
 */
async function withFileSource(
  options: { paths: (dir: string) => string[]; hub?: (dir: string) => string[]; prepare?: (dir: string) => void; pollIntervalMs?: number; logger?: Logger },
  body: (running: Running) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-files-'));
  options.prepare?.(dir);
  const store = new SnapshotStore();
  const source = new FileShortcutSource({
    paths: { shortcuts: options.paths(dir), hub: options.hub?.(dir) ?? [] }, store, logger: options.logger ?? createLogger('silent'), pollIntervalMs: options.pollIntervalMs ?? 25,
  });
  await source.start();
  try {
    await body({ dir, store, source });
  } finally {
    source.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fccFile = (dir: string) => join(dir, 'fcc.yaml');
const writeFcc = (dir: string) => writeFileSync(fccFile(dir), stringify(fccObject()));

function usableFor(store: SnapshotStore, cluster = 'cluster2'): string[] {
  return store.current().forCluster(cluster).pairs.map((pair) => `${pair.hubPrefix.text}>${pair.shortcutPrefix.text}`);
}

test('an edit takes effect without restart, and a broken edit keeps the last good view', async () => {
  await withFileSource({ paths: (dir) => [fccFile(dir)], prepare: writeFcc }, async ({ dir, store, source }) => {
    assert.equal(store.isSynced(), true);
    assert.deepEqual(usableFor(store), ['10.63.0.0/16>10.61.0.0/16']);
    writeFileSync(fccFile(dir), stringify(fccObject({ connected: false })));
    // The FCC itself, not only no usable pair: a poll may catch the file half written (no documents yet).
    await waitFor(() => usableFor(store).length === 0 && store.current().fccs.length === 1, { description: 'the disconnect is seen' });
    const version = store.current().version;
    writeFileSync(fccFile(dir), 'spec: [\n');
    await source.reload();
    assert.equal(store.current().version, version);
    writeFileSync(fccFile(dir), stringify(fccObject({ aRemapped: '10.71.0.0/16' })));
    await waitFor(() => usableFor(store)[0] === '10.63.0.0/16>10.71.0.0/16', { description: 'the fixed file is read' });
  });
});

test('an atomic rename into a watched folder is picked up', async () => {
  await withFileSource({ paths: (dir) => [dir] }, async ({ dir, store }) => {
    assert.equal(store.isSynced(), true, 'an empty folder is a valid, empty view');
    assert.equal(store.current().fccs.length, 0);
    const staging = join(dir, '.staging.yaml');
    writeFileSync(staging, stringify(fccObject()));
    renameSync(staging, fccFile(dir));
    await waitFor(() => usableFor(store).length === 1, { description: 'the renamed file is read' });
    rmSync(fccFile(dir));
    await waitFor(() => store.current().fccs.length === 0, { description: 'the removal is seen' });
  });
});

test('a missing path keeps the view unsynced until it appears', async () => {
  await withFileSource({ paths: (dir) => [join(dir, 'later')] }, async ({ dir, store }) => {
    assert.equal(store.isSynced(), false);
    mkdirSync(join(dir, 'later'));
    writeFileSync(join(dir, 'later', 'fcc.json'), JSON.stringify(fccObject()));
    await waitFor(() => store.isSynced() && usableFor(store).length === 1, { description: 'the late folder is read' });
  });
});

test('an unchanged file does not rebuild the snapshot', async () => {
  await withFileSource({ paths: (dir) => [fccFile(dir)], prepare: writeFcc, pollIntervalMs: 60_000 }, async ({ store, source }) => {
    const version = store.current().version;
    await source.reload();
    await source.reload();
    assert.equal(store.current().version, version);
  });
});

test('the same broken edit is reported again after the good text came back', async () => {
  const lines: string[] = [];
  const logger = createLogger('error', new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } }));
  const unreadable = () => lines.filter((line) => line.includes('shortcut files unreadable')).length;
  await withFileSource({ paths: (dir) => [fccFile(dir)], prepare: writeFcc, pollIntervalMs: 60_000, logger }, async ({ dir, source }) => {
    const good = stringify(fccObject());
    for (const [text, reports] of [['spec: [\n', 1], [good, 1], ['spec: [\n', 2]] as const) {
      writeFileSync(fccFile(dir), text);
      await source.reload();
      assert.equal(unreadable(), reports, `after writing ${JSON.stringify(text.slice(0, 8))}`);
    }
  });
});

test('Connections and Configurations in the files take part as they do in cluster mode, and follow edits', async () => {
  const list = (...items: object[]) => stringify({ apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } });
  const hub = configurationObject({ peer: 'cluster1' });
  await withFileSource({
    paths: (dir) => [fccFile(dir)],
    prepare: (dir) => writeFileSync(fccFile(dir), list(fccObject(), connectionObject('cluster3', 'Connected'), connectionObject('cluster3', 'Error', 'gw-cluster3-b'), hub)),
  }, async ({ dir, store }) => {
    assert.deepEqual(usableFor(store), [], 'one of two Connections down');
    assert.equal(store.current().views.configurations.length, 1);
    writeFileSync(fccFile(dir), list(fccObject({ aPod: '10.200.0.0/16', aRemapped: '10.201.0.0/16' }), connectionObject('cluster3', 'Connected'), hub));
    await waitFor(() => {
      const [state] = store.current().forCluster('cluster2').states;
      return state !== undefined && !state.usable && state.reason === 'local-overlap';
    }, { description: 'the hub\'s pods in the source' });
    writeFileSync(fccFile(dir), list(fccObject()));
    await waitFor(() => usableFor(store).join() === '10.63.0.0/16>10.61.0.0/16', { description: 'without them the FCC alone decides' });
    assert.equal(store.current().views.configurations.length, 0);
  });
});

test('an edit of FCCs and Liqo objects together is one new snapshot: listeners never see new Connections with old FCCs', async () => {
  const list = (...items: object[]) => stringify({ apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } });
  await withFileSource({
    paths: (dir) => [fccFile(dir)],
    prepare: (dir) => writeFileSync(fccFile(dir), list(fccObject(), connectionObject('cluster3', 'Connected'))),
    pollIntervalMs: 60_000,
  }, async ({ dir, store, source }) => {
    const seen: { fccs: number; tunnels: number; configurations: number }[] = [];
    store.subscribe((snapshot) => seen.push({
      fccs: snapshot.fccs.length, tunnels: snapshot.tunnels.size, configurations: snapshot.views.configurations.length,
    }));
    writeFileSync(fccFile(dir), list(fccObject(), fccObject({ name: 'second', b: 'cluster4' }),
      connectionObject('cluster3', 'Connected'), connectionObject('cluster4', 'Connected'), configurationObject({ peer: 'cluster1' })));
    await source.reload();
    assert.deepEqual(seen, [{ fccs: 2, tunnels: 2, configurations: 1 }]);
    writeFileSync(fccFile(dir), list(fccObject()));
    await source.reload();
    assert.deepEqual(seen.at(-1), { fccs: 1, tunnels: 0, configurations: 0 });
    assert.equal(seen.length, 2);
  });
});

test('--hub files: the hub\'s IPs, Configurations and FCCs are read with the leaf\'s files, and an edit is one rebuild', async () => {
  const hubFile = (dir: string) => join(dir, 'hub.yaml');
  const hubList = (allocated: string) => stringify({
    apiVersion: 'v1', kind: 'List',
    items: [
      configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16' }),
      hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated }),
      fccObject({ name: 'cluster2-cluster4', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.65.0.0/16' }),
      connectionObject('cluster3', 'Connected'),
    ],
  });
  await withFileSource({
    paths: (dir) => [fccFile(dir)], hub: (dir) => [hubFile(dir)],
    prepare: (dir) => { writeFcc(dir); writeFileSync(hubFile(dir), hubList('10.70.0.12')); },
  }, async ({ dir, store }) => {
    const { hub } = store.current();
    assert.ok(hub.known);
    assert.deepEqual([...hub.ips.ipv4.keys()], [0x0a46000c]);
    assert.deepEqual(hub.configurations.map((c) => c.remoteCluster), ['cluster3']);
    // FCCs found with the hub's objects count as FCCs; its Connections are not the leaf's and are not read.
    assert.deepEqual(usableFor(store).sort(), ['10.63.0.0/16>10.61.0.0/16', '10.64.0.0/16>10.65.0.0/16']);
    assert.equal(store.current().tunnels.size, 0);
    const versions: number[] = [];
    store.subscribe((snapshot) => versions.push(snapshot.version));
    const before = store.current().version;
    writeFileSync(hubFile(dir), hubList('10.70.0.13'));
    await waitFor(() => { const h = store.current().hub; return h.known && h.ips.ipv4.has(0x0a46000d); }, { description: 'the hub file edit is read' });
    assert.deepEqual(versions, [before + 1], 'one rebuild for the edit');
  });
});

test('without --hub files the hub\'s IPAM is not known', async () => {
  await withFileSource({ paths: (dir) => [fccFile(dir)], prepare: writeFcc }, async ({ store }) => {
    assert.equal(store.current().hub.known, false);
  });
});
