import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SerialTask } from '../../src/util/serial-task.ts';

function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => { open = resolve; });
  return { promise, open };
}

test('asks during a run become exactly one more run, and they resolve after it', async () => {
  const gates = [gate(), gate()];
  let started = 0;
  let finished = 0;
  const task = new SerialTask(async () => {
    const mine = gates[started++];
    await mine?.promise;
    finished++;
  });
  const first = task.run();
  const second = task.run();
  const third = task.run();
  assert.equal(second, third, 'one queued run serves every ask made during the first');
  assert.equal(started, 1);
  gates[0]?.open();
  await first;
  assert.equal(finished, 1);
  gates[1]?.open();
  await second;
  assert.equal(started, 2);
  assert.equal(finished, 2);
});

test('a failing run does not stop the next one', async () => {
  let calls = 0;
  const task = new SerialTask(async () => {
    calls++;
    if (calls === 1) throw new Error('first fails');
  });
  const first = task.run();
  const second = task.run();
  await assert.rejects(first, /first fails/);
  await second;
  assert.equal(calls, 2);
});
