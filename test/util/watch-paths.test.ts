// A watch of named files in a folder: an event for another file of the folder (an API server's log beside a
// kubeconfig) does not call onChange; the file itself, and a Secret volume's `..data` swap, do.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { watchPaths } from '../../src/util/watch-paths.ts';
import { waitFor } from '../support/wait-for.ts';

/** Writes `file` and resolves once a watcher of its own has seen the event, so that any other watcher was told too. */
async function writeSeen(folder: string, name: string, text: string): Promise<void> {
  let seen = false;
  const spy = watch(folder, (_event, filename) => { if (filename?.toString() === name) seen = true; });
  try {
    writeFileSync(join(folder, name), text);
    await waitFor(() => seen, { timeoutMs: 10_000, description: `the event of ${name}` });
    // One more turn of the loop: every watcher's callback for that event has run.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    spy.close();
  }
}

test('only the named files (and a `..` swap) call onChange: a busy neighbour in the folder does not', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'shortcut-watch-'));
  const calls: string[] = [];
  let phase = 'neighbour';
  const watching = watchPaths([folder], () => calls.push(phase), 3_600_000, { names: ['admin.kubeconfig'] });
  try {
    for (let i = 0; i < 5; i++) await writeSeen(folder, 'kube-apiserver.log', `line ${i}\n`);
    assert.equal(calls.length, 0, 'a neighbour\'s writes call nothing');
    phase = 'kubeconfig';
    writeFileSync(join(folder, 'admin.kubeconfig'), 'apiVersion: v1\n');
    await waitFor(() => calls.length > 0, { timeoutMs: 10_000, description: 'the kubeconfig\'s event' });
    phase = 'data swap';
    const before = calls.length;
    writeFileSync(join(folder, '..data_tmp'), 'x');
    renameSync(join(folder, '..data_tmp'), join(folder, '..data'));
    await waitFor(() => calls.slice(before).includes('data swap'), { timeoutMs: 10_000, description: 'the ..data swap\'s event' });
    assert.ok(!calls.includes('neighbour'), calls.join(', '));
  } finally {
    watching.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
