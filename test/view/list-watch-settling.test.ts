// A server back from an outage may answer 403 (its authorizer not yet synced) or 404 (its CRDs not yet served) for a
// few seconds: an optional resource's view must come back within seconds of the first 200, not after a backoff the
// outage grew to its cap. The loop's clock is injected and its sleeps run at once, each moving the clock on by its
// delay, so the cadence is read exactly, however loaded the machine.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { OPTIONAL_RESOURCE_BACKOFF } from '../../src/util/backoff.ts';
import { ListWatch } from '../../src/view/list-watch.ts';
import { waitFor } from '../support/wait-for.ts';

const fromLoop = (): boolean => new Error().stack?.includes('list-watch.ts') ?? false;

/** The loop's sleeps advance `clock` by their delay and end at once. */
function injectedTime(t: TestContext): { now: () => number } {
  let clock = 1_000_000;
  const real = globalThis.setTimeout;
  t.mock.method(globalThis, 'setTimeout', (callback: () => void, ms?: number) => {
    if (!fromLoop() || ms === undefined) return real(callback, ms);
    clock += ms;
    return real(callback, 0);
  });
  return { now: () => clock };
}

type Answer = 'away' | 403 | 200;

/**
 * Lists answered by `answer(now)` (the watch after them is never opened), until the first 200: what each list was
 * answered, and when (the injected clock). A 403 is what the owner expects (an optional resource: none to read), unless
 * `refusalExpected` is false (the FCCs: a refusal is a failure).
 */
async function lists(t: TestContext, answer: (now: number, start: number) => Answer, refusalExpected = true,
  onRefusal: (now: number) => void = () => {}): Promise<{ now: number; answer: Answer }[]> {
  const { now } = injectedTime(t);
  const start = now();
  const seen: { now: number; answer: Answer }[] = [];
  let done = false;
  const watch: ListWatch<unknown> = new ListWatch<unknown>({
    name: 'hub ips.ipam.liqo.io', config: new KubeConfig(), logger: createLogger('silent'),
    watchPath: '/apis/ipam.liqo.io/v1alpha1/ips', backoff: OPTIONAL_RESOURCE_BACKOFF, now,
    list: async () => {
      const answered = answer(now(), start);
      seen.push({ now: now() - start, answer: answered });
      if (answered === 'away') throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      if (answered === 403) throw Object.assign(new Error('forbidden'), { statusCode: 403 });
      return { items: [], resourceVersion: '1' };
    },
    keep: (object) => object,
    onChange: () => {
      done = true;
      void watch.stop();
    },
    onListError: (status) => {
      if (status === 403) onRefusal(now() - start);
      return status === 403 && refusalExpected ? 'expected' : 'unexpected';
    },
  });
  watch.start();
  await waitFor(() => done || seen.length > 200, { description: 'the list answered 200' });
  await watch.stop();
  return seen;
}

const trace = (seen: readonly { now: number; answer: Answer }[]) => seen.map(({ now, answer }) => `${(now / 1000).toFixed(2)} s: ${answer}`).join(', ');

for (const [what, expected] of [['an optional resource\'s 403 (none to read)', true], ['the FCCs\' 403 (a failure)', false]] as const) {
  test(`back from an outage answering ${what} for a few seconds: listed again within 2 s of the first 200, not after the grown backoff`, async (t) => {
    // Away for 90 s (the backoff grows to its 30 s cap); then, from the first list that reaches it, 403 for 5 s; then 200.
    const AWAY_MS = 90_000;
    const REFUSING_MS = 5_000;
    let backAt: number | undefined;
    const seen = await lists(t, (now, start) => {
      if (now - start < AWAY_MS) return 'away';
      backAt ??= now - start;
      return now - start < backAt + REFUSING_MS ? 403 : 200;
    }, expected);
    const last = seen.at(-1);
    assert.ok(backAt !== undefined && last?.answer === 200, trace(seen));
    const askedAfter = (last.now - (backAt + REFUSING_MS)) / 1000;
    assert.ok(askedAfter <= 2, `the 403 lasted ${REFUSING_MS / 1000} s from ${(backAt / 1000).toFixed(2)} s; the product asked again ${askedAfter.toFixed(2)} s after the first 200 would have answered: ${trace(seen)}`);
  });
}

test('a 403 in the first seconds after an outage is not believed: the owner hears of it only once it has lasted 5 s', async (t) => {
  // Away for 60 s, then 403 for 8 s, then 200: the view keeps what it had through the first 5 s of refusals.
  let backAt: number | undefined;
  const heard: number[] = [];
  const seen = await lists(t, (now, start) => {
    if (now - start < 60_000) return 'away';
    backAt ??= now - start;
    return now - start < backAt + 8000 ? 403 : 200;
  }, true, (now) => heard.push(now));
  assert.ok(backAt !== undefined, trace(seen));
  const refusals = seen.filter(({ answer }) => answer === 403);
  assert.ok(refusals.length >= 3, trace(seen));
  assert.ok(heard.length > 0 && heard.every((at) => at - backAt! >= 5000), `heard of the 403 at ${heard.map((at) => ((at - backAt!) / 1000).toFixed(2)).join(', ')} s after the first answer: ${trace(seen)}`);
});

test('a 403 from a server that was not away is asked again at the owner\'s pace: no faster polling of a resource refused for good', async (t) => {
  const seen = await lists(t, (now, start) => (now - start < 60_000 ? 403 : 200));
  const refusals = seen.filter(({ answer }) => answer === 403);
  const gaps = refusals.slice(1).map(({ now }, i) => now - (refusals[i]?.now ?? 0));
  assert.ok(gaps.length > 0 && gaps.every((gap) => gap >= OPTIONAL_RESOURCE_BACKOFF.initialMs / 2), trace(seen));
});
