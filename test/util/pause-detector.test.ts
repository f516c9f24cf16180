import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PauseDetector } from '../../src/util/pause-detector.ts';

test('a tick late by more than the threshold is a pause, said with its length; a late tick within it is not', () => {
  let clock = 0;
  const pauses: number[] = [];
  const detector = new PauseDetector({ onPause: (ms) => pauses.push(ms), intervalMs: 1000, thresholdMs: 5000, monotonic: () => clock });
  detector.start();
  clock += 1000;
  detector.check();
  clock += 5900;
  detector.check();
  assert.deepEqual(pauses, [], 'an event loop 4.9 s late is busy, not paused');
  clock += 80_000;
  detector.check();
  assert.deepEqual(pauses, [80_000]);
  clock += 1000;
  detector.check();
  assert.deepEqual(pauses, [80_000], 'one pause, said once');
  detector.stop();
});

test('by default, as serve runs it, a process that stood still past 5 s (the reference\'s threshold) is paused, and one 4.9 s late is not', () => {
  let clock = 0;
  const pauses: number[] = [];
  const detector = new PauseDetector({ onPause: (ms) => pauses.push(ms), monotonic: () => clock });
  detector.start();
  clock += 5900;
  detector.check();
  assert.deepEqual(pauses, []);
  clock += 6100;
  detector.check();
  assert.deepEqual(pauses, [6100]);
  detector.stop();
});
