// What `rewrite` tells a user about an address and about the leaf's Configurations, at two edges: an address the
// slice holds rewritten, restored from its originals annotation and moved again, is `rewritten` (the hub address
// it stands for is not the one it shows), never `identity`; and the note about a Configuration without a view of
// its peer is given only when it records neither the peer's pods nor its external CIDR.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import type { JsonObject } from '../../src/core/json.ts';
import { configurationObject, fccObject, sliceObject } from '../support/builders.ts';
import { runCli } from '../support/run-cli.ts';
import { scratchDir } from '../support/scratch.ts';

/** A slice the webhook rewrote while cluster2-cluster3 mapped 10.63/16 to 10.61/16. */
const rewritten = stringify(sliceObject({
  addresses: [['10.61.0.151']],
  annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' },
}));

function shortcutsFile(objects: readonly object[]): string {
  const folder = scratchDir('shortcut-explain-edges-');
  const path = join(folder, 'shortcuts.yaml');
  writeFileSync(path, stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects }));
  return path;
}

interface Explained { slices: { addresses: { input: string; output: string; reason: string; pair: string | null }[] }[] }

async function explainJson(objects: readonly object[]): Promise<Explained['slices'][number]['addresses']> {
  const run = await runCli(['rewrite', '--shortcuts', shortcutsFile(objects), '--explain', '-o', 'json'], { stdin: rewritten });
  assert.equal(run.code, 0, run.stderr);
  return (JSON.parse(run.stdout) as Explained).slices.flatMap((slice) => slice.addresses);
}

test('--explain: an address restored from its originals and moved by the same pair again is rewritten, not identity', async () => {
  const rows = await explainJson([fccObject()]);
  assert.deepEqual(rows.map((row) => [row.input, row.output, row.reason, row.pair]),
    [['10.61.0.151', '10.61.0.151', 'rewritten', '10.63.0.0/16 -> 10.61.0.0/16']]);
});

test('--explain: an address restored from its originals and moved to the pair\'s new target is rewritten', async () => {
  // The leaf sees cluster3 in two blocks: the record's 10.61.0.151 is in its view of the peer, so the record is trusted.
  const view = configurationObject({ peer: 'cluster3', remotePod: ['10.60.0.0/16', '10.62.0.0/16'], remotePodView: ['10.61.0.0/16', '10.71.0.0/16'], remoteExternalView: '10.72.0.0/16' });
  const rows = await explainJson([fccObject({ aRemapped: '10.71.0.0/16' }), view]);
  assert.deepEqual(rows.map((row) => [row.input, row.output, row.reason]), [['10.61.0.151', '10.71.0.151', 'rewritten']]);
});

test('--explain: an address of an identity pair (source and target the same) is identity', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcutsFile([fccObject({ aPod: '10.61.0.0/16', aRemapped: '10.61.0.0/16' })]),
    '--explain', '-o', 'json'], { stdin: stringify(sliceObject({ addresses: [['10.61.0.151']] })) });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual((JSON.parse(run.stdout) as Explained).slices[0]?.addresses.map((row) => [row.output, row.reason]), [['10.61.0.151', 'identity']]);
});

/** A leaf Configuration for `peer` whose status records only the given lists. */
function configurationWith(peer: string, status: { pod?: string[]; external?: string[] }): JsonObject {
  const object = configurationObject({ peer, remotePod: '10.50.0.0/16', remotePodView: '10.51.0.0/16', remoteExternalView: '10.52.0.0/16' });
  return { ...object, status: { remote: { cidr: status } } };
}

test('the note on a Configuration without a view of its peer: given when it records neither list, not when only one is missing', async () => {
  const objects = [
    fccObject(),
    configurationWith('cluster7', { pod: ['10.51.0.0/16'] }),
    configurationWith('cluster8', { external: ['10.52.0.0/16'] }),
    configurationWith('cluster9', {}),
  ];
  const run = await runCli(['rewrite', '--shortcuts', shortcutsFile(objects)], { stdin: stringify(sliceObject({ addresses: [['10.99.0.1']] })) });
  assert.equal(run.code, 0, run.stderr);
  const notes = run.stderr.split('\n').filter((line) => line.includes('Configuration liqo-tenant-'));
  assert.deepEqual(notes, [
    'shortcut-webhook rewrite: Configuration liqo-tenant-cluster9/cluster9 (peer cluster9) records no status.remote.cidr: the leaf\'s view of that peer is unknown',
  ]);
  // The table of --explain shows what each one records, '-' where a list is missing.
  const explained = await runCli(['rewrite', '--shortcuts', shortcutsFile(objects), '--explain'], { stdin: stringify(sliceObject({ addresses: [['10.99.0.1']] })) });
  assert.equal(explained.code, 0, explained.stderr);
  const rows = explained.stdout.split('\n').filter((line) => line.startsWith('liqo-tenant-')).map((line) => line.trim().split(/\s{2,}/));
  assert.deepEqual(rows, [
    ['liqo-tenant-cluster7/cluster7', 'cluster7', '10.60.0.0/16', '10.51.0.0/16', '-'],
    ['liqo-tenant-cluster8/cluster8', 'cluster8', '10.60.0.0/16', '-', '10.52.0.0/16'],
    ['liqo-tenant-cluster9/cluster9', 'cluster9', '10.60.0.0/16', '-', '-'],
  ]);
});
