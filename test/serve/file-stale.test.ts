// The real executable in file mode: shortcut files that cannot be read are a source that fails, as a cluster that
// cannot be listed is. A broken edit keeps the last good view, but past --stale-view-after the replica says it is not
// ready and why (its view no longer follows its files); a good edit brings it back. A path missing at start-up is
// named by /readyz, not only in the log.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import { killServer, logRecords, opsGet, usablePairs } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const tls = ['--tls-cert', certs.certFile, '--tls-key', certs.keyFile];
const dir = mkdtempSync(join(tmpdir(), 'shortcut-serve-file-stale-'));
after(() => rmSync(dir, { recursive: true, force: true }));
/** Generous: the process shares a loaded 2-core machine. */
const LONG = 15_000;

interface FileSourceBody { files: { shortcuts: number; hub: number }; failing: { since: string; problem: string } | null }
async function sources(server: RunningServer): Promise<FileSourceBody[]> {
  return (JSON.parse((await opsGet(server, '/debug/pairs')).text) as { sources: FileSourceBody[] }).sources;
}

async function reasons(server: RunningServer): Promise<{ status: number; reasons: string[] }> {
  const { status, text } = await opsGet(server, '/readyz');
  return { status, reasons: status === 503 ? (JSON.parse(text) as { reasons: string[] }).reasons : [] };
}

/** By rename, as editors and ConfigMap volumes do: a poll never reads half a file. */
function writeAtomically(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

test('a broken edit turns the replica not ready after --stale-view-after and not before, with the reason; a good edit brings it back', async () => {
  const folder = mkdtempSync(join(dir, 'broken-'));
  const file = join(folder, 'fcc.yaml');
  writeFileSync(file, stringify(fccObject()));
  let server: RunningServer | undefined;
  try {
    server = await startServer([...tls, '--shortcuts', folder, '--cluster-id', 'cluster2', '--stale-view-after', '2s']);
    const running = server;
    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { timeoutMs: LONG, description: 'ready' });
    // How many paths, never which: any pod may read the ops port.
    assert.deepEqual(await sources(running), [{ files: { shortcuts: 1, hub: 0 }, failing: null }]);

    const broken = Date.now();
    // A .yaml.tmp is no document file of the folder: only the rename makes the edit.
    writeAtomically(file, 'bad: [\n');
    const failing = await waitFor(async () => (await sources(running))[0]?.failing, { timeoutMs: LONG, description: 'the broken edit is read' });
    assert.match(failing.problem, /^invalid shortcuts .*fcc\.yaml#1, line 2, column 1: /);
    assert.ok(Date.parse(failing.since) >= broken - 1000, `failing since the read of the edit (${failing.since})`);
    // The replica counts from its first failed read, which comes after `broken`: an answer in hand less than the bound
    // after `broken` was given before the bound had passed, and must be 200 (on a loaded machine the read may come late).
    const early = await opsGet(running, '/readyz');
    const earlyAfter = Date.now() - broken;
    assert.ok(early.status === 200 || earlyAfter >= 2000,
      `a failure shorter than the bound keeps the replica in (HTTP ${early.status} ${earlyAfter} ms after the edit)`);

    const stale = await waitFor(async () => {
      const answer = await reasons(running);
      return answer.status === 503 ? answer : undefined;
    }, { timeoutMs: LONG, intervalMs: 50, description: 'not ready once stale' });
    const staleAfter = Date.now() - broken;
    assert.ok(staleAfter >= 2000, `not before the bound (${staleAfter} ms)`);
    assert.equal(stale.reasons.length, 1, stale.reasons.join('\n'));
    assert.match(stale.reasons[0] ?? '', /^shortcut view stale: every read of the shortcut files has failed for \d+ s \(invalid shortcuts .*fcc\.yaml#1, line 2, column 1: /);
    assert.deepEqual(await usablePairs(running), ['liqo/cluster2-cluster3:10.63.0.0/16->10.61.0.0/16'], 'the last good view is kept');
    const staleLines = logRecords(running).filter((r) => r.msg?.startsWith('shortcut view stale'));
    assert.equal(staleLines.length, 1, 'said once');
    assert.match(String(staleLines[0]?.['err']), /fcc\.yaml#1, line 2/);

    writeAtomically(file, stringify(fccObject({ aRemapped: '10.71.0.0/16' })));
    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { timeoutMs: LONG, description: 'ready again' });
    assert.deepEqual(await usablePairs(running), ['liqo/cluster2-cluster3:10.63.0.0/16->10.71.0.0/16']);
    assert.equal((await sources(running))[0]?.failing, null);
    assert.ok(logRecords(running).some((r) => r.msg === 'shortcut view live again: ready'));
  } finally {
    await killServer(server);
  }
});

test('a --shortcuts path missing at start-up is named by /readyz', async () => {
  const missing = join(dir, 'nonexistent');
  let server: RunningServer | undefined;
  try {
    server = await startServer([...tls, '--shortcuts', missing, '--cluster-id', 'cluster2']);
    const running = server;
    const answer = await waitFor(async () => {
      const got = await reasons(running);
      return got.reasons.some((reason) => reason.includes(missing)) ? got : undefined;
    }, { timeoutMs: LONG, description: '/readyz names the path' });
    assert.equal(answer.status, 503);
    assert.deepEqual(answer.reasons, [`shortcut view not synced yet: cannot read shortcuts ${missing}: ENOENT: no such file or directory, stat '${missing}'`]);
    const problem = (await sources(running))[0]?.failing?.problem ?? '';
    assert.ok(problem.startsWith('cannot read shortcuts nonexistent: ENOENT'), problem);
    assert.ok(!problem.includes(dir), `no path in /debug/pairs: ${problem}`);

    writeFileSync(missing, stringify(fccObject()));
    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { timeoutMs: LONG, description: 'ready once the file is there' });
  } finally {
    await killServer(server);
  }
});
