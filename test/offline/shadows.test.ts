// `rewrite` and `--explain` on ShadowEndpointSlices: the same --shortcuts/--hub inputs, per listed address input,
// output, cluster and outcome; an AdmissionReview of a shadow answered as the shadow route answers it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../support/run-cli.ts';

const root = new URL('../..', import.meta.url).pathname;
const inputs = ['--shortcuts', `${root}examples/stock-liqo/leaf.yaml`, '--hub', `${root}examples/stock-liqo/hub.yaml`, '--hub', `${root}examples/direct-connections/hub.yaml`];

test('--explain -o json lists each address of the data annotation: input, output, cluster, outcome and why', async () => {
  const run = await runCli(['rewrite', ...inputs, '--explain', '-o', 'json', `${root}examples/direct-connections/shadowendpointslice.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  const explained = JSON.parse(run.stdout) as { slices: Record<string, unknown>[] };
  const [shadow] = explained.slices;
  assert.equal(shadow?.['kind'], 'ShadowEndpointSlice');
  assert.equal(shadow?.['hub'], 'cluster1');
  assert.equal(shadow?.['cluster'], 'cluster2');
  const listed = (shadow?.['listed'] ?? []) as Record<string, unknown>[];
  assert.deepEqual(listed.map(({ input, output, cluster, outcome, reason }) => ({ input, output, cluster, outcome, reason })), [
    { input: '10.63.0.40', output: '10.60.0.40', cluster: 'cluster3', outcome: 'repaired', reason: null },
    { input: '10.64.0.7', output: '10.70.0.21', cluster: 'cluster4', outcome: 'hub-path', reason: 'no-shortcut' },
  ]);
});

test('an AdmissionReview of a shadow is answered offline as the route answers it, -o patch gives its operations', async () => {
  const review = await runCli(['rewrite', ...inputs, '-o', 'json', `${root}examples/direct-connections/admission-review.json`]);
  assert.equal(review.code, 0, review.stderr);
  const answer = JSON.parse(review.stdout) as { response: { uid: string; allowed: boolean; patch: string } };
  assert.equal(answer.response.uid, '9c4e2f1a-77d3-4b8e-9a5c-2f0d6e1b3c47');
  const operations = JSON.parse(Buffer.from(answer.response.patch, 'base64').toString()) as { path: string; value?: unknown }[];
  const patch = await runCli(['rewrite', ...inputs, '-o', 'patch', `${root}examples/direct-connections/shadowendpointslice.yaml`]);
  assert.deepEqual(JSON.parse(patch.stdout), operations);
  assert.deepEqual(operations.slice(0, 2), [
    { op: 'replace', path: '/spec/template/endpoints/0/addresses/0', value: '10.60.0.40' },
    { op: 'replace', path: '/spec/template/endpoints/1/addresses/0', value: '10.70.0.21' },
  ]);
});

test('without the hub\'s objects nothing is repaired and explain says why', async () => {
  const run = await runCli(['rewrite', '--shortcuts', `${root}examples/stock-liqo/leaf.yaml`, '--explain', `${root}examples/direct-connections/shadowendpointslice.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /10\.63\.0\.40 +10\.63\.0\.40 +cluster3 +unresolved: hub-unknown/);
  assert.match(run.stdout, /10\.64\.0\.7 +10\.64\.0\.7 +cluster4 +unresolved: hub-unknown +this leaf has no Liqo Configuration for cluster4; the hub's IPAM objects are not known/);
});

test('a shadow\'s destination label names its leaf, whatever --cluster-id says (the flag is for shadows without one)', async () => {
  const run = await runCli(['rewrite', ...inputs, '--cluster-id', 'cluster9', '--explain', '-o', 'json', `${root}examples/direct-connections/shadowendpointslice.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  const [shadow] = (JSON.parse(run.stdout) as { slices: Record<string, unknown>[] }).slices;
  assert.equal(shadow?.['cluster'], 'cluster2');
});
