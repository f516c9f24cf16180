// SIGTERM with reviews that will never finish normally. A client gone in the middle of its request (its connection
// closed before the answer) is a review over: the drain must not wait for it until its 20 s deadline. A body refused
// after SIGTERM (past 7 MiB, answered 413) is not read on as it would be while serving: the rest may take as long as
// the client likes, and shutdown does not wait for it. Against the real executable, signals included.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { stringify } from 'yaml';
import { fccObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { exitWithin, startServer, type RunningServer } from '../support/process.ts';
import { scratchDir } from '../support/scratch.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const dir = scratchDir('shortcut-lifecycle-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));
const args = ['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--shortcuts', shortcuts];
/** The drain's own deadline is 20 s: an exit well before it means nothing was waited for. */
const PROMPT_MS = 3000;

function open1(port: number): Promise<{ socket: TLSSocket; received: () => string }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: certs.ca, servername: 'localhost' });
    let text = '';
    socket.once('secureConnect', () => resolve({ socket, received: () => text }));
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => { text += chunk.toString(); });
  });
}

function write(socket: TLSSocket, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())));
}

/** One chunk of a chunked body, of `bytes` spaces. */
function chunk(bytes: number): Buffer {
  return Buffer.concat([Buffer.from(`${bytes.toString(16)}\r\n`), Buffer.alloc(bytes, 0x20), Buffer.from('\r\n')]);
}

async function stopsPromptly(server: RunningServer): Promise<void> {
  const started = performance.now();
  assert.equal(await exitWithin(server, PROMPT_MS), 0, server.lines.join('\n'));
  assert.ok(!server.lines.some((l) => l.includes('reviews still open at the shutdown deadline')), server.lines.join('\n'));
  assert.ok(performance.now() - started < PROMPT_MS);
}

test('a review whose client went away mid-request is over: SIGTERM then exits at once, not at the drain deadline', async () => {
  const server = await startServer(args);
  const client = await open1(server.webhookPort);
  try {
    // Expect: 100-continue makes the server say when the request is in (its handler has it) before any body is sent.
    await write(client.socket, 'POST /mutate/endpointslices HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n'
      + 'Content-Length: 4096\r\nExpect: 100-continue\r\n\r\n');
    await waitFor(() => client.received().startsWith('HTTP/1.1 100 Continue'), { description: 'the server took the request' });
    await write(client.socket, '{"apiVersion":"admission.k8s.io/v1",');
    const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()));
    client.socket.destroy();
    await closed;
    server.child.kill('SIGTERM');
    await stopsPromptly(server);
  } finally {
    client.socket.destroy();
    server.child.kill('SIGKILL');
  }
});

test('a body refused after SIGTERM (413 past 7 MiB) is not read on: SIGTERM exits at once while the client still holds it open', async () => {
  const server = await startServer(args);
  const client = await open1(server.webhookPort);
  client.socket.on('error', () => {});
  try {
    await write(client.socket, 'POST /mutate/endpointslices HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n'
      + 'Transfer-Encoding: chunked\r\n\r\n');
    // 6 MiB: under the limit, the review is in progress when the signal comes.
    for (let i = 0; i < 6; i++) await write(client.socket, chunk(1024 * 1024));
    server.child.kill('SIGTERM');
    await waitFor(() => server.lines.some((l) => l.includes('shutting down: finishing in-flight reviews')), { description: 'the drain began' });
    // 2 MiB more: past 7 MiB, refused. The client would send more, slowly; it sends nothing, and keeps the connection.
    await write(client.socket, chunk(1024 * 1024)).catch(() => {});
    await write(client.socket, chunk(1024 * 1024)).catch(() => {});
    await stopsPromptly(server);
    assert.match(client.received(), /^(HTTP\/1\.1 413 |$)/, 'nothing but the refusal, if anything, was answered');
  } finally {
    client.socket.destroy();
    server.child.kill('SIGKILL');
  }
});
