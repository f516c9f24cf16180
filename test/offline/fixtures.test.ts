// The offline harness: every test/fixtures/<case>/ runs through the command line's own code path.
//   shortcuts.yaml  the ForeignClusterConnections, and optionally the leaf's Liqo Connections and Configurations
//                   (as `kubectl get fcc,connections.networking.liqo.io,configurations.networking.liqo.io -A -o yaml`
//                   prints them)
//   input.yaml      the slices, lists or reviews (as `kubectl get endpointslice -o yaml` prints them)
//   expected.yaml   what `shortcut-webhook rewrite` must print
//   explain.txt     optional: what `rewrite --explain` must print, run from the case's folder (so paths read
//                   `input.yaml#1`): the reasons, shown through the offline command
//   hub.yaml        optional: the hub's IPs and Configurations, given with --hub (the stock-Liqo path)
//   hubs/<ID>.yaml  optional: one hub's IPs and Configurations each, given with --hub ID=PATH (a leaf with several hubs)
//   args            optional extra flags, one per line (e.g. --cluster-id and its value)
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import jsonpatch from 'fast-json-patch';
import { parseAllDocuments } from 'yaml';
import { runCli } from '../support/run-cli.ts';

const root = new URL('../fixtures/', import.meta.url).pathname;
// A user's own cases, from their clusters: git-ignored, so cluster objects are never committed (README).
const local = new URL('../fixtures.local/', import.meta.url).pathname;

/** Every case folder: the project's, then the user's local ones (when that folder exists). */
function cases(): { name: string; dir: string }[] {
  const of = (base: string, prefix: string) => (existsSync(base)
    ? readdirSync(base, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()
      .map((name) => ({ name: `${prefix}${name}`, dir: join(base, name) }))
    : []);
  return [...of(root, ''), ...of(local, 'local/')];
}

function documents(text: string): unknown[] {
  return parseAllDocuments(text).map((document) => document.toJS());
}

/** `--hub <path>` when the case has a hub.yaml, and `--hub ID=<path>` for each hubs/<ID>.yaml (under `base`). */
function hubArgs(dir: string, path: string, base = ''): string[] {
  const bound = existsSync(join(dir, 'hubs'))
    ? readdirSync(join(dir, 'hubs')).filter((name) => name.endsWith('.yaml')).sort()
      .flatMap((name) => ['--hub', `${name.slice(0, -'.yaml'.length)}=${join(base, 'hubs', name)}`])
    : [];
  return [...(existsSync(join(dir, 'hub.yaml')) ? ['--hub', path] : []), ...bound];
}

for (const { name, dir } of cases()) {
  const args = existsSync(join(dir, 'args')) ? readFileSync(join(dir, 'args'), 'utf8').split('\n').filter(Boolean) : [];
  const base = ['rewrite', '--shortcuts', join(dir, 'shortcuts.yaml'), ...hubArgs(dir, join(dir, 'hub.yaml'), dir), ...args];
  const input = readFileSync(join(dir, 'input.yaml'), 'utf8');

  test(`fixture ${name}: prints expected.yaml`, async () => {
    const run = await runCli([...base, join(dir, 'input.yaml')]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(documents(run.stdout), documents(readFileSync(join(dir, 'expected.yaml'), 'utf8')));
  });

  test(`fixture ${name}: the JSON output and the patch output agree with it`, async () => {
    const expected = documents(readFileSync(join(dir, 'expected.yaml'), 'utf8'));
    const json = await runCli([...base, '--output', 'json'], { stdin: input });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(json.stdout.trimEnd().split('\n').map((line) => JSON.parse(line)), expected);
    const patch = await runCli([...base, '--output', 'patch', '-'], { stdin: input });
    const patches = patch.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    documents(input).forEach((document, i) => {
      const isReview = (document as { kind?: string }).kind === 'AdmissionReview';
      if (isReview) return;
      assert.deepEqual(jsonpatch.applyPatch(structuredClone(document), patches[i], true, false).newDocument, expected[i]);
    });
  });

  test(`fixture ${name}: rewriting the expected output changes nothing`, async () => {
    if (input.includes('kind: AdmissionReview')) return;
    const again = await runCli(base, { stdin: readFileSync(join(dir, 'expected.yaml'), 'utf8') });
    assert.deepEqual(documents(again.stdout), documents(readFileSync(join(dir, 'expected.yaml'), 'utf8')));
  });
}

for (const { name, dir } of cases()) {
  if (!existsSync(join(dir, 'explain.txt'))) continue;
  const args = existsSync(join(dir, 'args')) ? readFileSync(join(dir, 'args'), 'utf8').split('\n').filter(Boolean) : [];
  test(`fixture ${name}: --explain prints explain.txt`, async () => {
    const previous = process.cwd();
    process.chdir(dir);
    try {
      const run = await runCli(['rewrite', '--shortcuts', 'shortcuts.yaml', ...hubArgs(dir, 'hub.yaml'), ...args, '--explain', 'input.yaml']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, readFileSync(join(dir, 'explain.txt'), 'utf8'));
    } finally {
      process.chdir(previous);
    }
  });
}
