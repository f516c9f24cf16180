// The healing watch (SPEC §5): a stored object written without the webhook's review, while the view stands still, is
// patched within about a second by the leader, with no pass; an event already in step costs no request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics, type HealReason } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject, type SliceSpec } from '../support/builders.ts';
import { startKubeApiServer, type KubeApiServer, type MutateHook } from '../support/kube-api-server.ts';
import { TestTime } from '../support/test-time.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger, type LogRecord } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const SLICE = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo' } as const;

interface World {
  readonly server: KubeApiServer;
  readonly store: SnapshotStore;
  readonly metrics: Metrics;
  readonly records: readonly LogRecord[];
  passes(): number;
  addresses(name: string): unknown;
  /** Liqo's writer puts `spec` back as it writes it; the webhook reviews it only while `reviewed` is set. */
  putBack(spec: SliceSpec): Promise<void>;
  setReviewed(reviewed: boolean): void;
  requests(method: string): number;
}

interface HealerWorldOptions {
  readonly isLeader?: () => boolean;
  readonly watchTimeoutSeconds?: number;
  /** The controller's clock and the healing watch's timers; real ones without. */
  readonly time?: TestTime;
  readonly settleMs?: number;
  readonly maxConcurrentWrites?: number;
}

async function withHealer(slices: readonly SliceSpec[], run: (world: World) => Promise<void>, options: HealerWorldOptions = {}): Promise<void> {
  let reviewed = true;
  const store = new SnapshotStore();
  const hook = webhookHook(store);
  const mutate: MutateHook = (object, context) => (reviewed ? hook(object, context) : object);
  const server = await startKubeApiServer({ mutate });
  for (const spec of slices) await server.create(sliceObject(spec));
  store.publishFccs([fcc()]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const metrics = new Metrics();
  const { logger, records, passes } = recordingLogger();
  // No resync and no confirming pass: whatever puts a slice right below is the healing watch.
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics, resyncIntervalMs: 0, settleMs: 5, confirmAfterMs: 0, ...options });
  const world: World = {
    server, store, metrics, records,
    passes: () => passes().length,
    addresses: (name) => (server.get({ ...SLICE, name })?.endpoints as { addresses: string[] }[]).map((e) => e.addresses),
    putBack: async (spec) => {
      const original = sliceObject(spec) as { metadata: Record<string, unknown> };
      const stored = server.get({ ...SLICE, name: spec.name as string });
      await server.update({ ...original, metadata: { ...original.metadata, ...(stored?.metadata?.resourceVersion === undefined ? {} : { resourceVersion: stored.metadata.resourceVersion }) } });
    },
    setReviewed: (value) => { reviewed = value; },
    requests: (method) => server.requests.filter((r) => r.method === method && r.path.includes('/endpointslices')).length,
  };
  try {
    reconciler.start();
    await run(world);
  } finally {
    await reconciler.stop();
    await server.close();
  }
}

/** A pair of two other clusters: published beside web's, the view moves and web's plan stays the same. */
const OTHER_PAIR = fcc({ name: 'other', a: 'cluster4', b: 'cluster5', aPod: '10.90.0.0/16', aRemapped: '10.91.0.0/16', bPod: '10.92.0.0/16', bRemapped: '10.93.0.0/16' });

const healed = async (metrics: Metrics, resource: string, reason: string): Promise<number> => {
  const text = await metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`shortcut_webhook_objects_healed_total{resource="${resource}",reason="${reason}"}`));
  return Number(line?.split(' ').at(-1) ?? NaN);
};

test('a write stored without the webhook\'s review, in a view that stands still, is healed by the watch with no pass', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  await withHealer([web], async ({ addresses, passes, putBack, setReviewed, metrics, records }) => {
    await waitFor(() => passes() >= 1 && JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'the first pass wrote the shortcut' });
    setReviewed(false);
    await putBack(web);
    assert.deepEqual(addresses('web'), [['10.63.0.7']], 'stored as Liqo wrote it');
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'healed', timeoutMs: 5000 });
    assert.equal(passes(), 1, 'no pass did it');
    await waitFor(async () => (await healed(metrics, 'endpointslices', 'not-reviewed')) === 1, { description: 'counted as not reviewed' });
    await waitFor(() => records.some((r) => String(r.msg).startsWith('healed stored objects written without the webhook')), { description: 'said once for the burst' });
    // A write the webhook never reviewed is a problem of the cluster (the API server could not reach it): a warning.
    const said = records.filter((r) => String(r.msg).startsWith('healed stored objects'));
    assert.deepEqual(said.map((r) => r.level), ['warn'], 'one warning line for the burst');
  });
});

