// `rewrite` at its edges: every input it cannot use is said on stderr with the contract's exit code, never echoed in
// silence and never a stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject, sliceObject } from '../support/builders.ts';
import { runCli } from '../support/run-cli.ts';

const root = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'shortcut-edges-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));

test('a folder that cannot be listed is a message and exit 1, not a stack trace', () => {
  // As root no permission bit stops a readdir: the command then runs as nobody, as a non-root user would hit it.
  chmodSync(dir, 0o755);
  chmodSync(shortcuts, 0o644);
  const folder = join(dir, 'locked');
  mkdirSync(folder);
  writeFileSync(join(folder, 'slice.yaml'), stringify(sliceObject()));
  chmodSync(folder, 0o311); // enterable (stat works), not listable
  const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const run = spawnSync(process.execPath, [join(root, 'bin/shortcut-webhook.js'), 'rewrite', '--shortcuts', shortcuts, folder],
    { encoding: 'utf8', cwd: dir, env: { ...process.env, HOME: dir }, ...asUser, timeout: 60_000 });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, new RegExp(`cannot read ${folder}: EACCES`));
  assert.doesNotMatch(run.stderr, /^\s+at /m, 'no stack trace');
  assert.equal(run.stdout, '');
});

const notInputs: readonly [string, unknown, RegExp][] = [
  ['a Deployment', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'demo' } }, /stdin#1: apps\/v1 Deployment demo\/web is not an input rewrite takes/],
  ['a Secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls', namespace: 'demo' }, data: {} }, /stdin#1: v1 Secret demo\/tls is not an input/],
  ['an FCC (the arguments swapped)', fccObject(), /ForeignClusterConnection .* is not an input rewrite takes .*give ForeignClusterConnection objects with --shortcuts/],
  ['a List holding a Service', { apiVersion: 'v1', kind: 'List', items: [sliceObject(), { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' } }] }, /v1 Service web at \/items\/1 is not an input/],
  ['an EndpointSlice of another API version', { ...sliceObject(), apiVersion: 'discovery.k8s.io/v1beta1' }, /demo\/web-abcde: discovery\.k8s\.io\/v1beta1 EndpointSlice is not discovery\.k8s\.io\/v1 EndpointSlice/],
];

for (const [what, document, message] of notInputs) {
  test(`${what} as input is invalid input: a note naming the document, exit 1, nothing printed`, async () => {
    const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: stringify(document) });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, message);
    assert.equal(run.stdout, '');
  });
}

test('the kinds rewrite takes raise no such note: EndpointSlices, reviews, ShadowEndpointSlices', async () => {
  const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u1', operation: 'CREATE', object: sliceObject() } };
  const shadow = { apiVersion: 'offloading.liqo.io/v1beta1', kind: 'ShadowEndpointSlice', metadata: { name: 'web', namespace: 'demo' }, spec: { template: {} } };
  for (const document of [sliceObject(), review, shadow]) {
    const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: stringify(document) });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /not an input/);
  }
});

test('a slice left alone because its annotations would be too large says so on stderr, without --explain', async () => {
  const addresses = Array.from({ length: 100 }, (_, e) => Array.from({ length: 100 }, (_, a) => `10.63.${e}.${a}`));
  const slice = sliceObject({ addresses });
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '-o', 'patch'], { stdin: JSON.stringify(slice) });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, '[]\n');
  assert.match(run.stderr, /demo\/web-abcde left as it came: the annotations would pass the API server's 262144 byte limit/);
});

test('a garbage address is said once per document on stderr, left exactly as written, exit 0', async () => {
  const garbage = sliceObject({ addresses: [['10.63.0.999'], ['not-an-ip', '10.63.0.151']] });
  const clean = sliceObject({ name: 'web-clean' });
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: `${stringify(garbage)}---\n${stringify(clean)}` });
  assert.equal(run.code, 0, run.stderr);
  const notes = run.stderr.split('\n').filter((line) => line.includes('not a canonical IP'));
  assert.deepEqual(notes, ['shortcut-webhook rewrite: stdin#1: left exactly as written, not a canonical IP of the slice\'s family: '
    + '"10.63.0.999" in demo/web-abcde (IPv4), "not-an-ip" in demo/web-abcde (IPv4)']);
  const [first] = run.stdout.split('\n---\n');
  assert.match(first ?? '', /- 10\.63\.0\.999\n/);
  assert.match(first ?? '', /- not-an-ip\n/);
  assert.match(first ?? '', /- 10\.61\.0\.151\n/, 'the canonical address of the same slice is still rewritten');
});

