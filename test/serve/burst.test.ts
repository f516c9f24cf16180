// A burst of maximum-size bodies from a stranger (any pod can reach the webhook port) leaves the process alive and
// ready, with the heap the chart gives it: the reviews in flight are bounded, and past the bound a request is
// answered 503 at once. 32 concurrent reviews of 6.7 MiB once took it past that heap (FATAL ERROR: Reached heap limit).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject, reviewObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { post1, post2, type HttpAnswer } from '../support/https-client.ts';
import { startServer } from '../support/process.ts';
import { scratchDir } from '../support/scratch.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const dir = scratchDir('shortcut-burst-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));

/** The chart's heap (values.yaml nodeOptions) and the image's young generation (Dockerfile). */
const CHART_NODE_OPTIONS = '--max-old-space-size=160 --max-semi-space-size=4';
const LIMIT = 7 * 1024 * 1024;

/**
 * A review as large as the limit lets through, of the costliest real shape measured (endpoints of 100 addresses:
 * 3.9 bytes of heap a byte), object and oldObject alike. A stranger is not held to 1,000 endpoints a slice.
 */
function maximumReview(): Buffer {
  const addresses = (i: number) => Array.from({ length: 100 }, (_, j) => `10.63.${i % 256}.${j}`);
  const build = (count: number) => {
    const slice = sliceObject({ addresses: Array.from({ length: count }, (_, i) => addresses(i)) });
    return Buffer.from(JSON.stringify(reviewObject(slice, { operation: 'UPDATE', oldObject: slice })));
  };
  const perEndpoint = build(101).length - build(100).length;
  let count = Math.floor((LIMIT - build(0).length) / perEndpoint);
  while (build(count).length > LIMIT) count--;
  return build(count);
}

/** The costliest text to parse: an object (about 56 bytes of heap) for every 3 bytes, just under the limit. */
const HOSTILE = Buffer.from(`[${Array(Math.floor((LIMIT - 2) / 3)).fill('{}').join(',')}]`);

/** One review on the session; a stream reset before any answer is status -1, which the test then reports. */
function send(session: ClientHttp2Session, body: Buffer): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'POST', ':path': '/mutate/endpointslices?timeout=10s', 'content-type': 'application/json', 'content-length': String(body.length) });
    const chunks: Buffer[] = [];
    let status = 0;
    stream.on('response', (headers) => { status = Number(headers[':status']); });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status, headers: {}, body: Buffer.concat(chunks).toString(), httpVersion: '2.0' }));
    // A refused stream may be reset under a body still being written: its answer has been read by then.
    stream.on('error', (error) => resolve({ status: status === 0 ? -1 : status, headers: {}, body: status === 0 ? String(error) : Buffer.concat(chunks).toString(), httpVersion: '2.0' }));
    stream.end(body);
  });
}

async function ops(port: number, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, text: await response.text() };
}

function metric(text: string, name: string): number {
  return text.split('\n').filter((line) => line.startsWith(name)).reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

test('a burst of 40 maximum-size bodies leaves serve alive and ready: some answered 503 at once, the others served, and a normal review right after', { timeout: 180_000 }, async () => {
  const review = maximumReview();
  assert.ok(review.length > LIMIT - 256 * 1024 && review.length <= LIMIT, `the review is ${review.length} bytes`);
  const server = await startServer(['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--shortcuts', shortcuts], { NODE_OPTIONS: CHART_NODE_OPTIONS });
  const url = `https://127.0.0.1:${server.webhookPort}`;
  // Node's client refuses streams past 10 MB of a session's buffered writes (ENHANCE_YOUR_CALM); Go's, the API server's, has no such cap.
  const session = http2Connect(url, { ca: certs.ca, servername: 'localhost', maxSessionMemory: 1024 });
  await new Promise((resolve, reject) => { session.once('connect', resolve); session.once('error', reject); });
  try {
    await waitFor(async () => (await ops(server.opsPort, '/readyz')).status === 200, { timeoutMs: 20_000, description: 'ready before the burst' });
    // One connection, as kube-apiserver sends every review, and a second stranger over HTTP/1.1 besides.
    const answers = await Promise.all([
      ...Array.from({ length: 32 }, () => send(session, review)),
      ...Array.from({ length: 4 }, () => send(session, HOSTILE)),
      ...Array.from({ length: 4 }, () => post1(url, certs.ca, review)),
    ]);
    const statuses = answers.map((answer) => answer.status);
    const served = answers.filter((answer) => answer.status === 200);
    const shed = answers.filter((answer) => answer.status === 503);
    assert.equal(served.length + shed.length, answers.length, `only 200 and 503: ${statuses.join(' ')}`);
    assert.ok(served.length >= 1, `some served: ${statuses.join(' ')}`);
    assert.ok(shed.length >= 1, `some shed: ${statuses.join(' ')}`);
    for (const answer of served) assert.equal(JSON.parse(answer.body).response.allowed, true);
    for (const answer of shed) assert.match(JSON.parse(answer.body).message, /^busy: /);
    // The hostile bodies are never parsed: each is estimated at more than the whole budget once it is in.
    assert.deepEqual(answers.slice(32, 36).map((answer) => answer.status), [503, 503, 503, 503]);

    assert.equal(server.child.exitCode, null, server.lines.join('\n'));
    assert.equal((await ops(server.opsPort, '/readyz')).status, 200);
    const normal = await post2(session, JSON.stringify(reviewObject(sliceObject())));
    assert.equal(normal.status, 200);
    assert.ok(JSON.parse(normal.body).response.patch, 'the normal review is patched');
    const metrics = (await ops(server.opsPort, '/metrics')).text;
    assert.equal(metric(metrics, 'shortcut_webhook_admission_shed_total{resource="endpointslices"}'), shed.length);
    assert.ok(server.lines.some((line) => line.includes('requests refused: too much work in flight')), 'the shedding is logged');
  } finally {
    session.destroy();
    server.child.kill('SIGKILL');
  }
});
