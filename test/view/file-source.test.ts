// --shortcuts as a live source: edits, atomic renames and broken edits.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { createLogger } from '../../src/log.ts';
import { FileShortcutSource } from '../../src/view/file-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fccObject } from '../support/builders.ts';
import { waitFor } from '../support/wait-for.ts';

function usableFor(store: SnapshotStore, cluster = 'cluster2'): string[] {
  return store.current().forCluster(cluster).pairs.map((pair) => `${pair.hubPrefix.text}>${pair.shortcutPrefix.text}`);
}

test('an edit takes effect without restart, and a broken edit keeps the last good view', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-files-'));
  const file = join(dir, 'fcc.yaml');
  writeFileSync(file, stringify(fccObject()));
  const store = new SnapshotStore();
  const source = new FileShortcutSource({ paths: [file], store, logger: createLogger('silent'), pollIntervalMs: 25 });
  await source.start();
  try {
    assert.equal(store.isSynced(), true);
    assert.deepEqual(usableFor(store), ['10.63.0.0/16>10.61.0.0/16']);
    writeFileSync(file, stringify(fccObject({ connected: false })));
    await waitFor(() => usableFor(store).length === 0, { description: 'the disconnect is seen' });
    const version = store.current().version;
    writeFileSync(file, 'spec: [\n');
    await source.reload();
    assert.equal(store.current().version, version);
    writeFileSync(file, stringify(fccObject({ aRemapped: '10.71.0.0/16' })));
    await waitFor(() => usableFor(store)[0] === '10.63.0.0/16>10.71.0.0/16', { description: 'the fixed file is read' });
  } finally {
    source.stop();
  }
});

test('an atomic rename into a watched folder is picked up', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-folder-'));
  const store = new SnapshotStore();
  const source = new FileShortcutSource({ paths: [dir], store, logger: createLogger('silent'), pollIntervalMs: 25 });
  await source.start();
  try {
    assert.equal(store.isSynced(), true, 'an empty folder is a valid, empty view');
    assert.equal(store.current().fccs.length, 0);
    const staging = join(dir, '.staging.yaml');
    writeFileSync(staging, stringify(fccObject()));
    renameSync(staging, join(dir, 'fcc.yaml'));
    await waitFor(() => usableFor(store).length === 1, { description: 'the renamed file is read' });
    rmSync(join(dir, 'fcc.yaml'));
    await waitFor(() => store.current().fccs.length === 0, { description: 'the removal is seen' });
  } finally {
    source.stop();
  }
});

test('a missing path keeps the view unsynced until it appears', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-late-'));
  const late = join(dir, 'later');
  const store = new SnapshotStore();
  const source = new FileShortcutSource({ paths: [late], store, logger: createLogger('silent'), pollIntervalMs: 25 });
  await source.start();
  try {
    assert.equal(store.isSynced(), false);
    mkdirSync(late);
    writeFileSync(join(late, 'fcc.json'), JSON.stringify(fccObject()));
    await waitFor(() => store.isSynced() && usableFor(store).length === 1, { description: 'the late folder is read' });
  } finally {
    source.stop();
  }
});

test('an unchanged file does not rebuild the snapshot', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-same-'));
  const file = join(dir, 'fcc.yaml');
  writeFileSync(file, stringify(fccObject()));
  const store = new SnapshotStore();
  const source = new FileShortcutSource({ paths: [file], store, logger: createLogger('silent'), pollIntervalMs: 60_000 });
  await source.start();
  try {
    const version = store.current().version;
    await source.reload();
    await source.reload();
    assert.equal(store.current().version, version);
  } finally {
    source.stop();
  }
});