test('the garbage note names a few addresses of a List, not every one', async () => {
  const items = Array.from({ length: 3 }, (_, i) => sliceObject({ name: `web-${i}`, addresses: [[`10.63.0.${300 + i}`, `10.63.1.${300 + i}`]] }));
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '-o', 'json'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
  assert.equal(run.code, 0, run.stderr);
  const notes = run.stderr.split('\n').filter((line) => line.includes('not a canonical IP'));
  assert.equal(notes.length, 1, run.stderr);
  assert.match(notes[0] ?? '', /^shortcut-webhook rewrite: stdin#1: .*"10\.63\.0\.300" in demo\/web-0 \(IPv4\), "10\.63\.1\.300" in demo\/web-0 \(IPv4\), "10\.63\.0\.301" in demo\/web-1 \(IPv4\) and 3 more$/);
});

test('no garbage, no note: an address no pair holds is not taken for garbage', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: stringify(sliceObject({ addresses: [['10.63.0.151'], ['10.200.0.9']] })) });
  assert.equal(run.code, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /canonical/);
});

test('a JSON error is placed where a JSON reader places it, in the whole file: the line of the token after a missing comma', async () => {
  const file = join(dir, 'broken.json');
  // One document: yaml (the fallback reader) put the error at line 2, the key before the missing comma.
  writeFileSync(file, '{"apiVersion": "discovery.k8s.io/v1",\n "kind": "EndpointSlice"\n "metadata": {}}\n');
  const single = await runCli(['rewrite', '--shortcuts', shortcuts, file]);
  assert.equal(single.code, 1);
  assert.match(single.stderr, /broken\.json#1, line 3, column 2: .* in JSON\n$/);
  // JSON Lines: the position was counted from the start of the broken value, not of the file.
  writeFileSync(file, `${JSON.stringify(sliceObject())}\n{"kind": "EndpointSlice",\n "a" 1}\n`);
  const lines = await runCli(['rewrite', '--shortcuts', shortcuts, file]);
  assert.equal(lines.code, 1);
  assert.match(lines.stderr, /broken\.json#2, line 3, column 6: .* in JSON\n$/);
  assert.equal(lines.stdout, '');
});

test('`rewrite --hub` without --shortcuts names what the stock-Liqo path needs of the leaf, not FCCs', async () => {
  const run = await runCli(['rewrite', '--hub', 'examples/stock-liqo/hub.yaml', 'examples/stock-liqo/endpointslice.yaml']);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /needs at least one --shortcuts PATH besides --hub: the leaf's Liqo Connections and Configurations/);
  assert.doesNotMatch(run.stderr, /ForeignClusterConnections to rewrite against/);
  const help = await runCli(['rewrite', '--help']);
  assert.match(help.stdout, /--shortcuts PATH +the leaf's side: ForeignClusterConnections \(FCC path\) and\/or the leaf's Liqo Connections and Configurations \(all the stock-Liqo path needs, with --hub\)/);
});

test('the help texts name what each path reads: the stock-Liqo path needs no FCC, and the hub is read for its IPAM too', async () => {
  const top = await runCli(['--help']);
  assert.match(top.stdout, /rewrite +rewrite EndpointSlices offline against files: FCCs, or the leaf's and the hub's Liqo objects/);
  const rewrite = await runCli(['rewrite', '--help']);
  assert.match(rewrite.stdout, /the stock-Liqo path needs no FCC,\nonly the leaf's Liqo Configurations and Connections \(--shortcuts\) and the hub's IPs and Configurations \(--hub\)/);
  const explain = await runCli(['explain', '--help']);
  assert.match(explain.stdout, /--shortcuts-kubeconfig FILE +read ForeignClusterConnections, and the hub's Liqo IPs and Configurations, on this cluster/);
});
