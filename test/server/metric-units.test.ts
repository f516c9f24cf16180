// The units the metrics' names promise: dashboards and alerts read _seconds as seconds and a timestamp as Unix
// seconds. Each value here comes from an injected clock, so the expected number is exact.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { buildWebhookApp } from '../../src/app.ts';
import { localStates } from '../../src/core/local-clusters.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { loadTlsMaterial } from '../../src/tls.ts';
import { SnapshotStore, type ShortcutView } from '../../src/view/shortcut-view.ts';
import { fcc, reviewObject, sliceObject, snapshotOf } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { post1 } from '../support/https-client.ts';

const certs = makeCerts();

/** A synced view whose every read moves `clock` on by `ms`: a rewrite that takes that long. */
function slowView(clock: { now: number }, ms: number): ShortcutView {
  const store = new SnapshotStore();
  store.publishFccs([fcc()]);
  return { isSynced: () => true, isLapsed: () => false, lastSync: () => 0, subscribe: () => () => {}, current: () => {
    clock.now += ms;
    return store.current();
  } };
}

async function reviewTaking(ms: number, slice = sliceObject()) {
  const clock = { now: 1000 };
  const logs: string[] = [];
  const logger = createLogger('info', new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
  const metrics = new Metrics();
  const app = buildWebhookApp({ view: slowView(clock, ms), metrics, logger, clusterId: undefined, clock: () => clock.now,
    tls: await loadTlsMaterial({ cert: certs.certFile, key: certs.keyFile }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const address = app.addresses()[0];
    const url = `https://localhost:${typeof address === 'object' ? address.port : 0}`;
    const answer = await post1(url, certs.ca, JSON.stringify(reviewObject(slice)));
    assert.equal(JSON.parse(answer.body).response.allowed, true);
    return { text: await metrics.registry.metrics(), logs };
  } finally {
    await app.close();
  }
}

test('a review that takes 150 ms is observed as 0.15 s in admission_duration_seconds, and logged as 150 ms', async () => {
  const { text, logs } = await reviewTaking(150);
  assert.match(text, /^shortcut_webhook_admission_duration_seconds_sum 0\.15$/m);
  assert.match(text, /^shortcut_webhook_admission_duration_seconds_count 1$/m);
  assert.match(text, /^shortcut_webhook_admission_duration_seconds_bucket\{le="0\.1"\} 0$/m);
  assert.match(text, /^shortcut_webhook_admission_duration_seconds_bucket\{le="0\.25"\} 1$/m);
  const line = logs.find((l) => l.includes('"msg":"slice patched"'));
  assert.equal(JSON.parse(line ?? '{}').ms, 150);
});

test('a review answered without a patch is timed in seconds too', async () => {
  // An address no pair holds: answered without a patch, timed all the same.
  const { text, logs } = await reviewTaking(2, sliceObject({ addresses: [['10.200.0.1']] }));
  assert.ok(logs.every((l) => !l.includes('slice patched')), 'not patched');
  assert.match(text, /^shortcut_webhook_admission_duration_seconds_sum 0\.002$/m);
  assert.match(text, /^shortcut_webhook_admission_duration_seconds_bucket\{le="0\.001"\} 0$/m);
  assert.match(text, /^shortcut_webhook_admission_duration_seconds_bucket\{le="0\.0025"\} 1$/m);
});

test('view_last_sync_timestamp_seconds is the last sync in Unix seconds, read at scrape time', async () => {
  let now = 1_700_000_123_456;
  const store = new SnapshotStore(() => now);
  const metrics = new Metrics();
  metrics.trackView(store);
  assert.match(await metrics.registry.metrics(), /^shortcut_webhook_view_last_sync_timestamp_seconds 0$/m, 'before the first sync');
  store.publishFccs([]);
  assert.match(await metrics.registry.metrics(), /^shortcut_webhook_view_last_sync_timestamp_seconds 1700000123\.456$/m);
  now += 30_000;
  store.confirm();
  assert.match(await metrics.registry.metrics(), /^shortcut_webhook_view_last_sync_timestamp_seconds 1700000153\.456$/m);
});

test('pairs{state} counts FCC sides by state, and a state no side is in any more goes back to 0', async () => {
  const metrics = new Metrics();
  const value = async (state: string) => Number(new RegExp(`^shortcut_webhook_pairs\\{state="${state}"\\} (\\S+)$`, 'm').exec(await metrics.registry.metrics())?.[1]);
  const before = snapshotOf([fcc(), fcc({ name: 'down', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16', connected: false })]);
  // Without --cluster-id every named cluster is local: each FCC counts once per side.
  metrics.setPairStates(localStates(before, undefined));
  assert.deepEqual([await value('usable'), await value('not-connected'), await value('conflict')], [2, 2, 0]);
  metrics.setPairStates(localStates(snapshotOf([fcc()]), 'cluster2'));
  assert.deepEqual([await value('usable'), await value('not-connected')], [1, 0]);
});
