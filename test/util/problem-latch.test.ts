import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProblemLatch } from '../../src/util/problem-latch.ts';

test('a problem is new once, again after it changed, and again after it was cleared', () => {
  const latch = new ProblemLatch();
  assert.equal(latch.clear(), false, 'nothing standing at first');
  assert.deepEqual(['down', 'down', 'refused', 'refused'].map((m) => latch.isNew(m)), [true, false, true, false]);
  assert.equal(latch.clear(), true);
  assert.equal(latch.clear(), false);
  assert.equal(latch.isNew('refused'), true, 'the same problem after a recovery is said again');
  assert.equal(latch.isNew(''), true, 'an empty message is still a problem');
});
