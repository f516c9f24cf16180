// `npm start`, as the README's first command: it serves, and stopping what the user started stops the server.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { collectOutput } from '../support/process.ts';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { makeCerts } from '../support/certs.ts';
import { waitFor } from '../support/wait-for.ts';

const root = new URL('../..', import.meta.url).pathname;

test('SIGTERM to `npm start` stops the server: nothing is left holding its ports', async () => {
  // Own certificates (so nothing is written into the checkout's certs/out) and free ports; the rest is npm start's.
  const certs = makeCerts();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const child = spawn(npm, ['start', '--', '--host', '127.0.0.1', '--port', '0', '--ops-port', '0',
    '--tls-cert', certs.certFile, '--tls-key', certs.keyFile], { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });
  const { lines, exited } = collectOutput(child);
  try {
    const serving = await waitFor(() => lines.find((line) => line.includes('"msg":"serving"')),
      { timeoutMs: 30_000, description: `npm start serves:\n${lines.join('\n')}` });
    const { ops, clusterId, version } = JSON.parse(serving) as { ops: { port: number }[]; clusterId: string; version: string };
    assert.equal(clusterId, 'cluster2');
    // The "serving" line says what runs.
    assert.equal(version, (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version);
    const readyz = `http://127.0.0.1:${ops[0]?.port}/readyz`;
    assert.equal((await fetch(readyz)).status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    // The port is free once the server itself has gone, not only npm.
    await waitFor(async () => {
      try {
        await fetch(readyz);
        return false;
      } catch {
        return true;
      }
    }, { description: 'the ops port no longer answers' });
  } finally {
    child.kill('SIGKILL');
  }
});
