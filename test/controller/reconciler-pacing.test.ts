// The controller's pace: patches in flight up to its bound, and a 429 (API Priority and Fairness shedding load) holds
// every request of the pass for the Retry-After the API server sent, then sends the same request again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject } from '../support/builders.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger, type LogRecord, type PassRecord } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

interface Sleeps {
  /** The waits asked for, in order. */
  readonly asked: number[];
  /** Ends the oldest wait still pending. */
  release(): void;
  pending(): number;
}

/** A sleep that ends only when the test says so. */
function manualSleep(): Sleeps & { sleep: (ms: number) => Promise<void> } {
  const asked: number[] = [];
  const waiting: (() => void)[] = [];
  return {
    asked,
    sleep: (ms) => { asked.push(ms); return new Promise((resolve) => waiting.push(resolve)); },
    release: () => waiting.shift()?.(),
    pending: () => waiting.length,
  };
}

async function withSlices(count: number, options: { maxConcurrentWrites?: number; isLeader?: () => boolean; onPassDone?: () => void }, run: (context: {
  server: KubeApiServer; store: SnapshotStore; sleeps: Sleeps; passes: () => readonly PassRecord[]; stored: (name: string) => string;
  records: readonly LogRecord[];
  reconciler: SliceReconciler;
}) => Promise<void>): Promise<void> {
  const store = new SnapshotStore();
  const server = await startKubeApiServer({ mutate: webhookHook(store) });
  for (let i = 0; i < count; i++) await server.create(sliceObject({ name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`]] }));
  store.publishFccs([fcc({ connected: false })]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, passes, records } = recordingLogger();
  const sleeps = manualSleep();
  const reconciler = new SliceReconciler({
    config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0, settleMs: 5,
    backoff: { initialMs: 20, maxMs: 100 }, sleep: sleeps.sleep, ...options,
  });
  const stored = (name: string) => JSON.stringify((server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name })
    ?.['endpoints'] as { addresses: string[] }[])[0]?.addresses);
  try {
    reconciler.start();
    await waitFor(() => passes().length >= 1, { description: 'the first pass' });
    await run({ server, store, sleeps, passes, stored, reconciler, records });
  } finally {
    // A test that failed while the pass waits on a sleep of its own: ended, so that stop() returns and the failure shows.
    while (sleeps.pending() > 0) sleeps.release();
    await reconciler.stop();
    await server.close();
  }
}

const patchesOf = (server: KubeApiServer, from: number) => server.requests.slice(from).filter((r) => r.method === 'PATCH');

test('a 429 holds every request of the pass for its Retry-After, then the same patch is sent again', async () => {
  await withSlices(6, { maxConcurrentWrites: 2 }, async ({ server, store, sleeps, passes, stored }) => {
    const before = server.requests.length;
    server.failNext({ method: 'PATCH', pathIncludes: '/web-0' }, 429, { retryAfterSeconds: 3 });
    store.publishFccs([fcc()]);
    await waitFor(() => sleeps.pending() === 1, { description: 'the pass waits after the 429' });
    assert.deepEqual(sleeps.asked, [3000], 'the Retry-After the API server sent');
    // At most the one patch already in flight lands while the pass waits: nothing new starts.
    const duringHold = patchesOf(server, before).length;
    assert.ok(duringHold <= 2, `${duringHold} patches sent by the time the hold began`);
    sleeps.release();
    await waitFor(() => passes().length >= 2, { description: 'the pass after the change' });
    const afterHold = patchesOf(server, before).slice(duringHold);
    assert.ok(afterHold.some((r) => r.path.endsWith('/web-0') && r.status === 200), 'the refused patch is sent again after the wait');
    assert.equal(passes()[1]?.patched, 6);
    assert.equal(passes()[1]?.error, 0, 'a 429 waited out is no error');
    for (let i = 0; i < 6; i++) assert.equal(stored(`web-${i}`), `["10.61.0.${i + 1}"]`);
  });
});

test('a 429 without a readable Retry-After waits one second; a list refused 429 is waited out too', async () => {
  await withSlices(1, {}, async ({ server, store, sleeps, passes, stored }) => {
    server.failNext({ method: 'GET', pathIncludes: '/endpointslices', watch: false }, 429, { retryAfterSeconds: 0 });
    store.publishFccs([fcc()]);
    await waitFor(() => sleeps.pending() === 1, { description: 'the pass waits after the 429' });
    assert.deepEqual(sleeps.asked, [1000]);
    sleeps.release();
    await waitFor(() => passes().length >= 2, { description: 'the pass after the change' });
    assert.equal(passes()[1]?.error, 0);
    assert.equal(stored('web-0'), '["10.61.0.1"]');
  });
});

test('a request refused 429 ten times in a row fails the pass, which is retried later', async () => {
  await withSlices(1, {}, async ({ server, store, sleeps, passes, stored }) => {
    server.failNext({ method: 'PATCH', count: 10 }, 429);
    store.publishFccs([fcc()]);
    for (let i = 0; i < 9; i++) {
      await waitFor(() => sleeps.pending() === 1, { description: `wait ${i + 1}` });
      sleeps.release();
    }
    await waitFor(() => passes().length >= 2, { description: 'the pass that gave up' });
    assert.equal(passes()[1]?.error, 1);
    await waitFor(() => stored('web-0') === '["10.61.0.1"]', { description: 'written by the retried pass' });
  });
});

test('a stop while the pass waits out a Retry-After ends at once, not after the wait', { timeout: 10_000 }, async () => {
  await withSlices(1, {}, async ({ server, store, sleeps, reconciler }) => {
    server.failNext({ method: 'PATCH' }, 429, { retryAfterSeconds: 60 });
    store.publishFccs([fcc()]);
    await waitFor(() => sleeps.pending() === 1, { description: 'the pass waits after the 429' });
    const before = server.requests.length;
    // The manual sleep never ends by itself: only the stop can end the wait.
    await reconciler.stop();
    assert.equal(server.requests.slice(before).filter((r) => r.method === 'PATCH').length, 0, 'nothing sent after the stop');
  });
});

test('a patch held by a 429 asks the fence again before it is sent again: leadership lost during the hold sends nothing, and the stopped pass is not reported done', async () => {
  let leader = true;
  let done = 0;
  await withSlices(1, { isLeader: () => leader, onPassDone: () => { done++; } }, async ({ server, store, sleeps, stored, records }) => {
    const doneBefore = done;
    server.failNext({ method: 'PATCH', pathIncludes: '/web-0' }, 429, { retryAfterSeconds: 3 });
    store.publishFccs([fcc()]);
    await waitFor(() => sleeps.pending() === 1, { description: 'the pass waits after the 429' });
    const before = server.requests.length;
    leader = false;
    sleeps.release();
    await waitFor(() => records.some((r) => String(r.msg).startsWith('pass stopped')), { description: 'the pass stopped by the fence' });
    assert.deepEqual(patchesOf(server, before), [], 'no patch sent once no longer the leader');
    assert.equal(stored('web-0'), '["10.63.0.1"]');
    assert.equal(done, doneBefore, 'a pass the fence stopped is not a pass done (no failover Event, no failover time)');
  });
});
