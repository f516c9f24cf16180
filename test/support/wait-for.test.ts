// The waits every test relies on fail at their bound instead of hanging the file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitFor, within } from './wait-for.ts';

test('waitFor fails at its deadline when the condition itself never settles (a request never answered)', async () => {
  const started = Date.now();
  await within(assert.rejects(waitFor(() => new Promise<boolean>(() => {}), { timeoutMs: 200, description: 'an answer' }),
    /waitFor: an answer not met within 200 ms/), { timeoutMs: 5000, description: 'waitFor' });
  assert.ok(Date.now() - started < 2000);
});

test('within gives the promise\'s value, or fails naming it once its time is up', async () => {
  assert.equal(await within(Promise.resolve(7)), 7);
  await assert.rejects(within(new Promise(() => {}), { timeoutMs: 50, description: 'the relist' }), /within: the relist not settled within 50 ms/);
});
