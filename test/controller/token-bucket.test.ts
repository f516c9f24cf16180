// The controller's write limit (SPEC: a bounded rate): a second's worth at once, then one token per 1/rate s.
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

test('a burst of one second\'s worth is granted at once, the next waits for the clock', async () => {
  let now = 0;
  const bucket = new TokenBucket(5, () => now);
  for (let i = 0; i < 5; i++) assert.equal(await settled(bucket.take()), true, `token ${i + 1}`);
  const sixth = bucket.take();
  assert.equal(await settled(sixth), false, 'no sixth token without time passing');
  now += 200; // one token's worth at 5 per second
  await sixth;
  const seventh = bucket.take();
  assert.equal(await settled(seventh), false, 'and the seventh waits again');
  now += 200;
  await seventh;
});
