// The list/watch loop's restarts back off: a server that closes every watch at once, or fails every list, is
// retried after growing, capped delays, never in a hot loop. The delays are read from the timers the loop sets (the
// spy runs them at once), so nothing waits for real time: a hot loop shows as restarts with no delay between them.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { test, type TestContext } from 'node:test';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { keepObject, ListWatch } from '../../src/view/list-watch.ts';
import { localKubeConfig } from '../support/local-kubeconfig.ts';
import { waitFor } from '../support/wait-for.ts';

/** Caps of 100 s doubling to 400 s: far from any other timer of the process, and from the loop's own watchdog. */
const BACKOFF = { initialMs: 100_000, maxMs: 400_000 };
/** Whole seconds: the watchdog fires after this plus 30 s, 31 s, outside every backoff delay. */
const WATCH_TIMEOUT_SECONDS = 1;

const fromLoop = (): boolean => new Error().stack?.includes('list-watch.ts') ?? false;

/**
 * Each delay the loop sleeps between attempts, recorded and then run at once. The loop's clock stands still, so every
 * watch here ends at once as the loop sees it, however slowly a loaded machine runs the test.
 */
function backoffDelays(t: TestContext): number[] {
  const delays: number[] = [];
  const real = globalThis.setTimeout;
  const realNow = Date.now;
  t.mock.method(Date, 'now', () => (fromLoop() ? 0 : realNow()));
  t.mock.method(globalThis, 'setTimeout', (callback: () => void, ms?: number) => {
    if (fromLoop() && ms !== undefined && ms >= BACKOFF.initialMs / 2) {
      delays.push(ms);
      return real(callback, 0);
    }
    return real(callback, ms);
  });
  return delays;
}

type WatchAnswer = 'close' | 'event-then-close' | 'error';

/** A server whose watches end as soon as they start: the `answers` in turn, then `close` for ever. */
async function closingServer(answers: readonly WatchAnswer[]): Promise<{ server: Server; config: KubeConfig; watches: () => number }> {
  let watches = 0;
  const server = createServer((_request, response) => {
    const answer = answers[watches++] ?? 'close';
    if (answer === 'error') {
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"kind":"Status","code":500}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    if (answer === 'event-then-close') {
      response.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: `o${watches}`, namespace: 'ns', resourceVersion: `${10 + watches}` } } })}\n`);
    }
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const config = localKubeConfig(server);
  return { server, config, watches: () => watches };
}

function inRange(delay: number | undefined, cap: number): boolean {
  return delay !== undefined && delay >= cap / 2 && delay <= cap;
}

test('watches the server closes at once are restarted after doubling, capped delays; an event resets them', async (t) => {
  const delays = backoffDelays(t);
  const { server, config, watches } = await closingServer(['close', 'close', 'close', 'close', 'event-then-close', 'close']);
  let restarts = 0;
  const loop = new ListWatch({
    name: 'things', config, list: async () => ({ items: [], resourceVersion: '1', continueToken: undefined }), keep: keepObject, watchPath: '/api/v1/things',
    onChange: () => {}, onRestart: () => restarts++, logger: createLogger('silent'), backoff: BACKOFF, watchTimeoutSeconds: WATCH_TIMEOUT_SECONDS,
  });
  loop.start();
  try {
    await waitFor(() => watches() >= 7, { description: 'seven watches' });
    const [first, second, third, fourth, afterEvent, again] = delays;
    assert.ok(delays.length >= 6 && restarts >= 6, `a delay before every restart: ${delays.length} delays, ${restarts} restarts`);
    assert.ok(inRange(first, 100_000), `first ${first}`);
    assert.ok(inRange(second, 200_000), `second ${second}`);
    assert.ok(inRange(third, 400_000), `third ${third}`);
    assert.ok(inRange(fourth, 400_000), `capped ${fourth}`);
    assert.ok(inRange(afterEvent, 100_000), `an event reset the backoff: ${afterEvent}`);
    assert.ok(inRange(again, 200_000), `and it grows again: ${again}`);
  } finally {
    await loop.stop();
    server.close();
  }
});

test('a watch refused at once (500) is retried after a delay, not at once', async (t) => {
  const delays = backoffDelays(t);
  const { server, config, watches } = await closingServer(['error', 'error', 'error']);
  const loop = new ListWatch({
    name: 'things', config, list: async () => ({ items: [], resourceVersion: '1', continueToken: undefined }), keep: keepObject, watchPath: '/api/v1/things',
    onChange: () => {}, logger: createLogger('silent'), backoff: BACKOFF, watchTimeoutSeconds: WATCH_TIMEOUT_SECONDS,
  });
  loop.start();
  try {
    await waitFor(() => watches() >= 4, { description: 'four watches' });
    assert.ok(inRange(delays[0], 100_000) && inRange(delays[1], 200_000) && inRange(delays[2], 400_000), delays.join(', '));
  } finally {
    await loop.stop();
    server.close();
  }
});

test('a list that keeps failing is retried after doubling, capped delays, then the watch starts', async (t) => {
  const delays = backoffDelays(t);
  const { server, config, watches } = await closingServer([]);
  let lists = 0;
  const loop = new ListWatch({
    name: 'things', config, watchPath: '/api/v1/things', onChange: () => {}, keep: keepObject, logger: createLogger('silent'), backoff: BACKOFF,
    watchTimeoutSeconds: WATCH_TIMEOUT_SECONDS,
    list: async () => {
      if (++lists <= 4) throw Object.assign(new Error('unavailable'), { code: 503 });
      return { items: [], resourceVersion: '1' };
    },
  });
  loop.start();
  try {
    await waitFor(() => watches() >= 1, { description: 'the watch after the list' });
    assert.equal(lists, 5);
    assert.ok(inRange(delays[0], 100_000) && inRange(delays[1], 200_000) && inRange(delays[2], 400_000) && inRange(delays[3], 400_000),
      delays.join(', '));
  } finally {
    await loop.stop();
    server.close();
  }
});

test('a list answered 429 again and again is asked again when Retry-After says exactly ten times in a row, then after the backoff', async (t) => {
  const delays = backoffDelays(t);
  /** Lists made before the first backoff delay was set: the first, then one per Retry-After honoured. */
  let listsBeforeBackoff = 0;
  const loop = new ListWatch({
    name: 'things', config: new KubeConfig(), watchPath: '/api/v1/things', keep: keepObject, onChange: () => {}, logger: createLogger('silent'),
    backoff: BACKOFF, onListError: () => 'unexpected',
    list: async () => {
      if (delays.length === 0) listsBeforeBackoff++;
      throw new ApiException(429, 'Too Many Requests', '{"kind":"Status","code":429}', { 'retry-after': '0' });
    },
  });
  loop.start();
  try {
    await waitFor(() => delays.length >= 1, { description: 'a backoff after the 429s honoured' });
    assert.equal(listsBeforeBackoff, 11, 'the first list and ten asked again as Retry-After said (client-go\'s bound), the eleventh 429 backed off');
    // The backoff grew meanwhile (each honoured Retry-After is an attempt): a delay of the backoff's, whichever step.
    assert.ok((delays[0] ?? 0) >= BACKOFF.initialMs / 2 && (delays[0] ?? 0) <= BACKOFF.maxMs, `the first backoff, ${delays[0]} ms`);
  } finally {
    await loop.stop();
  }
});
