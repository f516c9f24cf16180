// Past the bound on work in flight the webhook answers 503 at once, counts it and says it in the log; a share comes
// back when its request ends, however it ends; a body declared over the limit is still answered 413.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { buildWebhookApp } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { loadTlsMaterial } from '../../src/tls.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, reviewObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { post1 } from '../support/https-client.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const REVIEW = JSON.stringify(reviewObject(sliceObject()));

/** Room for one review of this size (37 bytes of heap a byte, under 256 KiB) and not two. */
const BUDGET = { maxReviews: 8, maxBytes: Buffer.byteLength(REVIEW) * 37 * 1.5 };

async function start() {
  const logs: string[] = [];
  const logger = createLogger('info', new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
  const metrics = new Metrics();
  const view = new SnapshotStore();
  view.publishFccs([fcc()]);
  const app = buildWebhookApp({ view, metrics, logger, clusterId: undefined, budget: BUDGET,
    tls: await loadTlsMaterial({ cert: certs.certFile, key: certs.keyFile }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.addresses()[0];
  const port = typeof address === 'object' ? address.port : 0;
  return { app, metrics, logs, port, url: `https://localhost:${port}` };
}

/** A review whose headers are sent and whose body never comes: it holds its share until the socket goes. */
function holdShare(port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: certs.ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] }, () => {
      socket.write(`POST /mutate/endpointslices HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(REVIEW)}\r\n\r\n{`);
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

test('while a review holds the budget another is answered 503 at once and counted; once it ends, reviews are served again', async () => {
  const { app, metrics, logs, port, url } = await start();
  const held = await holdShare(port);
  try {
    const busy = await waitFor(async () => {
      const answer = await post1(url, certs.ca, REVIEW);
      return answer.status === 503 ? answer : undefined;
    }, { description: 'the held review has taken its share' });
    assert.match(JSON.parse(busy.body).message, /^busy: 1 reviews in flight, estimated at [\d.]+ MiB of heap/);
    assert.equal(busy.headers['retry-after'], undefined, 'no Retry-After: kube-apiserver must not retry, it fails open');
    assert.match(await metrics.registry.metrics(), /shortcut_webhook_admission_shed_total\{resource="endpointslices"\} [1-9]/);
    assert.ok(logs.some((line) => line.includes('requests refused: too much work in flight')));

    held.destroy();
    await waitFor(async () => (await post1(url, certs.ca, REVIEW)).status === 200, { description: 'the share came back with the client gone' });
    assert.equal((await post1(url, certs.ca, REVIEW)).status, 200, 'a served review gives its share back too');
  } finally {
    held.destroy();
    await app.close();
  }
});

test('a body declared over 7 MiB is answered 413 even while the budget is full', async () => {
  const { app, port, url } = await start();
  const held = await holdShare(port);
  try {
    await waitFor(async () => (await post1(url, certs.ca, REVIEW)).status === 503, { description: 'the budget is full' });
    const answer = await post1(url, certs.ca, Buffer.alloc(8 * 1024 * 1024, 0x20));
    assert.equal(answer.status, 413);
  } finally {
    held.destroy();
    await app.close();
  }
});
