// --explain's rows for restored addresses: the FCC whose hub prefix holds the address restored (the base, not the
// shortcut address the slice held) and why it no longer carries it, for each way a shortcut stops being usable;
// and '-' when no FCC holds it any more. The fixtures' explain.txt show the other reasons.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { connectionObject, fccObject, sliceObject } from '../support/builders.ts';
import { runCli } from '../support/run-cli.ts';
import { scratchDir } from '../support/scratch.ts';

/** A slice the webhook rewrote while cluster2-cluster3 was usable: 10.63.0.151 is at 10.61.0.151. */
const rewritten = stringify(sliceObject({
  addresses: [['10.61.0.151'], ['10.200.0.196']],
  annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' },
}));

async function explainWith(objects: readonly object[]): Promise<string> {
  const folder = scratchDir('shortcut-explain-restored-');
  writeFileSync(join(folder, 'shortcuts.yaml'), stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects }));
  const run = await runCli(['rewrite', '--shortcuts', folder, '--explain'], { stdin: rewritten });
  assert.equal(run.code, 0, run.stderr);
  return run.stdout;
}

/** The table row of the restored address: input, output, FCC and reason, as the columns show them. */
function restoredRow(output: string): string[] | undefined {
  const line = output.split('\n').find((l) => l.startsWith('10.61.0.151 '));
  return line?.trim().split(/\s{2,}/);
}

const cases: readonly { what: string; objects: readonly object[]; fcc: string; reason: string }[] = [
  { what: 'the shortcut is no longer connected', objects: [fccObject({ connected: false })],
    fcc: 'liqo/cluster2-cluster3', reason: 'restored: not-connected' },
  { what: 'the leaf\'s Connection to the peer is down', objects: [fccObject(), connectionObject('cluster3', 'Error')],
    fcc: 'liqo/cluster2-cluster3', reason: 'restored: tunnel-down' },
  { what: 'another FCC maps the same source elsewhere', objects: [fccObject(), fccObject({ name: 'cluster2-cluster4', b: 'cluster4', aRemapped: '10.62.0.0/16' })],
    fcc: 'liqo/cluster2-cluster3', reason: 'restored: conflict' },
  { what: 'its target is now another pair\'s source', objects: [fccObject(),
    fccObject({ name: 'cluster2-cluster4', b: 'cluster4', aPod: '10.61.0.0/16', aRemapped: '10.65.0.0/16' })],
  fcc: 'liqo/cluster2-cluster3', reason: 'restored: chain' },
  { what: 'its remapped CIDR is no longer a CIDR of the same length', objects: [fccObject({ aRemapped: '10.61.0.0/24' })],
    fcc: 'liqo/cluster2-cluster3', reason: 'restored: prefix-mismatch' },
];

for (const { what, objects, fcc, reason } of cases) {
  test(`--explain, a restored address when ${what}: ${fcc} ${reason}`, async () => {
    const output = await explainWith(objects);
    assert.deepEqual(restoredRow(output), ['10.61.0.151', '10.63.0.151', fcc, reason], output);
  });
}

// A process reads the files once: it never held the FCC that wrote the record, so no space vouches for the record
// (a running view remembers the FCCs it held, and undoes their records: test/controller/reconciler.test.ts).
const unvouched: readonly { what: string; objects: readonly object[] }[] = [
  { what: 'the FCC is gone', objects: [] },
  { what: 'the FCC now connects two other clusters', objects: [fccObject({ a: 'cluster4', b: 'cluster5' })] },
];
for (const { what, objects } of unvouched) {
  test(`--explain, a record no FCC in the files vouches for when ${what}: left, and the record named as ignored`, async () => {
    const output = await explainWith(objects);
    assert.deepEqual(restoredRow(output), ['10.61.0.151', '10.61.0.151', '-', 'no-fcc (record 10.61.0.151 -> 10.63.0.151 ignored: out-not-ours)'], output);
  });
}
