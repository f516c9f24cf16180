// The hand-moved clock the controller's time tests stand on: a timer runs only when the clock passes it, in order,
// and sees the clock at its own due time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TestTime } from './test-time.ts';

test('timers run in the order they fall due as the clock passes them, each seeing the clock at its due time; a cancelled one never runs', () => {
  const time = new TestTime(1000);
  const ran: string[] = [];
  time.after(300, () => ran.push(`late at ${time.now()}`));
  const cancel = time.after(100, () => ran.push('cancelled'));
  time.after(200, () => ran.push(`early at ${time.now()}`));
  cancel();
  const mark = time.timersSet();
  time.after(50, () => ran.push(`set after the mark, at ${time.now()}`));
  assert.deepEqual(time.setSince(mark), [50]);
  time.advance(199);
  assert.deepEqual(ran, ['set after the mark, at 1050']);
  time.advance(1);
  assert.deepEqual(ran, ['set after the mark, at 1050', 'early at 1200']);
  time.advance(1000);
  assert.deepEqual(ran, ['set after the mark, at 1050', 'early at 1200', 'late at 1300']);
  assert.equal(time.now(), 2200);
});
