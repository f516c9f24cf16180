// The confirming pass's delay over several passes: it doubles while confirming passes keep writing (another writer
// keeps putting the slices back) and starts over at the first delay once a pass writes nothing. A delay never reset
// would reach its 5-minute cap after a few failovers, and a fresh failover's writes undone would stay undone that long.
// The delays are read from the timers the controller sets (the spy records them and runs them at once), so nothing
// waits for real time; the stored objects are a fake behind the controller's StoredObjects interface.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { ListPage } from '../../src/kube/client.ts';
import type { StoredObjects } from '../../src/controller/stored-objects.ts';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject } from '../support/builders.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

/** The default first delay: confirming passes come after 10 to 20 s, then 20 to 40 s, and so on. */
const CONFIRM_AFTER_MS = 10_000;

/** True when setTimeout was called by the controller's own code (the first frame past the spy and node's mock), not by a module it calls. */
function fromController(): boolean {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  const caller = frames.find((frame) => !frame.includes('confirm-delay.test.ts') && !frame.includes('node:internal'));
  return caller?.includes('reconciler.ts') ?? false;
}

/** Each delay of 5 s or more the controller sets (only the confirmations here: no errors, no absent resource), run at once. */
function controllerDelays(t: TestContext): number[] {
  const delays: number[] = [];
  const real = globalThis.setTimeout;
  t.mock.method(globalThis, 'setTimeout', (callback: () => void, ms?: number) => {
    if (fromController() && ms !== undefined && ms >= CONFIRM_AFTER_MS / 2) {
      delays.push(ms);
      return real(callback, 0);
    }
    return real(callback, ms);
  });
  return delays;
}

/**
 * A slice the view rewrites, listed while the pass under way (`pass()`, from 1) is in `writing`; otherwise nothing is
 * listed. Patches are accepted and change nothing, as when Liqo's writer puts the slice back before the next pass.
 */
function storedObjects(writing: ReadonlySet<number>, pass: () => number): StoredObjects {
  const slice = sliceObject({ name: 'web', addresses: [['10.63.0.7']] });
  return {
    listPage: async (): Promise<ListPage> => ({ items: writing.has(pass()) ? [structuredClone(slice)] : [], resourceVersion: '1', continueToken: undefined }),
    get: async () => structuredClone(slice),
    patch: async () => {},
    // A healing watch the server never answers with an event: these passes are what the tests look at.
    watch: async () => new AbortController(),
    close: () => {},
  };
}

const within = (delay: number | undefined, first: number): boolean => delay !== undefined && delay >= first && delay <= 2 * first;

test('the confirming delay doubles while passes keep writing and starts over at the first delay after a pass that writes nothing', async (t) => {
  const delays = controllerDelays(t);
  // Passes 1 to 4 write (the first sync, then three confirmations finding the slice put back), pass 5 finds it in step;
  // pass 6 (a later change) writes again and its confirmation, pass 7, finds it in step.
  const { logger, passes } = recordingLogger();
  const objects = storedObjects(new Set([1, 2, 3, 4, 6]), () => passes().length + 1);
  const store = new SnapshotStore();
  store.publishFccs([fcc()]);
  const reconciler = new SliceReconciler({
    config: new KubeConfig(), storedObjects: objects, view: store, clusterId: undefined, logger, metrics: new Metrics(),
    resyncIntervalMs: 0, settleMs: 0, confirmAfterMs: CONFIRM_AFTER_MS,
  });
  reconciler.start();
  try {
    await waitFor(() => passes().length >= 5, { description: 'four writing passes and the one that writes nothing' });
    assert.deepEqual(passes().map((p) => [p.listed, p.patched]), [[1, 1], [1, 1], [1, 1], [1, 1], [0, 0]]);
    const [first, second, third, fourth] = delays;
    assert.equal(delays.length, 4, `one confirmation after each writing pass: ${delays.join(', ')}`);
    assert.ok(within(first, CONFIRM_AFTER_MS), `first ${first}`);
    assert.ok(within(second, 2 * CONFIRM_AFTER_MS), `second ${second}`);
    assert.ok(within(third, 4 * CONFIRM_AFTER_MS), `third ${third}`);
    assert.ok(within(fourth, 8 * CONFIRM_AFTER_MS), `fourth ${fourth}`);

    reconciler.trigger('a later failover', 0);
    await waitFor(() => passes().length >= 7, { description: 'the next writing pass and its confirmation' });
    assert.deepEqual(passes().slice(5).map((p) => [p.listed, p.patched]), [[1, 1], [0, 0]]);
    assert.equal(delays.length, 5, `one confirmation after the sixth pass: ${delays.join(', ')}`);
    assert.ok(within(delays[4], CONFIRM_AFTER_MS), `after a pass that wrote nothing, the first delay again (10 to 20 s): ${delays[4]}`);
  } finally {
    await reconciler.stop();
  }
});
