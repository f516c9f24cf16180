// Identical pairs from two FCCs are one rule: whatever takes that rule out (a conflict on its source or its target, a
// chain) takes out both FCCs, and /debug/pairs names both as unusable for that reason. Looked up apart, the second
// twin would be listed as usable while the rule it gives is not applied.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DebugPairs } from '../../src/server/debug-pairs.ts';
import { fcc, type FccSpec } from '../support/builders.ts';
import { startHarness } from '../support/webhook-harness.ts';

let harness: Awaited<ReturnType<typeof startHarness>>;
before(async () => { harness = await startHarness({ clusterId: 'cluster2' }); });
after(async () => { await harness.close(); });

/** The twins: 10.63.0.0/16 reached at 10.61.0.0/16 on cluster3, from two FCCs (the worked example's pair). */
const twins: readonly FccSpec[] = [{ name: 'one' }, { name: 'two' }];

const cases: readonly { readonly what: string; readonly rival: FccSpec; readonly twinReason: string; readonly rivalReason: string }[] = [
  { what: 'a rival mapping their source elsewhere: both twins conflict', rival: { name: 'rival', b: 'cluster4', aRemapped: '10.62.0.0/16' }, twinReason: 'conflict', rivalReason: 'conflict' },
  { what: 'a rival mapping another source into their target: both twins conflict', rival: { name: 'rival', b: 'cluster4', aPod: '10.64.0.0/16' }, twinReason: 'conflict', rivalReason: 'conflict' },
  { what: 'a rival whose source is their target: both twins are chains, the rival usable', rival: { name: 'rival', b: 'cluster4', aPod: '10.61.0.0/16', aRemapped: '10.65.0.0/16' }, twinReason: 'chain', rivalReason: 'usable' },
];

for (const { what, rival, twinReason, rivalReason } of cases) {
  test(`identical pairs from two FCCs with ${what} (/debug/pairs)`, async () => {
    harness.store.publishFccs([...twins, rival].map((spec) => fcc(spec)));
    const body = await (await fetch(`${harness.opsUrl}/debug/pairs`)).json() as DebugPairs;
    const cluster2 = body.clusters.find((cluster) => cluster.clusterId === 'cluster2');
    const reasonOf = (name: string) => {
      const unusable = cluster2?.unusable.find((entry) => entry.fcc === `liqo/${name}`);
      if (unusable !== undefined) return unusable.reason;
      return cluster2?.pairs.some((pair) => pair.fcc === `liqo/${name}`) ? 'usable' : 'on neither list';
    };
    assert.deepEqual(['one', 'two', 'rival'].map(reasonOf), [twinReason, twinReason, rivalReason], JSON.stringify(cluster2));
  });
}
