// The webhook fails open: internal errors and spent deadlines are answered allowed, without a patch.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { buildWebhookApp } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { loadTlsMaterial } from '../../src/tls.ts';
import { SnapshotStore, type ShortcutView } from '../../src/view/shortcut-view.ts';
import { fcc, reviewObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { post1 } from '../support/https-client.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();

/** A clock the test moves by hand: the webhook's `?timeout=` budget runs on it, so no test waits for real time. */
class TestClock {
  now = 0;
  reads = 0;
  readonly read = (): number => {
    this.reads++;
    return this.now;
  };
}

async function start(view: ShortcutView, clock = new TestClock()) {
  const logs: string[] = [];
  const logger = createLogger('info', new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
  const metrics = new Metrics();
  const app = buildWebhookApp({ view, metrics, logger, clusterId: undefined, clock: clock.read,
    tls: await loadTlsMaterial({ cert: certs.certFile, key: certs.keyFile }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.addresses()[0];
  const port = typeof address === 'object' ? address.port : 0;
  return { app, metrics, logs, url: `https://localhost:${port}` };
}

/** A synced view whose every read moves the clock on by `ms`: a rewrite that takes that long. */
function slowView(clock: TestClock, ms: number): ShortcutView {
  const store = new SnapshotStore();
  store.publishFccs([fcc()]);
  return { isSynced: () => true, isLapsed: () => false, lastSync: () => 0, subscribe: () => () => {}, current: () => {
    clock.now += ms;
    return store.current();
  } };
}

test('an internal error is logged, counted and answered allowed without a patch', async () => {
  const healthy = new SnapshotStore();
  const broken: ShortcutView = { ...healthy, isSynced: () => true, isLapsed: () => false, lastSync: () => 0, subscribe: () => () => {},
    current: () => { throw new Error('view exploded'); } };
  const { app, metrics, logs, url } = await start(broken);
  try {
    const answer = await post1(url, certs.ca, JSON.stringify(reviewObject(sliceObject(), { uid: 'boom' })));
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body).response, { uid: 'boom', allowed: true });
    assert.match(await metrics.registry.metrics(), /admission_requests_total\{operation="CREATE",result="error",resource="endpointslices"\} 1/);
    assert.ok(logs.some((line) => line.includes('view exploded') && line.includes('"uid":"boom"')));
  } finally {
    await app.close();
  }
});

test('a review whose ?timeout= budget is spent before it is read is answered unpatched', async () => {
  const store = new SnapshotStore();
  store.publishFccs([fcc()]);
  const clock = new TestClock();
  const { app, metrics, url } = await start(store, clock);
  try {
    const body = Buffer.from(JSON.stringify(reviewObject(sliceObject(), { uid: 'late' })));
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(new URL('/mutate/endpointslices?timeout=50ms', url), {
        method: 'POST', ca: certs.ca, servername: 'localhost',
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      });
      req.on('error', reject);
      // Half the body, then the rest once the webhook has stamped the request's arrival and 60 ms have passed on
      // its clock: a slow client that used up the API server's whole 50 ms.
      req.write(body.subarray(0, 100));
      waitFor(() => clock.reads >= 1, { description: 'the request has arrived' }).then(() => {
        clock.now += 60;
        req.end(body.subarray(100));
      }, reject);
    });
    assert.deepEqual(JSON.parse(answer).response, { uid: 'late', allowed: true });
    assert.match(await metrics.registry.metrics(), /admission_requests_total\{operation="CREATE",result="skipped",resource="endpointslices"\} 1/);
  } finally {
    await app.close();
  }
});

/** A review whose rewrite takes `ms` of a 100 ms ?timeout=: answered unpatched, and counted as skipped. */
async function answeredUnpatched(ms: number): Promise<void> {
  const clock = new TestClock();
  const { app, metrics, url } = await start(slowView(clock, ms), clock);
  try {
    const answer = await post1(url, certs.ca, JSON.stringify(reviewObject(sliceObject(), { uid: 'slow' })), { path: '/mutate/endpointslices?timeout=100ms' });
    assert.deepEqual(JSON.parse(answer.body).response, { uid: 'slow', allowed: true });
    assert.match(await metrics.registry.metrics(), /admission_requests_total\{operation="CREATE",result="skipped",resource="endpointslices"\} 1/);
  } finally {
    await app.close();
  }
}

test('a review whose ?timeout= budget runs out during the rewrite is answered unpatched: the patch would come too late', async () => {
  await answeredUnpatched(150);
});

test('a review just inside its ?timeout= budget is patched', async () => {
  // 80 % of 100 ms is the budget; a rewrite of exactly 80 ms is still in time.
  const clock = new TestClock();
  const { app, url } = await start(slowView(clock, 80), clock);
  try {
    const answer = await post1(url, certs.ca, JSON.stringify(reviewObject(sliceObject())), { path: '/mutate/endpointslices?timeout=100ms' });
    assert.equal(JSON.parse(answer.body).response.patchType, 'JSONPatch');
  } finally {
    await app.close();
  }
});

test('a review just past 80 % of its ?timeout= is answered unpatched: the rest is kept for the answer to travel', async () => {
  await answeredUnpatched(81);
});

test('?timeout= is read per request: one app answers a short and a generous timeout each by its own', async () => {
  const clock = new TestClock();
  const { app, url } = await start(slowView(clock, 150), clock);
  try {
    const patched = async (timeout: string) => {
      const answer = await post1(url, certs.ca, JSON.stringify(reviewObject(sliceObject())), { path: `/mutate/endpointslices?timeout=${timeout}` });
      return JSON.parse(answer.body).response.patchType === 'JSONPatch';
    };
    assert.deepEqual([await patched('100ms'), await patched('10s'), await patched('100ms'), await patched('1s')], [false, true, false, true]);
  } finally {
    await app.close();
  }
});

test('a generous ?timeout= does not stop the patch', async () => {
  const store = new SnapshotStore();
  store.publishFccs([fcc()]);
  const { app, url } = await start(store);
  try {
    const answer = await post1(url, certs.ca, JSON.stringify(reviewObject(sliceObject())), { path: '/mutate/endpointslices?timeout=10s' });
    assert.equal(JSON.parse(answer.body).response.patchType, 'JSONPatch');
  } finally {
    await app.close();
  }
});

test('before the first sync of the view, reviews are allowed unpatched rather than stripped of their shortcuts', async () => {
  const store = new SnapshotStore();
  const { app, metrics, url } = await start(store);
  try {
    const rewritten = sliceObject({ addresses: [['10.61.0.151']], annotations: {
      'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' } });
    const answer = await post1(url, certs.ca, JSON.stringify(reviewObject(rewritten, { operation: 'UPDATE', uid: 'early' })));
    assert.deepEqual(JSON.parse(answer.body).response, { uid: 'early', allowed: true });
    assert.match(await metrics.registry.metrics(), /admission_requests_total\{operation="UPDATE",result="skipped",resource="endpointslices"\} 1/);
    store.publishFccs([]);
    const synced = await post1(url, certs.ca, JSON.stringify(reviewObject(rewritten, { operation: 'UPDATE', uid: 'later' })));
    assert.equal(JSON.parse(synced.body).response.patchType, 'JSONPatch', 'once synced, an empty view does restore');
  } finally {
    await app.close();
  }
});

test('a refused body is timed on the app\'s clock from its arrival, like a review', async () => {
  // Every read of this clock is 3 ms after the previous one: arrival, then the refusal.
  const clock = new (class extends TestClock {
    override readonly read = (): number => (this.now += 3);
  })();
  const { app, metrics, url } = await start(new SnapshotStore(), clock);
  try {
    const answer = await post1(url, certs.ca, '{"apiVersion":', {});
    assert.equal(answer.status, 400);
    const text = await metrics.registry.metrics();
    assert.match(text, /^shortcut_webhook_admission_duration_seconds_sum 0\.003$/m);
    assert.match(text, /admission_requests_total\{operation="unknown",result="error",resource="endpointslices"\} 1/);
  } finally {
    await app.close();
  }
});
