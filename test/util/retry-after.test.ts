import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryAfterMs } from '../../src/util/retry-after.ts';

const now = Date.parse('2026-01-01T00:00:00Z');

test('Retry-After in delta-seconds, as the API server sends it with a 429', () => {
  assert.equal(retryAfterMs('1', { now, maxMs: 60_000 }), 1000);
  assert.equal(retryAfterMs(' 7 ', { now, maxMs: 60_000 }), 7000);
  assert.equal(retryAfterMs('0', { now, maxMs: 60_000 }), 0);
});

test('Retry-After as an HTTP-date, measured from now; a date in the past waits nothing', () => {
  assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', { now, maxMs: 60_000 }), 5000);
  assert.equal(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', { now, maxMs: 60_000 }), 0);
});

test('a wait longer than the bound is cut to it', () => {
  assert.equal(retryAfterMs('3600', { now, maxMs: 60_000 }), 60_000);
});

test('absent or unreadable: undefined, so the caller waits as it would without one', () => {
  for (const value of [undefined, '', '  ', '-1', '1.5', 'soon', '3.5']) assert.equal(retryAfterMs(value, { now, maxMs: 60_000 }), undefined, String(value));
});
