// `rewrite` reads, rewrites and prints one document (and one List item) at a time: what it prints must stay what the
// whole-input pipeline printed (every document parsed by the yaml package, rewritten, printed by its stringify),
// byte for byte, in every output format.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { rewriteDocument } from '../../src/offline/rewrite-documents.ts';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { fcc, fccObject, reviewObject, sliceObject } from '../support/builders.ts';
import { runCli } from '../support/run-cli.ts';
import { scratchDir } from '../support/scratch.ts';

const dir = scratchDir('shortcut-streaming-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));
const snapshot = buildSnapshot({ version: 1, fccs: [fcc()] });

/**
 * The pipeline before streaming: the yaml package reads everything (JSON Lines went through JSON.parse line by line,
 * as they still do), then each document is rewritten and printed.
 */
function wholeInput(source: string, output: 'yaml' | 'json' | 'patch'): string {
  const values = source.startsWith('{') && source.includes('}\n{') ? source.split('\n').map((line) => JSON.parse(line) as unknown)
    : parseAllDocuments(source, { schema: 'core', uniqueKeys: true })
      .filter((document) => document.contents !== null && (document.contents as { source?: string }).source !== '')
      .map((document) => document.toJS() as unknown);
  const results = values.map((value, i) => {
    const result = rewriteDocument({ name: `stdin#${i + 1}`, value }, snapshot);
    if (typeof result === 'string') throw new Error(result);
    return result;
  });
  if (output === 'patch') return results.map((r) => `${JSON.stringify(r.patch)}\n`).join('');
  if (output === 'json') return results.map((r) => `${JSON.stringify(r.output)}\n`).join('');
  return results.map((r) => stringify(r.output, { lineWidth: 0, version: '1.1' })).join('---\n');
}

const slices = Array.from({ length: 12 }, (_, i) => sliceObject({
  name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`], [`10.200.0.${i + 1}`]],
  ...(i % 4 === 1 ? { destination: 'cluster9' } : {}),
  ...(i % 4 === 2 ? { annotations: { note: 'yes', when: '2025-07-06', empty: '' } } : {}),
  ...(i % 4 === 3 ? { extra: { ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], metadata: { name: `web-${i}`, namespace: 'demo',
    labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io', 'offloading.liqo.io/destination': 'cluster2',
      multi: 'a: b' } } } } : {}),
}));
const untyped = slices.map(({ apiVersion: _a, kind: _k, ...item }) => item);
const list = { apiVersion: 'v1', items: slices, kind: 'List', metadata: { resourceVersion: '' } };
const typed = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', metadata: { resourceVersion: '7' }, items: untyped };
const review = reviewObject(sliceObject(), { operation: 'CREATE' });

const inputs: Record<string, string> = {
  'a List as kubectl prints it': stringify(list, { indentSeq: false }),
  'a List as the yaml package prints it': stringify(list),
  'a typed EndpointSliceList': stringify(typed, { indentSeq: false }),
  'an empty List': stringify({ ...list, items: [] }),
  'a List as kubectl prints JSON': JSON.stringify(list, null, 4),
  'a typed list in JSON': JSON.stringify(typed),
  'documents, a List among them, and a review': [slices[0], list, review, slices[2]].map((value) => stringify(value)).join('---\n'),
  'JSON lines': [slices[0], list, slices[3]].map((value) => JSON.stringify(value)).join('\n'),
};

for (const [name, stdin] of Object.entries(inputs)) {
  for (const output of ['yaml', 'json', 'patch'] as const) {
    test(`${name}, --output ${output}: printed as the whole-input pipeline printed it`, async () => {
      const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', output], { stdin });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, wholeInput(stdin, output));
    });
  }
}

test('an empty input says so (exit 1), as does one of comments only', async () => {
  for (const stdin of ['', '\n\n', '# nothing\n']) {
    const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin });
    assert.equal(run.code, 1, JSON.stringify(stdin));
    assert.match(run.stderr, /stdin holds no document: the input is empty/);
    assert.equal(run.stdout, '');
  }
});

test('broken YAML is named by file, document, line and column (exit 1, nothing printed)', async () => {
  const file = join(dir, 'broken.yaml');
  writeFileSync(file, `${stringify(slices[0])}---\nkind: EndpointSliceList\nitems:\n- metadata: {}\n- a: [1\n  b: 2\n`);
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, file]);
  assert.equal(run.code, 1);
  const lines = stringify(slices[0]).split('\n').length;
  assert.match(run.stderr, new RegExp(`broken\\.yaml#2, line ${lines + 5}, column \\d+: `));
  assert.equal(run.stdout, '');
});

test('a malformed item deep in a List fails the input with nothing printed, naming the document and the item', async () => {
  const bad = { ...list, items: [...slices, sliceObject({ name: 'bad', extra: { endpoints: 5 } })] };
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: stringify(bad, { indentSeq: false }) });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /stdin#1: malformed EndpointSlice demo\/bad at \/items\/12: endpoints is not an array/);
  assert.equal(run.stdout, '');
});
