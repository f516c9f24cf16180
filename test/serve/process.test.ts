// The executable end to end: serve in file mode, answer over HTTPS, and drain on SIGTERM.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject, reviewObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { connect2, post1, post2 } from '../support/https-client.ts';
import { exitWithin, startServer, startServerOnEveryInterface } from '../support/process.ts';
import { scratchDir } from '../support/scratch.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const dir = scratchDir('shortcut-process-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));
const tlsArgs = ['--tls-cert', certs.certFile, '--tls-key', certs.keyFile];

/** A review whose body is held back after its first bytes: a request in flight for as long as the test wants. */
function slowReview(port: number, uid: string): { finish(): void; sent: Promise<void>; answer: Promise<{ status: number; body: string }> } {
  const body = Buffer.from(JSON.stringify(reviewObject(sliceObject(), { uid })));
  let finish = () => {};
  let markSent = () => {};
  const sent = new Promise<void>((resolve) => { markSent = resolve; });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/mutate/endpointslices', method: 'POST', ca: certs.ca, servername: 'localhost',
      agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.write(body.subarray(0, 64), () => markSent());
    finish = () => req.end(body.subarray(64));
  });
  return { finish: () => finish(), sent, answer };
}

test('serves file mode with settings from the environment, and drains in-flight reviews on SIGTERM', async () => {
  const server = await startServer([], {
    SHORTCUT_WEBHOOK_TLS_CERT: certs.certFile, SHORTCUT_WEBHOOK_TLS_KEY: certs.keyFile,
    SHORTCUT_WEBHOOK_SHORTCUTS: shortcuts, SHORTCUT_WEBHOOK_LOG_LEVEL: 'debug',
  });
  try {
    const ready = await fetch(`http://127.0.0.1:${server.opsPort}/readyz`);
    assert.equal(ready.status, 200);
    const answer = await post1(`https://localhost:${server.webhookPort}`, certs.ca, JSON.stringify(reviewObject(sliceObject(), { uid: 'one' })));
    assert.equal(JSON.parse(answer.body).response.patchType, 'JSONPatch');

    const inFlight = Array.from({ length: 5 }, (_, i) => slowReview(server.webhookPort, `inflight-${i}`));
    await Promise.all(inFlight.map((review) => review.sent));
    // A full review on a later connection: once it is answered, the server has read the earlier headers too.
    await post1(`https://localhost:${server.webhookPort}`, certs.ca, JSON.stringify(reviewObject(sliceObject(), { uid: 'two' })));
    let exited = false;
    void server.exited.then(() => { exited = true; });
    server.child.kill('SIGTERM');
    await waitFor(() => server.lines.some((l) => l.includes('shutting down')), { description: 'the server starts shutting down' });
    // Draining: no new connection is taken, and the process is still there for the held reviews, whose bodies only
    // now arrive: their answers below can only come from a server that waited for them.
    await assert.rejects(post1(`https://localhost:${server.webhookPort}`, certs.ca, '{}'), /ECONNREFUSED/);
    assert.equal(exited, false, 'still running with reviews in flight');
    for (const review of inFlight) review.finish();
    const answers = await Promise.all(inFlight.map((review) => review.answer));
    answers.forEach((a, i) => {
      assert.equal(a.status, 200);
      assert.equal(JSON.parse(a.body).response.uid, `inflight-${i}`);
      assert.equal(JSON.parse(a.body).response.patchType, 'JSONPatch');
    });
    assert.equal(await server.exited, 0);
    await assert.rejects(post1(`https://localhost:${server.webhookPort}`, certs.ca, '{}'), /ECONNREFUSED/);
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('without --host, as the Deployment runs it, it answers on the IPv4 loopback: every interface, IPv6 and IPv4', async () => {
  const server = await startServerOnEveryInterface([...tlsArgs, '--shortcuts', shortcuts]);
  try {
    assert.equal((await fetch(`http://127.0.0.1:${server.opsPort}/healthz`)).status, 200);
    const answer = await post1(`https://127.0.0.1:${server.webhookPort}`, certs.ca, JSON.stringify(reviewObject(sliceObject(), { uid: 'any' })));
    assert.equal(JSON.parse(answer.body).response.patchType, 'JSONPatch');
    server.child.kill('SIGTERM');
    assert.equal(await exitWithin(server, 5000), 0);
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('a certificate that cannot be read stops the start with exit 1 and a message', async () => {
  await assert.rejects(startServer(['--tls-cert', join(dir, 'none.crt'), '--tls-key', certs.keyFile, '--shortcuts', shortcuts]),
    /code 1:[\s\S]*none\.crt[\s\S]*cannot load the serving certificate/);
});

test('file mode logs once that the controller is off', async () => {
  const server = await startServer([...tlsArgs, '--shortcuts', shortcuts]);
  try {
    assert.equal(server.lines.filter((l) => l.includes('controller off')).length, 1);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('a source that holds no FCC at all is said once in the log, and again when it changes', async () => {
  const empty = join(dir, 'empty.yaml');
  writeFileSync(empty, stringify({ apiVersion: 'v1', kind: 'List', items: [] }));
  const server = await startServer([...tlsArgs, '--shortcuts', empty, '--cluster-id', 'cluster2']);
  try {
    const said = (text: string) => server.lines.filter((l) => l.includes(text)).length;
    await waitFor(() => said('holds no ForeignClusterConnection at all') === 1, { description: 'the empty source is said' });
    writeFileSync(empty, stringify(fccObject({ a: 'cluster5', b: 'cluster6' })));
    await waitFor(() => said('no ForeignClusterConnection names cluster cluster2') === 1, { description: 'the unnamed cluster is said' });
    assert.equal(said('holds no ForeignClusterConnection at all'), 1, 'said once, not on every poll');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('an idle HTTP/2 connection, as the API server keeps one, does not hold up SIGTERM', async () => {
  const server = await startServer([...tlsArgs, '--shortcuts', shortcuts]);
  const session = await connect2(`https://localhost:${server.webhookPort}`, certs.ca);
  try {
    const answer = await post2(session, JSON.stringify(reviewObject(sliceObject(), { uid: 'h2' })));
    assert.equal(JSON.parse(answer.body).response.uid, 'h2');
    let goaway = false;
    session.on('goaway', () => { goaway = true; });
    session.on('error', () => {});
    server.child.kill('SIGTERM');
    assert.equal(await exitWithin(server, 10_000), 0);
    await waitFor(() => goaway || session.closed || session.destroyed, { description: 'the client was told to go away' });
  } finally {
    session.destroy();
    server.child.kill('SIGKILL');
  }
});

test('without --tls-cert and --tls-key, serve makes a development pair and says where', async () => {
  // From a folder without certs/out, so the pair is made at start-up.
  const server = await startServer(['--shortcuts', shortcuts], { TMPDIR: dir }, dir);
  try {
    const made = server.lines.find((l) => l.includes('development pair made now'));
    assert.ok(made, server.lines.join('\n'));
    const { ca } = JSON.parse(made) as { ca: string };
    const answer = await post1(`https://localhost:${server.webhookPort}`, readFileSync(ca), JSON.stringify(reviewObject(sliceObject())));
    assert.equal(JSON.parse(answer.body).response.patchType, 'JSONPatch');
    server.child.kill('SIGTERM');
    assert.equal(await exitWithin(server, 10_000), 0);
  } finally {
    server.child.kill('SIGKILL');
  }
});
