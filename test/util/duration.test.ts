// Go-style durations: `?timeout=` from the API server and the --resync-interval flag.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration } from '../../src/util/duration.ts';

test('reads the durations Kubernetes writes', () => {
  assert.equal(parseDuration('10s'), 10_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1.5s'), 1_500);
  assert.equal(parseDuration('0'), 0);
});

test('refuses what is not a duration', () => {
  for (const raw of ['', 's', '10', '10x', 'soon', '10s ', '-1s', '1e3s']) assert.equal(parseDuration(raw), undefined, raw);
});

test('a long run of digits is refused at once, not after a quadratic scan', () => {
  // Client input (?timeout=): 16,000 digits took 127 ms before the length cap; counted, not timed, here.
  assert.equal(parseDuration('9'.repeat(16_000)), undefined);
  assert.equal(parseDuration(`${'9'.repeat(16_000)}s`), undefined);
  assert.equal(parseDuration(`${'1'.repeat(60)}s`), Number(`${'1'.repeat(60)}`) * 1000);
});
