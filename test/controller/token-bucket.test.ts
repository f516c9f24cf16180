// The controller's write limit (SPEC: a bounded rate): a second's worth at once, then one token per 1/rate s.
// Time is the test's: an injected clock and an injected sleep that only ends when the test says so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TokenBucket } from '../../src/controller/token-bucket.ts';

/** Whether the promise has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => { done = true; });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

function fakeTime() {
  const time = {
    now: 0,
    sleeps: [] as { ms: number; wake: () => void }[],
    clock: () => time.now,
    sleep: (ms: number) => new Promise<void>((resolve) => { time.sleeps.push({ ms, wake: resolve }); }),
    /** Moves the clock on and ends every sleep asked for so far. */
    advance(ms: number) {
      time.now += ms;
      for (const sleep of time.sleeps.splice(0)) sleep.wake();
    },
  };
  return time;
}

test('a burst of one second\'s worth is granted at once, the next waits for the clock', async () => {
  const time = fakeTime();
  const bucket = new TokenBucket(5, time.clock, time.sleep);
  for (let i = 0; i < 5; i++) assert.equal(await settled(bucket.take()), true, `token ${i + 1}`);
  const sixth = bucket.take();
  assert.equal(await settled(sixth), false, 'no sixth token without time passing');
  assert.deepEqual(time.sleeps.map((s) => s.ms), [200], 'it sleeps exactly until the next token: 1/5 s');
  time.advance(200);
  assert.equal(await settled(sixth), true);
  const seventh = bucket.take();
  assert.equal(await settled(seventh), false, 'and the seventh waits again');
  time.advance(200);
  assert.equal(await settled(seventh), true);
});

test('a sleep that ends early (the clock has not moved) is followed by another, not by a token', async () => {
  const time = fakeTime();
  const bucket = new TokenBucket(2, time.clock, time.sleep);
  await bucket.take();
  await bucket.take();
  const third = bucket.take();
  assert.equal(await settled(third), false);
  time.advance(0);
  assert.equal(await settled(third), false, 'still no token');
  assert.deepEqual(time.sleeps.map((s) => s.ms), [500], 'asks again for the full wait');
  time.advance(250);
  assert.equal(await settled(third), false, 'half a token is not one');
  assert.deepEqual(time.sleeps.map((s) => s.ms), [250], 'and then for the rest');
  time.advance(250);
  assert.equal(await settled(third), true);
});

test('an idle bucket refills to one second\'s worth, never more', async () => {
  const time = fakeTime();
  const bucket = new TokenBucket(3, time.clock, time.sleep);
  time.advance(60_000);
  for (let i = 0; i < 3; i++) assert.equal(await settled(bucket.take()), true, `token ${i + 1}`);
  assert.equal(await settled(bucket.take()), false, 'a minute idle still gives only a burst of 3');
});
