// The README shows real output: these tests run what it shows and compare.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import jsonpatch from 'fast-json-patch';
import { loadShortcutFiles } from '../../src/view/shortcut-files.ts';
import { post1 } from '../support/https-client.ts';
import { runCli } from '../support/run-cli.ts';
import { startHarness } from '../support/webhook-harness.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const root = new URL('../..', import.meta.url).pathname;

function blockAfter(marker: string): string {
  const start = readme.indexOf(marker);
  assert.ok(start >= 0, `README has ${marker}`);
  const match = /```\w*\n([\s\S]*?)```/.exec(readme.slice(start));
  assert.ok(match);
  return match[1] ?? '';
}

test('the README\'s explain example is what the command prints', async () => {
  const previous = process.cwd();
  process.chdir(root);
  try {
    const run = await runCli(['rewrite', '--shortcuts', 'examples/shortcuts.yaml', '--explain', 'examples/endpointslice.yaml']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, blockAfter('<!-- explain-example'));
  } finally {
    process.chdir(previous);
  }
});

test('the README\'s stock-Liqo explain example is what the command prints', async () => {
  const previous = process.cwd();
  process.chdir(root);
  try {
    const run = await runCli(['rewrite', '--shortcuts', 'examples/stock-liqo/leaf.yaml', '--hub', 'examples/stock-liqo/hub.yaml',
      '--explain', 'examples/stock-liqo/endpointslice.yaml']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, blockAfter('<!-- stock-explain-example'));
  } finally {
    process.chdir(previous);
  }
});

test('the README\'s request gets the answer the README shows', async () => {
  const loaded = await loadShortcutFiles({ shortcuts: [`${root}examples/shortcuts.yaml`], hub: [] });
  assert.ok(loaded.ok);
  const harness = await startHarness({ fccs: loaded.value.fccs, clusterId: 'cluster2' });
  try {
    const answer = await post1(harness.url, harness.certs.ca, readFileSync(`${root}examples/admission-review.json`));
    assert.equal(answer.body, blockAfter('```json').trimEnd());
  } finally {
    await harness.close();
  }
});

test('the README\'s direct-connections explain example is what the command prints', async () => {
  const previous = process.cwd();
  process.chdir(root);
  try {
    const run = await runCli(['rewrite', '--shortcuts', 'examples/stock-liqo/leaf.yaml', '--hub', 'examples/stock-liqo/hub.yaml',
      '--hub', 'examples/direct-connections/hub.yaml', '--explain', 'examples/direct-connections/shadowendpointslice.yaml']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, blockAfter('<!-- direct-connections-example'));
  } finally {
    process.chdir(previous);
  }
});

test('the files npm start serves answer the example review with the repair the README shows', async () => {
  const start = readFileSync(`${root}bin/start.js`, 'utf8');
  for (const file of ['examples/stock-liqo/leaf.yaml', 'examples/stock-liqo/hub.yaml', 'examples/direct-connections/hub.yaml']) {
    assert.ok(start.includes(`'../${file}'`), `npm start reads ${file}`);
  }
  const loaded = await loadShortcutFiles({
    shortcuts: [`${root}examples/stock-liqo/leaf.yaml`], hub: [`${root}examples/stock-liqo/hub.yaml`, `${root}examples/direct-connections/hub.yaml`],
  });
  assert.ok(loaded.ok);
  const harness = await startHarness({ clusterId: 'cluster2' });
  try {
    const { fccs, tunnels, configurations, hubs } = loaded.value;
    harness.store.publish({ fccs, tunnels, configurations, hubs });
    const review = JSON.parse(readFileSync(`${root}examples/direct-connections/admission-review.json`, 'utf8')) as { request: { object: object } };
    const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(review), { path: '/mutate/shadowendpointslices' });
    assert.equal(answer.status, 200);
    const { response } = JSON.parse(answer.body) as { response: { patch: string } };
    const patched = jsonpatch.applyPatch(structuredClone(review.request.object), JSON.parse(Buffer.from(response.patch, 'base64').toString()), true, false).newDocument;
    const { spec } = patched as { spec: { template: { endpoints: { addresses: string[] }[] } } };
    assert.deepEqual(spec.template.endpoints.map((e) => e.addresses), [['10.60.0.40'], ['10.70.0.21'], ['10.200.0.31']]);
  } finally {
    await harness.close();
  }
});
