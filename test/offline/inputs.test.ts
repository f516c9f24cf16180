// The offline command's inputs at their edges, as a user hands them over: YAML that takes the fast reader (a
// single-quoted scalar with an escaped quote), JSON Lines written on Windows (CRLF), a folder of `.yml` files, and a
// comma list in an environment variable with spaces after the commas. Each is read as it is meant, or the user
// gets a wrong value printed, an error, or a file silently left out.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import { fccObject, sliceObject } from '../support/builders.ts';
import { runCli } from '../support/run-cli.ts';
import { scratchDir } from '../support/scratch.ts';

const dir = scratchDir('shortcut-offline-inputs-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));

interface Printed { metadata: { annotations?: Record<string, string>; name: string }; endpoints: { addresses: string[] }[] }

function printedJson(stdout: string): Printed[] {
  return stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Printed);
}

test('a single-quoted scalar with an escaped quote (\'it\'\'s\') is read as the yaml package reads it, and printed so', async () => {
  // As kubectl prints a slice: block style, one-line scalars, the shape the fast reader takes.
  const input = [
    'apiVersion: discovery.k8s.io/v1',
    'kind: EndpointSlice',
    'metadata:',
    '  name: web-abcde',
    '  namespace: demo',
    '  annotations:',
    '    note: \'it\'\'s the owner\'\'s\'',
    '  labels:',
    '    endpointslice.kubernetes.io/managed-by: endpointslice.reflection.liqo.io',
    '    offloading.liqo.io/destination: cluster2',
    'addressType: IPv4',
    'endpoints:',
    '- addresses:',
    '  - 10.63.0.151',
    '  conditions:',
    '    ready: true',
    '',
  ].join('\n');
  const expected = (parse(input) as Printed).metadata.annotations?.note;
  assert.equal(expected, 'it\'s the owner\'s');
  const json = await runCli(['rewrite', '--shortcuts', shortcuts, '-o', 'json'], { stdin: input });
  assert.equal(json.code, 0, json.stderr);
  const [printed] = printedJson(json.stdout);
  assert.equal(printed?.endpoints[0]?.addresses[0], '10.61.0.151', 'the slice was rewritten');
  assert.equal(printed?.metadata.annotations?.note, expected);
  const yaml = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: input });
  assert.equal(yaml.code, 0, yaml.stderr);
  assert.equal((parse(yaml.stdout) as Printed).metadata.annotations?.note, expected);
});

test('JSON Lines with CRLF line ends are read, each line a document', async () => {
  const lines = [sliceObject({ name: 'one' }), sliceObject({ name: 'two', addresses: [['10.63.0.7']] })].map((object) => JSON.stringify(object));
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '-o', 'json'], { stdin: `${lines.join('\r\n')}\r\n` });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(printedJson(run.stdout).map((slice) => [slice.metadata.name, slice.endpoints[0]?.addresses[0]]),
    [['one', '10.61.0.151'], ['two', '10.61.0.7']]);
});

test('a folder input reads its .yml files like .yaml ones, in name order, for the slices and for --shortcuts', async () => {
  const slices = scratchDir('shortcut-yml-slices-');
  writeFileSync(join(slices, 'a.yml'), stringify(sliceObject({ name: 'from-yml' })));
  writeFileSync(join(slices, 'b.yaml'), stringify(sliceObject({ name: 'from-yaml' })));
  const views = scratchDir('shortcut-yml-views-');
  writeFileSync(join(views, 'fcc.yml'), stringify(fccObject()));
  const run = await runCli(['rewrite', '--shortcuts', views, '-o', 'json', '-f', slices]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(printedJson(run.stdout).map((slice) => [slice.metadata.name, slice.endpoints[0]?.addresses[0]]),
    [['from-yml', '10.61.0.151'], ['from-yaml', '10.61.0.151']]);
});

test('SHORTCUT_WEBHOOK_SHORTCUTS="a, b": each path of the comma list is trimmed and read', async () => {
  const views = scratchDir('shortcut-env-list-');
  // Two FCCs in two files: cluster2-cluster3 (10.63/16 at 10.61/16) and cluster2-cluster4 (10.64/16 at 10.62/16).
  writeFileSync(join(views, 'one.yaml'), stringify(fccObject()));
  writeFileSync(join(views, 'two.yaml'), stringify(fccObject({ b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.62.0.0/16' })));
  const env = { SHORTCUT_WEBHOOK_SHORTCUTS: `${join(views, 'one.yaml')}, ${join(views, 'two.yaml')} ` };
  const run = await runCli(['rewrite', '-o', 'json'], { stdin: stringify(sliceObject({ addresses: [['10.63.0.1'], ['10.64.0.1']] })), env });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(printedJson(run.stdout)[0]?.endpoints.map((e) => e.addresses[0]), ['10.61.0.1', '10.62.0.1']);
});