test('an event already in step costs one plan and no request', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  const other: SliceSpec = { name: 'other', addresses: [['10.63.0.9']] };
  await withHealer([web, other], async ({ addresses, passes, putBack, setReviewed, requests, metrics }) => {
    await waitFor(() => passes() >= 1 && JSON.stringify(addresses('other')) === '[["10.61.0.9"]]');
    const before = { patch: requests('PATCH'), get: requests('GET') };
    // Reviewed: stored in step, and the watch sees it.
    await putBack(web);
    assert.deepEqual(addresses('web'), [['10.61.0.7']]);
    // Then an unreviewed write, healed: the watch delivers events in order, so web's came before and was let be.
    setReviewed(false);
    await putBack(other);
    await waitFor(() => JSON.stringify(addresses('other')) === '[["10.61.0.9"]]', { description: 'the later write healed' });
    assert.equal(requests('PATCH') - before.patch, 1, 'one patch: the healed one, none for the object in step');
    assert.equal(requests('GET') - before.get, 0, 'no read: the event carries the object');
    await waitFor(async () => (await healed(metrics, 'endpointslices', 'not-reviewed')) === 1);
  });
});

test('a replica that is not the leader heals nothing', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  let leader = true;
  let asked = 0;
  await withHealer([web], async ({ addresses, passes, putBack, setReviewed, requests, metrics }) => {
    await waitFor(() => passes() >= 1 && JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    leader = false;
    setReviewed(false);
    const patches = requests('PATCH');
    const askedBefore = asked;
    await putBack(web);
    // Nothing else asks while no pass runs: the watch asked on the put-back's event, and was told no.
    await waitFor(() => asked > askedBefore, { description: 'the watch saw the write while not leading' });
    // Then leading again: the next unreviewed write is healed, so the watch was open all along and chose not to.
    const second: SliceSpec = { name: 'web', addresses: [['10.63.0.8']] };
    assert.equal(requests('PATCH'), patches);
    leader = true;
    await putBack(second);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.8"]]', { description: 'healed once leading' });
    assert.equal(requests('PATCH'), patches + 1, 'only the write seen while leading was healed');
    // Counted once the patch's answer is in, which is after the stored object shows it.
    await waitFor(async () => (await healed(metrics, 'endpointslices', 'not-reviewed')) === 1, { description: 'counted once' });
  }, { isLeader: () => { asked++; return leader; } });
});

/** The heals of endpointslices counted on /metrics, by reason. */
async function healsByReason(metrics: Metrics): Promise<Record<HealReason, number>> {
  return { 'not-reviewed': await healed(metrics, 'endpointslices', 'not-reviewed'), 'stale-view': await healed(metrics, 'endpointslices', 'stale-view') };
}

const total = (heals: Record<HealReason, number>): number => heals['not-reviewed'] + heals['stale-view'];

/**
 * Liqo's writer puts `spec` back; resolves once it is healed, with how long the healing watch held the heal back (0:
 * healed at once) and the reason it was counted for. The clock moves only here, by the delay the watch set.
 */
async function putBackAndHeal(world: World, time: TestTime, spec: SliceSpec): Promise<{ readonly after: number; readonly reason: HealReason }> {
  const before = await healsByReason(world.metrics);
  const mark = time.timersSet();
  await world.putBack(spec);
  // Either healed at once, or held back by a timer set since the put-back: the clock is moved on by its delay.
  const seen = await waitFor(async () => {
    // The timers read first: a heal done at once sets the burst's timer only once it is counted.
    const [delay] = time.setSince(mark);
    if (total(await healsByReason(world.metrics)) > total(before)) return { delay: 0 };
    return delay === undefined ? undefined : { delay };
  }, { description: 'healed or held back' });
  time.advance(seen.delay);
  // Counted right before the burst's timer is set: no timer of this heal is taken for the next put-back's.
  const after = await waitFor(async () => {
    const now = await healsByReason(world.metrics);
    return total(now) > total(before) ? now : undefined;
  }, { description: 'healed' });
  assert.equal(total(after), total(before) + 1, 'one heal');
  return { after: seen.delay, reason: after['not-reviewed'] > before['not-reviewed'] ? 'not-reviewed' : 'stale-view' };
}

test('an object Liqo puts back after every heal (the webhook unreachable) is healed again 0.5, 1 and 2 s after, then every 4 s at most: not in a loop, not left for long', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  const time = new TestTime();
  await withHealer([web], async (world) => {
    const { addresses, passes, setReviewed, requests } = world;
    await waitFor(() => passes() >= 1 && JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    setReviewed(false);
    const base = requests('PATCH');
    const delays: number[] = [];
    for (let heal = 1; heal <= 7; heal++) delays.push((await putBackAndHeal(world, time, web)).after);
    // The first delay is half a second: an object put back once is right again within a second. The cap bounds how
    // long after the webhook answers again the last write put back waits for its heal.
    assert.deepEqual(delays, [0, 500, 1000, 2000, 4000, 4000, 4000]);
    assert.deepEqual(addresses('web'), [['10.61.0.7']]);
    assert.equal(requests('PATCH') - base, 7, 'one patch per heal');
  }, { time });
});

