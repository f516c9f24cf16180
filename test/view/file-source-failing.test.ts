// Files that cannot be read are a source that fails, as a cluster that cannot be listed is: failing() says since
// when (the first failed read, on the source's clock) and why, keeps the last good view meanwhile, and clears with the
// next good read. serve turns not ready on it after --stale-view-after.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { createLogger } from '../../src/log.ts';
import { FileShortcutSource } from '../../src/view/file-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fccObject } from '../support/builders.ts';

interface Clocked { readonly dir: string; readonly store: SnapshotStore; readonly source: FileShortcutSource; advance(ms: number): void }

const START = 1_700_000_000_000;

/**
 * A file source over `path(dir)` whose clock the test moves, started after `prepare(dir)`. No poll and no watch event
 * during the test that matters: an hour between polls, and every read the test's own (`reload`).
 */
async function withClockedSource(
  options: { path: (dir: string) => string; prepare?: (dir: string) => void },
  body: (running: Clocked) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-failing-'));
  options.prepare?.(dir);
  let now = START;
  const store = new SnapshotStore(() => now);
  const source = new FileShortcutSource({
    paths: { shortcuts: [options.path(dir)], hub: [] }, store, logger: createLogger('silent'), pollIntervalMs: 3_600_000, now: () => now,
  });
  await source.start();
  try {
    await body({ dir, store, source, advance: (ms) => { now += ms; } });
  } finally {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fccFile = (dir: string) => join(dir, 'fcc.yaml');
const good = stringify(fccObject());

test('a broken edit fails from its first read until a good edit, with the file and line, and the view is kept', async () => {
  await withClockedSource({ path: fccFile, prepare: (dir) => writeFileSync(fccFile(dir), good) }, async ({ dir, store, source, advance }) => {
    assert.equal(source.failing(), undefined, 'the first read was good');
    const version = store.current().version;

    advance(1000);
    writeFileSync(fccFile(dir), 'bad: [\n');
    await source.reload();
    const broken = source.failing();
    assert.equal(broken?.since, START + 1000);
    assert.match(broken?.problem ?? '', /^invalid shortcuts .*fcc\.yaml#1, line 2, column 1: /);

    advance(5000);
    await source.reload();
    assert.deepEqual(source.failing(), broken, 'the same broken text read again: failing since the first read, not since this one');

    advance(5000);
    writeFileSync(fccFile(dir), 'a: 1\na: 2\n');
    await source.reload();
    assert.equal(source.failing()?.since, START + 1000, 'another broken edit: still failing since the first');
    assert.match(source.failing()?.problem ?? '', /fcc\.yaml#1, line 2, column 1: Map keys must be unique/, 'and the reason is the latest');
    assert.equal(store.current().version, version, 'the last good view is kept');
    assert.equal(store.current().fccs.length, 1);

    advance(1000);
    writeFileSync(fccFile(dir), stringify(fccObject({ aRemapped: '10.71.0.0/16' })));
    await source.reload();
    assert.equal(source.failing(), undefined, 'a good edit clears it');
    advance(1000);
    await source.reload();
    assert.equal(source.failing(), undefined, 'and an unchanged good read keeps it clear');
  });
});

test('back to the very text of the view in use after a broken edit clears the failure too', async () => {
  await withClockedSource({ path: fccFile, prepare: (dir) => writeFileSync(fccFile(dir), good) }, async ({ dir, store, source, advance }) => {
    const version = store.current().version;
    writeFileSync(fccFile(dir), '{"kind": \n');
    await source.reload();
    assert.match(source.failing()?.problem ?? '', /fcc\.yaml#1, line 1, column 10: /);
    advance(1000);
    writeFileSync(fccFile(dir), good);
    await source.reload();
    assert.equal(source.failing(), undefined);
    assert.equal(store.current().version, version, 'no rebuild: the same text as the view');
  });
});

test('a file that goes away fails with its path, and the view is kept', async () => {
  await withClockedSource({ path: fccFile, prepare: (dir) => writeFileSync(fccFile(dir), good) }, async ({ dir, store, source, advance }) => {
    advance(2000);
    rmSync(fccFile(dir));
    await source.reload();
    assert.equal(source.failing()?.since, START + 2000);
    assert.equal(source.failing()?.problem.startsWith(`cannot read shortcuts ${fccFile(dir)}: ENOENT`), true, source.failing()?.problem);
    assert.equal(store.current().fccs.length, 1);
  });
});

test('a path missing from the start fails from the first read, and is clear once it is there', async () => {
  const later = (dir: string) => join(dir, 'later.yaml');
  await withClockedSource({ path: later }, async ({ dir, store, source, advance }) => {
    assert.equal(store.isSynced(), false);
    assert.equal(source.failing()?.since, START);
    assert.equal(source.failing()?.problem.startsWith(`cannot read shortcuts ${later(dir)}: ENOENT`), true, source.failing()?.problem);
    advance(1000);
    writeFileSync(later(dir), good);
    await source.reload();
    assert.equal(source.failing(), undefined);
    assert.equal(store.isSynced(), true);
  });
});
