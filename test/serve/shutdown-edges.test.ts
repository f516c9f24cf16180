// How `serve` ends, whatever ends it: the log's last lines are written on every stop signal, repeated ones included,
// and the development pair's keys never outlive the process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { collectOutput, exitWithin, startServer } from '../support/process.ts';
import { waitFor } from '../support/wait-for.ts';

const root = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'shortcut-shutdown-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));

const messages = (lines: readonly string[]): string[] => lines.filter((line) => line.startsWith('{')).map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));

test('SIGHUP (the terminal went away) stops serve as SIGTERM does: logged to its last line, exit 0', async () => {
  const certs = makeCerts();
  const server = await startServer(['--shortcuts', shortcuts, '--tls-cert', certs.certFile, '--tls-key', certs.keyFile]);
  try {
    server.child.kill('SIGHUP');
    assert.equal(await exitWithin(server, 20_000), 0, server.lines.join('\n'));
    const said = messages(server.lines);
    assert.ok(said.some((msg) => msg.startsWith('shutting down')), server.lines.join('\n'));
    assert.equal(said.at(-1), 'stopped', server.lines.join('\n'));
  } finally {
    server.child.kill('SIGKILL');
  }
});

for (const second of ['SIGTERM', 'SIGINT'] as const) {
  test(`a ${second} while a review holds the shutdown (as npm forwards its own to a process group) does not cut it short`, async () => {
    const certs = makeCerts();
    const server = await startServer(['--shortcuts', shortcuts, '--tls-cert', certs.certFile, '--tls-key', certs.keyFile]);
    const socket = connect({ host: '127.0.0.1', port: server.webhookPort, ca: readFileSync(certs.caFile), servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    try {
      await once(socket, 'secureConnect');
      let answered = '';
      socket.on('data', (chunk: Buffer) => { answered += chunk.toString('latin1'); });
      // A review whose body is still coming: the shutdown waits for it.
      const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
      // Expect: 100-continue, so that the server's interim answer says it holds the request: a SIGTERM sent before the
      // request reached it would find none in flight (and fastify answers a request that arrives while closing 503).
      const received = waitFor(() => (answered.includes('100 Continue') ? true : undefined), { description: 'the server holds the review (100 Continue)' });
      socket.write(`POST /mutate/endpointslices HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
      await received;
      socket.write(body.slice(0, 5));
      server.child.kill('SIGTERM');
      await waitFor(() => server.lines.some((line) => line.includes('"msg":"shutting down')), { description: `shutting down:\n${server.lines.join('\n')}` });
      server.child.kill(second);
      socket.end(body.slice(5));
      assert.equal(await exitWithin(server, 20_000), 0, server.lines.join('\n'));
      assert.equal(messages(server.lines).at(-1), 'stopped', server.lines.join('\n'));
    } finally {
      socket.destroy();
      server.child.kill('SIGKILL');
    }
  });
}

test('SIGTERM to `npm start`\'s process group: `shutting down` and `stopped` are logged, every time, and nothing is left', async () => {
  const certs = makeCerts();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  for (let run = 0; run < 3; run++) {
    const child = spawn(npm, ['start', '--', '--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--tls-cert', certs.certFile, '--tls-key', certs.keyFile],
      { cwd: root, detached: true, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });
    const { lines, exited } = collectOutput(child);
    try {
      await waitFor(() => lines.some((line) => line.includes('"msg":"serving"')), { timeoutMs: 30_000, description: `npm start serves:\n${lines.join('\n')}` });
      process.kill(-(child.pid ?? 0), 'SIGTERM');
      // npm's own status is npm's business (it ends by the signal it got); the server's log and its end are ours.
      await exited;
      await waitFor(() => {
        try {
          process.kill(-(child.pid ?? 0), 0);
          return false;
        } catch {
          return true;
        }
      }, { timeoutMs: 20_000, description: 'every process of the group has exited' });
      const said = messages(lines);
      assert.ok(said.some((msg) => msg.startsWith('shutting down')), `run ${run}:\n${lines.join('\n')}`);
      assert.equal(said.at(-1), 'stopped', `run ${run}:\n${lines.join('\n')}`);
    } finally {
      try {
        process.kill(-(child.pid ?? 0), 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
  }
});

const tlsFolders = (tmp: string): string[] => readdirSync(tmp).filter((name) => name.startsWith('shortcut-webhook-tls-'));

test('the development pair is removed when serve stops', async () => {
  const tmp = mkdtempSync(join(dir, 'tmp-'));
  const server = await startServer(['--shortcuts', shortcuts], { TMPDIR: tmp }, tmp);
  try {
    assert.equal(tlsFolders(tmp).length, 1, 'made at start-up');
    server.child.kill('SIGTERM');
    assert.equal(await exitWithin(server, 20_000), 0);
    assert.deepEqual(tlsFolders(tmp), []);
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('the development pair is removed after a failed start (its port taken)', async () => {
  const tmp = mkdtempSync(join(dir, 'tmp-'));
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const address = busy.address();
  assert.ok(address !== null && typeof address === 'object');
  try {
    const child = spawn(process.execPath, [join(root, 'bin/shortcut-webhook.js'), 'serve', '--host', '127.0.0.1', '--port', String(address.port), '--ops-port', '0', '--shortcuts', shortcuts],
      { cwd: tmp, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmp } });
    const { lines, exited } = collectOutput(child);
    assert.equal(await exited, 1, lines.join('\n'));
    assert.ok(lines.some((line) => line.includes('development pair made now')), lines.join('\n'));
    assert.deepEqual(tlsFolders(tmp), []);
  } finally {
    busy.close();
  }
});
