// The notes /readyz and /debug/pairs give, word for word, when FCCs name the cluster but none is usable, and when
// none names it: the first is a state the FCC table explains, the second a configuration to check.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fcc } from '../support/builders.ts';
import { startHarness } from '../support/webhook-harness.ts';

async function readyz(opsUrl: string): Promise<string> {
  const response = await fetch(`${opsUrl}/readyz`);
  assert.equal(response.status, 200);
  return response.text();
}

async function notes(opsUrl: string): Promise<unknown> {
  return (await (await fetch(`${opsUrl}/debug/pairs`)).json() as { notes: unknown }).notes;
}

test('FCCs that name the configured cluster but are all unusable: ready, with no note, on /readyz and /debug/pairs', async () => {
  const harness = await startHarness({ fccs: [fcc({ connected: false }), fcc({ name: 'no-cidr', b: 'cluster4', aPod: null })], clusterId: 'cluster2' });
  try {
    assert.equal(await readyz(harness.opsUrl), 'ok\n');
    assert.deepEqual(await notes(harness.opsUrl), []);
  } finally {
    await harness.close();
  }
});

test('no FCC names the configured cluster: /readyz says so in the same words as /debug/pairs', async () => {
  const harness = await startHarness({ fccs: [fcc({ connected: false })], clusterId: 'cluster9' });
  try {
    const note = 'no ForeignClusterConnection names cluster cluster9: its slices are left as they are';
    assert.equal(await readyz(harness.opsUrl), `ok\nnote: ${note}\n`);
    assert.deepEqual(await notes(harness.opsUrl), [note]);
  } finally {
    await harness.close();
  }
});
