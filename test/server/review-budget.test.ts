import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reviewObject, sliceObject } from '../support/builders.ts';
import { containersIn, declaredHeapEstimate, parsedHeapEstimate, ReviewBudget } from '../../src/server/review-budget.ts';

const MiB = 1024 * 1024;

test('refuses the request past the number in flight, and takes one again once a share is released', () => {
  const budget = new ReviewBudget({ maxReviews: 2, maxBytes: 100 });
  const first = budget.admit(1);
  assert.ok(first);
  assert.ok(budget.admit(1));
  assert.equal(budget.admit(1), undefined);
  first.release();
  first.release();
  assert.deepEqual(budget.inFlight(), { reviews: 1, bytes: 1 });
  assert.ok(budget.admit(1));
});

test('refuses the request whose share would pass the bytes in flight, even the first', () => {
  const budget = new ReviewBudget({ maxReviews: 10, maxBytes: 100 });
  assert.equal(budget.admit(101), undefined);
  const held = budget.admit(60);
  assert.ok(held);
  assert.equal(budget.admit(41), undefined);
  assert.ok(budget.admit(40));
});

test('a share grows only while it fits, shrinks always, and a released one neither grows nor counts', () => {
  const budget = new ReviewBudget({ maxReviews: 10, maxBytes: 100 });
  const ticket = budget.admit(10);
  assert.ok(ticket);
  budget.admit(50);
  assert.equal(ticket.resize(51), false);
  assert.deepEqual(budget.inFlight(), { reviews: 2, bytes: 60 });
  assert.equal(ticket.resize(50), true);
  assert.equal(ticket.resize(5), true);
  assert.deepEqual(budget.inFlight(), { reviews: 2, bytes: 55 });
  ticket.release();
  assert.equal(ticket.resize(1), false);
  assert.deepEqual(budget.inFlight(), { reviews: 1, bytes: 50 });
});

test('counts every { and [ of a text, inside strings too', () => {
  assert.equal(containersIn(Buffer.from('{"a":[{},[]],"b":"{["}')), 6);
});

test('a long body is estimated from its objects and arrays: a hostile one far above a real review of its length', () => {
  const slice = sliceObject({ addresses: Array.from({ length: 1000 }, (_, i) => [`10.63.${i >> 8}.${i % 256}`]) });
  const review = Buffer.from(JSON.stringify(reviewObject(slice, { operation: 'UPDATE', oldObject: slice })));
  const hostile = Buffer.from(`[${Array(Math.floor(review.length / 3)).fill('{}').join(',')}]`);
  assert.ok(review.length >= 256 * 1024);
  assert.ok(parsedHeapEstimate(review) < 7 * review.length, 'a real review of 1,000 endpoints: under 7 bytes a byte');
  assert.ok(parsedHeapEstimate(hostile) > 20 * hostile.length, 'an object every 3 bytes costs over 20 bytes a byte');
});

test('a short body is taken at the worst case without a scan; an undeclared one at the limit', () => {
  assert.equal(parsedHeapEstimate(Buffer.from('{"a":1}')), 7 * 37);
  assert.equal(declaredHeapEstimate(40_000), 40_000 * 37);
  assert.equal(declaredHeapEstimate(7 * MiB), 42 * MiB);
});
