// Section "offline": `shortcut-webhook rewrite` of a big input, as a user runs it on `kubectl get endpointslices -A
// -o yaml` (or -o json) of a large leaf. The input is BENCH_OFFLINE_MB megabytes (50 unless told) of 100-endpoint
// reflected slices, half of each one's addresses in LIQO.md's shortcut:
//   yaml       one List, as kubectl prints it (items and nested sequences at their key's column), YAML out
//   json       a List as kubectl's JSON (4-space indented) of the same size (fewer slices), YAML out
//   jsonOutput the same JSON, --output json
//   documents  the same slices as one YAML document each, YAML out
// Each is one run of the executable (the bundle, as after `npm ci`) under /usr/bin/time: wall seconds and peak RSS.
// The output goes to a file. Prints one JSON line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { sliceObject } from '../test/support/builders.ts';
import { exampleFccObject } from './fixtures.ts';
import { progress, round, sized } from './stats.ts';

const MB = Number(process.env.BENCH_OFFLINE_MB ?? sized(50, 0.2));
const ENDPOINTS = 100;
const TEMPLATES = 16;
const root = new URL('..', import.meta.url).pathname;
const bin = join(root, 'bin/shortcut-webhook.js');

const built = spawnSync(process.execPath, [join(root, 'build/bundle.js')], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`build/bundle.js failed: ${built.stderr}`);
const dir = mkdtempSync(join(tmpdir(), 'shortcut-bench-offline-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

/** Slice `i` as the API server returns it: a name of its own, addresses of one of a few templates. */
function slice(i: number): Record<string, unknown> {
  const t = i % TEMPLATES;
  const addresses = Array.from({ length: ENDPOINTS }, (_, k) => [k % 2 === 0 ? `10.63.${t}.${k + 10}` : `10.200.${t}.${k + 10}`]);
  const object = sliceObject({ name: `web-${i}`, namespace: `ns-${i % 50}`, destination: 'cluster2', addresses });
  const { apiVersion: _apiVersion, kind: _kind, ...item } = object;
  return { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', ...item };
}

// YAML in kubectl's layout. Printing 2,000 slices with the yaml package takes longer than the run measured, so a
// few templates are printed and the names swapped in.
const kubectlYaml = (value: unknown) => stringify(value, { indentSeq: false, lineWidth: 0 });
const templates = Array.from({ length: TEMPLATES }, (_, t) => kubectlYaml(slice(t)));
const itemText = (i: number) => (templates[i % TEMPLATES] ?? '').replace(`name: web-${i % TEMPLATES}\n`, `name: web-${i}\n`);
const entry = (text: string) => `- ${text.trimEnd().replaceAll('\n', '\n  ')}\n`;
const perSlice = Buffer.byteLength(entry(itemText(0)));
const slices = Math.floor((MB * 1e6) / perSlice);
progress(`offline: writing ${slices} slices (${MB} MB) as a YAML List, a JSON List and YAML documents`);
const items = Array.from({ length: slices }, (_, i) => itemText(i));
const yamlList = `apiVersion: v1\nitems:\n${items.map(entry).join('')}kind: List\nmetadata:\n  resourceVersion: ""\n`;
const files = {
  yaml: join(dir, 'list.yaml'),
  json: join(dir, 'list.json'),
  documents: join(dir, 'documents.yaml'),
};
writeFileSync(files.yaml, yamlList);
// kubectl's JSON is twice as long as its YAML for the same slices: the JSON List holds as many as fill the same size.
const jsonSlices = Math.floor((MB * 1e6) / Buffer.byteLength(JSON.stringify({ items: [slice(0)] }, null, 4)));
writeFileSync(files.json, JSON.stringify({ apiVersion: 'v1', items: Array.from({ length: jsonSlices }, (_, i) => slice(i)), kind: 'List',
  metadata: { resourceVersion: '' } }, null, 4));
writeFileSync(files.documents, items.join('---\n'));
const shortcuts = join(dir, 'shortcuts.json');
writeFileSync(shortcuts, JSON.stringify(exampleFccObject()));

function run(input: string, output: 'yaml' | 'json'): { seconds: number; rssMB: number } {
  const out = join(dir, 'out');
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', '-o', join(dir, 'time'), '/bin/sh', '-c',
    `exec "$0" "$@" > ${out}`, process.execPath, bin, 'rewrite', '--shortcuts', shortcuts, '--output', output, input], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`rewrite ${input} exited ${result.status}: ${result.stderr}`);
  const [seconds, kB] = spawnSync('cat', [join(dir, 'time')], { encoding: 'utf8' }).stdout.trim().split(/\s+/).slice(-2).map(Number);
  if (statSync(out).size < statSync(input).size / 3) throw new Error(`rewrite ${input} printed too little`);
  return { seconds: seconds ?? Number.NaN, rssMB: round((kB ?? Number.NaN) / 1024, 1) };
}

progress('offline: rewrite of the YAML List');
const yaml = run(files.yaml, 'yaml');
progress('offline: rewrite of the JSON List');
const json = run(files.json, 'yaml');
const jsonOutput = run(files.json, 'json');
progress('offline: rewrite of the YAML documents');
const documents = run(files.documents, 'yaml');
console.log(JSON.stringify({ inputMB: round(statSync(files.yaml).size / 1e6, 1), jsonMB: round(statSync(files.json).size / 1e6, 1), jsonSlices, slices, yaml, json, jsonOutput, documents }));
