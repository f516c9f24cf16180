// Capped exponential backoff with full jitter, with the randomness pinned at both ends of its range.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Backoff } from '../../src/util/backoff.ts';

test('delays lie in [cap/2, cap] with the cap doubling from the first delay up to the maximum', () => {
  const lowest = new Backoff({ initialMs: 100, maxMs: 1000 }, () => 0);
  assert.deepEqual(Array.from({ length: 6 }, () => lowest.next()), [50, 100, 200, 400, 500, 500]);
  const highest = new Backoff({ initialMs: 100, maxMs: 1000 }, () => 1);
  assert.deepEqual(Array.from({ length: 6 }, () => highest.next()), [100, 200, 400, 800, 1000, 1000]);
});

test('reset starts again from the first cap', () => {
  const backoff = new Backoff({ initialMs: 100, maxMs: 1000 }, () => 1);
  backoff.next();
  backoff.next();
  backoff.reset();
  assert.equal(backoff.next(), 100);
});

test('a long outage never overflows the cap', () => {
  const backoff = new Backoff({ initialMs: 500, maxMs: 30_000 }, () => 1);
  for (let i = 0; i < 10_000; i++) backoff.next();
  assert.equal(backoff.next(), 30_000);
});