test('a streak of heals ends after 30 s without one: the next write put back is healed at once', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  const time = new TestTime();
  await withHealer([web], async (world) => {
    await waitFor(() => world.passes() >= 1 && JSON.stringify(world.addresses('web')) === '[["10.61.0.7"]]');
    world.setReviewed(false);
    assert.equal((await putBackAndHeal(world, time, web)).after, 0);
    time.advance(29_999);
    assert.equal((await putBackAndHeal(world, time, web)).after, 500, 'still in the streak');
    time.advance(30_000);
    assert.equal((await putBackAndHeal(world, time, web)).after, 0, 'a new streak');
  }, { time });
});

test('a heal soon after the view moved is counted and said as reviewed with an older view (stale-view), not as a write the webhook missed', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  await withHealer([web], async ({ addresses, passes, putBack, setReviewed, store, metrics, records }) => {
    await waitFor(() => passes() >= 1 && JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    // The view moves (another pair usable; web's plan is the same): its pass writes nothing, and the settling time runs.
    store.publishFccs([fcc(), OTHER_PAIR]);
    await waitFor(() => passes() >= 2, { description: 'the pass for the move' });
    setReviewed(false);
    await putBack(web);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'healed', timeoutMs: 5000 });
    await waitFor(async () => (await healed(metrics, 'endpointslices', 'stale-view')) === 1, { description: 'counted as stale-view' });
    assert.ok(!((await healed(metrics, 'endpointslices', 'not-reviewed')) > 0), 'not counted as not reviewed');
    await waitFor(() => records.some((r) => r.msg === 'healed stored objects reviewed with an older view'), { description: 'said as an older view' });
    assert.equal(records.find((r) => r.msg === 'healed stored objects reviewed with an older view')?.level, 'info', 'info: the webhook did its part');
  });
});

test('10 s after the view moved, a heal counts as stale-view while the pass for the move has not caught up, and as not-reviewed once it has', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  const time = new TestTime();
  await withHealer([web], async (world) => {
    const { server, store, passes, addresses, setReviewed } = world;
    await waitFor(() => passes() >= 1 && JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    // The first pass started a second before the view moves: it caught up with the view before the move, not with it.
    time.advance(1000);
    // The pass for the move is kept listing: until it has caught up, an object out of step may be one the webhook
    // reviewed with the view before the move.
    const listing = server.holdNext({ method: 'GET', pathIncludes: '/endpointslices', watch: false });
    store.publishFccs([fcc(), OTHER_PAIR]);
    await listing.arrived;
    time.advance(10_000);
    setReviewed(false);
    try {
      assert.deepEqual(await putBackAndHeal(world, time, web), { after: 0, reason: 'stale-view' });
    } finally {
      listing.release();
    }
    await waitFor(() => passes() >= 2, { description: 'the pass for the move' });
    // Now the webhook has had the view for 10 s and the pass has caught up: an object out of step was not reviewed.
    assert.deepEqual(await putBackAndHeal(world, time, web), { after: 500, reason: 'not-reviewed' });
  }, { time });
});

test('a heal queued while the view moves is planned again on the view it is written under, from the object as stored', async () => {
  const first: SliceSpec = { name: 'first', addresses: [['10.63.0.7']] };
  const second: SliceSpec = { name: 'second', addresses: [['10.63.0.9']] };
  let asked = 0;
  // One heal in flight at a time, no pass for a minute, and timers that never run: only the queued heal writes.
  await withHealer([first, second], async ({ server, store, addresses, putBack, setReviewed }) => {
    await waitFor(() => server.openWatches() > 0, { description: 'the healing watch' });
    setReviewed(false);
    const held = server.holdNext({ method: 'PATCH', pathIncludes: '/first' });
    try {
      await putBack({ ...first, addresses: [['10.63.0.8']] });
      await held.arrived;
      const before = asked;
      await putBack({ ...second, addresses: [['10.63.0.10']] });
      await waitFor(() => asked > before, { description: 'the second heal planned and queued behind the first' });
      // The FCC's remapped network moves while the second heal waits in the queue.
      store.publishFccs([fcc({ aRemapped: '10.71.0.0/16' })]);
    } finally {
      held.release();
    }
    const healed = await waitFor(() => {
      const now = JSON.stringify(addresses('second'));
      return now === '[["10.63.0.10"]]' ? undefined : now;
    }, { description: 'the second healed' });
    assert.equal(healed, '[["10.71.0.10"]]', 'written as the view says now, not as it said when the heal was queued');
  }, { isLeader: () => { asked++; return true; }, settleMs: 60_000, maxConcurrentWrites: 1, time: new TestTime() });
});

test('the healing watch listed again (its history compacted) asks for a pass: events may have been missed', async () => {
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  await withHealer([web], async ({ server, passes, addresses }) => {
    await waitFor(() => passes() >= 1 && JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    const before = passes();
    // The watch's next resume is answered 410 (its history compacted): it lists again.
    server.failNext({ pathIncludes: '/endpointslices', watch: true }, 410);
    await waitFor(() => passes() > before, { description: 'a pass after the healing watch listed again', timeoutMs: 10_000 });
  }, { watchTimeoutSeconds: 1 });
});
