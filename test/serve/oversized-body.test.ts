// SPEC §4: a body over 7 MiB is answered 413, readable by a client that sends the whole body before it reads, and a
// refused request never holds up shutdown. Over real HTTPS against the real executable, signals included.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
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
const dir = scratchDir('shortcut-oversized-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));
const tlsArgs = ['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--shortcuts', shortcuts];

/** 8 MiB, over the 7 MiB limit. */
const BIG = Buffer.alloc(8 * 1024 * 1024, 0x20);
const REFUSAL = /^HTTP\/1\.1 413 [^\r]*\r\n[\s\S]*\r\n\r\n\{"message":"body exceeds 7340032 bytes \(7 MiB\)"\}$/;

/** An HTTP/1.1 client on a bare TLS socket, so that the test decides when it writes and when it reads. */
function open1(port: number): Promise<{ socket: TLSSocket; received: () => string; failure: () => Error | undefined }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: certs.ca, servername: 'localhost' });
    let text = '';
    let error: Error | undefined;
    socket.once('secureConnect', () => resolve({ socket, received: () => text, failure: () => error }));
    socket.once('error', (e) => { error = e; reject(e); });
    socket.on('data', (chunk: Buffer) => { text += chunk.toString(); });
    // Nothing is read until the test says so: the answer waits in the socket, as for a client still busy writing.
    socket.pause();
  });
}

function head(chunked: boolean): string {
  const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${BIG.length}`;
  return `POST /mutate/endpointslices HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;
}

/** The whole body, as one write; resolves once every byte has been handed to the kernel. */
function writeAll(socket: TLSSocket, chunked: boolean): Promise<void> {
  const body = chunked ? Buffer.concat([Buffer.from(`${BIG.length.toString(16)}\r\n`), BIG, Buffer.from('\r\n0\r\n\r\n')]) : BIG;
  return new Promise((resolve, reject) => socket.write(Buffer.concat([Buffer.from(head(chunked)), body]), (e) => (e ? reject(e) : resolve())));
}

async function stopsPromptly(server: RunningServer): Promise<void> {
  server.child.kill('SIGTERM');
  // The drain's own deadline is 20 s: an exit this soon means nothing refused was waited for.
  assert.equal(await exitWithin(server, 2000), 0, server.lines.join('\n'));
  assert.ok(!server.lines.some((l) => l.includes('reviews still open at the shutdown deadline')), server.lines.join('\n'));
}

for (const chunked of [false, true]) {
  test(`HTTP/1.1 ${chunked ? 'chunked' : 'with Content-Length'}: a client that writes all 8 MiB before reading reads the 413, and SIGTERM then exits at once`, async () => {
    const server = await startServer(tlsArgs);
    const client = await open1(server.webhookPort);
    try {
      await writeAll(client.socket, chunked);
      client.socket.resume();
      await waitFor(() => REFUSAL.test(client.received()) || client.failure(), { description: 'the 413 is read' });
      assert.equal(client.failure(), undefined);
      assert.match(client.received(), REFUSAL);
      await stopsPromptly(server);
    } finally {
      client.socket.destroy();
      server.child.kill('SIGKILL');
    }
  });
}

test('HTTP/1.1: a client that stops sending partway through a refused body does not hold up SIGTERM', async () => {
  const server = await startServer(tlsArgs);
  const client = await open1(server.webhookPort);
  try {
    client.socket.write(head(false));
    client.socket.write(BIG.subarray(0, 1024 * 1024));
    client.socket.resume();
    await waitFor(() => REFUSAL.test(client.received()), { description: 'the 413 is read' });
    // The connection is still open and 7 MiB are still owed: the server must not wait for them.
    await stopsPromptly(server);
  } finally {
    client.socket.destroy();
    server.child.kill('SIGKILL');
  }
});

test('HTTP/1.1: past twice the limit more, a refused body is no longer read: the connection is dropped', { timeout: 15_000 }, async () => {
  const server = await startServer(tlsArgs);
  const client = await open1(server.webhookPort);
  try {
    const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()));
    client.socket.on('error', () => {});
    client.socket.resume();
    client.socket.write(head(true));
    // 7 MiB to be refused, then 14 MiB more to be thrown away, then more: 24 MiB in all, in 1 MiB chunks.
    const chunk = Buffer.concat([Buffer.from('100000\r\n'), BIG.subarray(0, 1024 * 1024), Buffer.from('\r\n')]);
    for (let i = 0; i < 24 && !client.socket.destroyed; i++) client.socket.write(chunk);
    await closed;
    assert.match(client.received(), /^(HTTP\/1\.1 413 |$)/, 'nothing but the refusal, if anything, was answered');
    await stopsPromptly(server);
  } finally {
    client.socket.destroy();
    server.child.kill('SIGKILL');
  }
});

test('HTTP/2: a stream carrying all 8 MiB is answered 413, and SIGTERM then exits at once', async () => {
  const server = await startServer(tlsArgs);
  const session = http2Connect(`https://localhost:${server.webhookPort}`, { ca: certs.ca, servername: 'localhost' });
  try {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({ ':method': 'POST', ':path': '/mutate/endpointslices', 'content-type': 'application/json',
        'content-length': String(BIG.length) });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => { status = Number(h[':status']); });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString() }));
      stream.on('error', reject);
      stream.end(BIG);
    });
    assert.equal(answer.status, 413);
    assert.match(JSON.parse(answer.body).message, /exceeds 7340032 bytes/);
    await stopsPromptly(server);
  } finally {
    session.destroy();
    server.child.kill('SIGKILL');
  }
});
