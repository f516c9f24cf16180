// When the file source last matched its files: every read that finds the files as they were refreshes it (the
// stale-view alert on view_last_sync_timestamp_seconds must not fire on a healthy pod whose files never change),
// and a read that fails does not (the view no longer matches its source).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { FileShortcutSource } from '../../src/view/file-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fccObject } from '../support/builders.ts';

test('an unchanged re-read refreshes the last sync; a broken file does not, and the fixed file does again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-sync-time-'));
  const file = join(dir, 'fcc.yaml');
  writeFileSync(file, stringify(fccObject()));
  let now = 1_700_000_000_000;
  const store = new SnapshotStore(() => now);
  const metrics = new Metrics();
  metrics.trackView(store);
  // No poll and no watch event during the test: the reads are the test's own.
  const source = new FileShortcutSource({ paths: { shortcuts: [file], hub: [] }, store, logger: createLogger('silent'), pollIntervalMs: 3_600_000 });
  await source.start();
  try {
    assert.equal(store.lastSync(), 1_700_000_000_000);
    const version = store.current().version;

    now += 60_000;
    await source.reload();
    assert.equal(store.current().version, version, 'the same files: no new snapshot');
    assert.equal(store.lastSync(), 1_700_000_060_000, 'but the view is known fresh as of this read');
    assert.match(await metrics.registry.metrics(), /^shortcut_webhook_view_last_sync_timestamp_seconds 1700000060$/m);

    now += 60_000;
    writeFileSync(file, 'spec: [\n');
    await source.reload();
    now += 60_000;
    await source.reload();
    assert.equal(store.lastSync(), 1_700_000_060_000, 'a broken file is no sync, read once or twice');

    now += 60_000;
    writeFileSync(file, stringify(fccObject()));
    await source.reload();
    assert.equal(store.current().version, version, 'back to the text of the view in use');
    assert.equal(store.lastSync(), 1_700_000_240_000);
  } finally {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
