import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject, sliceObject } from '../support/builders.ts';
import { parseCommand } from '../../src/cli.ts';
import { runCli } from '../support/run-cli.ts';
import { scratchDir } from '../support/scratch.ts';

const dir = scratchDir('shortcut-cli-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));
const sliceYaml = stringify(sliceObject());

test('rewrite reads standard input when no file is given', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: sliceYaml });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /- 10\.61\.0\.151/);
});

test('--output json prints one JSON document per line', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'json'], { stdin: `${sliceYaml}---\n${sliceYaml}` });
  const lines = run.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 2);
  for (const line of lines) assert.equal(JSON.parse(line).endpoints[0].addresses[0], '10.61.0.151');
});

test('JSON input is read like YAML', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'patch'], { stdin: JSON.stringify(sliceObject()) });
  assert.equal(JSON.parse(run.stdout)[0].value, '10.61.0.151');
});

test('a folder of shortcut files is read, including List documents', async () => {
  const folder = scratchDir('shortcut-folder-');
  writeFileSync(join(folder, 'list.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [fccObject()] }));
  writeFileSync(join(folder, 'notes.txt'), 'not yaml: [');
  const run = await runCli(['rewrite', '--shortcuts', folder, '--output', 'patch'], { stdin: sliceYaml });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout)[0].value, '10.61.0.151');
});

test('flags fall back to SHORTCUT_WEBHOOK_* variables, and flags win', async () => {
  const env = { SHORTCUT_WEBHOOK_SHORTCUTS: shortcuts, SHORTCUT_WEBHOOK_OUTPUT: 'patch', SHORTCUT_WEBHOOK_CLUSTER_ID: 'cluster2' };
  const unlabelled = stringify(sliceObject({ destination: null }));
  const fromEnv = await runCli(['rewrite'], { stdin: unlabelled, env });
  assert.equal(fromEnv.code, 0, fromEnv.stderr);
  assert.equal(JSON.parse(fromEnv.stdout)[0].value, '10.61.0.151');
  const flagWins = await runCli(['rewrite', '--cluster-id', 'cluster9'], { stdin: unlabelled, env });
  assert.deepEqual(JSON.parse(flagWins.stdout), []);
});

const usage: readonly [string, readonly string[], RegExp][] = [
  ['no command', [], /a command is required/],
  ['an unknown command', ['frobnicate'], /unknown command/],
  ['an unknown flag', ['rewrite', '--shortcuts', 'x', '--bogus'], /bogus/],
  ['rewrite without --shortcuts', ['rewrite'], /--shortcuts/],
  ['a bad --output', ['rewrite', '--shortcuts', 'x', '--output', 'xml'], /yaml, json, patch/],
  ['standard input twice', ['rewrite', '--shortcuts', 'x', '-', '-f', '-'], /standard input \(-\) can be read only once/],
  ['serve with a certificate but no key', ['serve', '--tls-cert', 'c'], /--tls-cert and --tls-key go together/],
  ['serve with a bad port', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--port', '70000'], /port/],
  ['serve with a bad resync interval', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--resync-interval', 'soon'], /resync-interval/],
  ['serve with a bad stale bound', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--stale-view-after', 'a while'], /stale-view-after/],
  ['serve with a heartbeat bound under a second', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--connection-stale-after', '500ms'], /connection-stale-after 500ms: expected a duration of at least 1s/],
  ['status with a bad heartbeat bound', ['status', '--connection-stale-after', 'soon'], /connection-stale-after soon/],
  ['serve with a bad log level', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--log-level', 'loud'], /log-level/],
  ['serve with no patches in flight', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--max-concurrent-patches', '0'], /max-concurrent-patches 0: expected a whole number from 1 to 64/],
  ['serve with a fractional patch rate', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--max-patches-per-second', '2.5'], /max-patches-per-second/],
  ['serve with an argument', ['serve', 'extra'], /no arguments/],
  ['serve with two shortcut sources', ['serve', '--tls-cert', 'c', '--tls-key', 'k', '--shortcuts', 'a', '--shortcuts-kubeconfig', 'b'], /one/],
];
for (const [name, argv, message] of usage) {
  test(`${name} is a usage error (exit 2)`, async () => {
    const run = await runCli(argv);
    assert.equal(run.code, 2);
    assert.match(run.stderr, message);
    assert.equal(run.stdout, '');
  });
}

test('a bad boolean in the environment is a usage error', async () => {
  const run = await runCli(['serve', '--tls-cert', 'c', '--tls-key', 'k'], { env: { SHORTCUT_WEBHOOK_NO_CONTROLLER: 'maybe' } });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /SHORTCUT_WEBHOOK_NO_CONTROLLER/);
});

for (const argv of [['--help'], ['serve', '--help'], ['rewrite', '--help'], ['help']]) {
  test(`${argv.join(' ')} prints help and exits 0`, async () => {
    const run = await runCli(argv);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /Usage: shortcut-webhook/);
  });
}

test('serve --help lists every flag with its environment variable', async () => {
  const run = await runCli(['serve', '--help']);
  for (const flag of ['host', 'port', 'ops-port', 'tls-cert', 'tls-key', 'cluster-id', 'shortcuts', 'kubeconfig',
    'shortcuts-kubeconfig', 'shortcuts-namespace', 'no-controller', 'resync-interval', 'max-concurrent-patches', 'max-patches-per-second',
    'stale-view-after', 'connection-stale-after', 'log-level']) {
    assert.match(run.stdout, new RegExp(`--${flag}\\b`));
    assert.match(run.stdout, new RegExp(`SHORTCUT_WEBHOOK_${flag.toUpperCase().replaceAll('-', '_')}\\b`));
  }
});

const invalid: readonly [string, string, RegExp][] = [
  ['broken YAML names the document', `${sliceYaml}---\nkind: [`, /stdin#2/],
  ['a scalar document names the document', `${sliceYaml}---\n42\n`, /stdin#2: not an object/],
  ['a malformed AdmissionReview names the document', 'apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\n', /stdin#1: invalid AdmissionReview/],
];
for (const [name, stdin, message] of invalid) {
  test(`${name} (exit 1, nothing printed)`, async () => {
    const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin });
    assert.equal(run.code, 1);
    assert.match(run.stderr, message);
    assert.equal(run.stdout, '');
  });
}

test('an unreadable input file is named (exit 1)', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, join(dir, 'missing.yaml')]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /missing\.yaml/);
});

test('unreadable or broken shortcuts are named (exit 1)', async () => {
  const missing = await runCli(['rewrite', '--shortcuts', join(dir, 'nope.yaml')], { stdin: sliceYaml });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /nope\.yaml/);
  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, `${stringify(fccObject())}---\nspec: [\n`);
  const run = await runCli(['rewrite', '--shortcuts', broken], { stdin: sliceYaml });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /broken\.yaml#2/);
});

test('other kinds are invalid input, said on stderr (exit 1), not echoed in silence (more in test/offline/rewrite-edges.test.ts)', async () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } };
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'json'], { stdin: JSON.stringify(pod) });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /stdin#1: v1 Pod p is not an input rewrite takes/);
  assert.equal(run.stdout, '');
});

test('--explain prints every address with its FCC and reason, and every FCC state', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--explain'], {
    stdin: stringify(sliceObject({ addresses: [['10.63.0.151', '10.200.0.1', '10.63.0.151 ']] })),
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /10\.63\.0\.151\s+10\.61\.0\.151\s+liqo\/cluster2-cluster3\s+rewritten/);
  assert.match(run.stdout, /10\.200\.0\.1\s+10\.200\.0\.1\s+-\s+no-pair/);
  assert.match(run.stdout, /"10\.63\.0\.151 "\s+"10\.63\.0\.151 "\s+-\s+not-canonical/);
  assert.match(run.stdout, /FCC states for cluster cluster2:\nFCC\s+STATE\s+DETAIL\nliqo\/cluster2-cluster3\s+usable/);
});

test('JSON documents one after another (JSON Lines, or jq output) are read, including --output json itself', async () => {
  const first = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'json'], { stdin: `${sliceYaml}---\n${stringify(sliceObject({ name: 'two' }))}` });
  assert.equal(first.stdout.trimEnd().split('\n').length, 2);
  const again = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'patch'], { stdin: first.stdout });
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(again.stdout.trimEnd().split('\n').map((line) => JSON.parse(line)), [[], []], 'rewriting the output changes nothing');
  const pretty = `${JSON.stringify(sliceObject(), null, 2)}\n${JSON.stringify(sliceObject({ name: 'two' }), null, 2)}\n`;
  const concatenated = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'json'], { stdin: pretty });
  assert.equal(concatenated.stdout.trimEnd().split('\n').length, 2);
});

test('items of an EndpointSliceList need no apiVersion or kind, as the API returns them, and keep none', async () => {
  const { apiVersion: _a, kind: _k, ...item } = sliceObject();
  const list = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', metadata: { resourceVersion: '7' }, items: [item] };
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'json'], { stdin: JSON.stringify(list) });
  const output = JSON.parse(run.stdout);
  assert.equal(output.items[0].endpoints[0].addresses[0], '10.61.0.151');
  assert.equal(output.items[0].apiVersion, undefined);
  assert.equal(output.items[0].kind, undefined);
});

test('a malformed EndpointSlice is invalid input offline (exit 1), naming the document', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: `${sliceYaml}---\n${stringify(sliceObject({ extra: { endpoints: 5 } }))}` });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /stdin#2: malformed EndpointSlice demo\/web-abcde: endpoints is not an array/);
});

test('YAML output quotes strings that YAML 1.1 readers such as kubectl would take for booleans, numbers or dates', async () => {
  const slice = sliceObject({ extra: { metadata: { name: 'w', namespace: 'demo', labels: {
    'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io', 'offloading.liqo.io/destination': 'cluster2',
    flag: 'yes', when: '2025-07-06', time: '1:20', octal: '010' } } } });
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: JSON.stringify(slice) });
  for (const line of ['flag: "yes"', 'when: "2025-07-06"', 'time: "1:20"', 'octal: "010"']) assert.ok(run.stdout.includes(line), line);
});

test('a bad value from the environment is reported under the variable\'s name', async () => {
  const run = await runCli(['serve'], { env: { SHORTCUT_WEBHOOK_PORT: '10.0.0.1:443' } });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /SHORTCUT_WEBHOOK_PORT 10\.0\.0\.1:443: expected a port number/);
});

test('--help works even when a variable holds a bad value', async () => {
  const run = await runCli(['serve', '--help'], { env: { SHORTCUT_WEBHOOK_NO_CONTROLLER: 'maybe' } });
  assert.equal(run.code, 0);
});

test('a --shortcuts flag beats SHORTCUT_WEBHOOK_SHORTCUTS_KUBECONFIG, and the reverse', async () => {
  const parsedFlag = parseCommand(['serve', '--shortcuts', 'a.yaml'], { SHORTCUT_WEBHOOK_SHORTCUTS_KUBECONFIG: 'hub' });
  assert.ok(parsedFlag.kind === 'serve');
  assert.deepEqual([parsedFlag.config.source, parsedFlag.config.shortcutsKubeconfigs], ['files', []]);
  const parsedEnv = parseCommand(['serve', '--shortcuts-kubeconfig', 'hub'], { SHORTCUT_WEBHOOK_SHORTCUTS: 'a.yaml' });
  assert.ok(parsedEnv.kind === 'serve');
  assert.deepEqual([parsedEnv.config.source, parsedEnv.config.shortcutsKubeconfigs], ['cluster', [{ hub: undefined, value: 'hub' }]]);
});

test('--explain names the unusable FCC behind an address it left alone, with the reason', async () => {
  const folder = scratchDir('shortcut-explain-');
  writeFileSync(join(folder, 'fcc.yaml'), stringify(fccObject({ connected: false })));
  const run = await runCli(['rewrite', '--shortcuts', folder, '--explain'], { stdin: stringify(sliceObject({ addresses: [['10.63.0.151', '10.200.0.1']] })) });
  assert.match(run.stdout, /10\.63\.0\.151\s+10\.63\.0\.151\s+liqo\/cluster2-cluster3\s+no-pair: not-connected/);
  assert.match(run.stdout, /10\.200\.0\.1\s+10\.200\.0\.1\s+-\s+no-pair\n/);
});

test('--explain names the FCC whose shortcut space holds an address already there (through-shortcut)', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--explain'], { stdin: stringify(sliceObject({ addresses: [['10.61.0.7', '10.200.0.1']] })) });
  assert.match(run.stdout, /10\.61\.0\.7\s+10\.61\.0\.7\s+liqo\/cluster2-cluster3\s+through-shortcut\n/);
  assert.match(run.stdout, /10\.200\.0\.1\s+10\.200\.0\.1\s+-\s+no-pair\n/);
});

test('--explain says when the shortcut files hold no FCC at all, and shows no empty table', async () => {
  const folder = scratchDir('shortcut-explain-');
  writeFileSync(join(folder, 'none.yaml'), stringify({ apiVersion: 'v1', kind: 'List', items: [] }));
  const run = await runCli(['rewrite', '--shortcuts', folder, '--explain'], { stdin: stringify(sliceObject()) });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\(the shortcut source holds no ForeignClusterConnection at all: nothing can be rewritten\)/);
  assert.doesNotMatch(run.stdout, /^FCC\s+STATE/m);
});

test('--no-controller and its variable turn the controller off; it is on by default', () => {
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const command = parseCommand(['serve', ...argv], env);
    assert.ok(command.kind === 'serve');
    return command.config.controller;
  };
  assert.equal(parse([]), true);
  assert.equal(parse(['--no-controller']), false);
  assert.equal(parse([], { SHORTCUT_WEBHOOK_NO_CONTROLLER: 'true' }), false);
  assert.equal(parse([], { SHORTCUT_WEBHOOK_NO_CONTROLLER: 'false' }), true);
});

test('serve listens on 9443 with ops on 8080 unless told otherwise (SPEC defaults)', () => {
  const parsed = parseCommand(['serve', '--tls-cert', 'c', '--tls-key', 'k'], {});
  assert.ok(parsed.kind === 'serve');
  assert.deepEqual([parsed.config.port, parsed.config.opsPort], [9443, 8080]);
});

test('--shortcuts is repeatable: every path is read', async () => {
  const empty = join(dir, 'empty.yaml');
  writeFileSync(empty, '');
  const run = await runCli(['rewrite', '--shortcuts', empty, '--shortcuts', shortcuts, '--output', 'patch'], { stdin: sliceYaml });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout)[0].value, '10.61.0.151');
});

test('empty YAML documents (a trailing ---, two in a row, a comment alone) are skipped; an explicit null is not', async () => {
  for (const stdin of [`---\n${sliceYaml}---\n`, `${sliceYaml}---\n---\n${sliceYaml}`, `${sliceYaml}---\n# nothing here\n`]) {
    const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'json'], { stdin });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trimEnd().split('\n').length, stdin.split('kind: EndpointSlice').length - 1, JSON.stringify(stdin));
  }
  const explicit = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: `${sliceYaml}--- null\n` });
  assert.equal(explicit.code, 1);
  assert.match(explicit.stderr, /stdin#2: not an object/);
});

test('--output patch of an AdmissionReview prints the JSON Patch the answer carries', async () => {
  const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: { uid: 'u', kind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' }, operation: 'CREATE', object: sliceObject() } };
  const patch = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'patch'], { stdin: JSON.stringify(review) });
  const answer = await runCli(['rewrite', '--shortcuts', shortcuts, '--output', 'json'], { stdin: JSON.stringify(review) });
  assert.equal(patch.code, 0, patch.stderr);
  const carried: unknown = JSON.parse(Buffer.from(JSON.parse(answer.stdout).response.patch, 'base64').toString());
  assert.deepEqual(JSON.parse(patch.stdout), carried);
  assert.equal(JSON.parse(patch.stdout)[0].value, '10.61.0.151');
});

test('an input FILE that is a folder is named (exit 1)', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, dir]);
  assert.equal(run.code, 1);
  assert.ok(run.stderr.includes(dir), run.stderr);
});

test('a malformed item of a List fails the input (exit 1), naming the document and the item, with nothing printed', async () => {
  const list = { apiVersion: 'v1', kind: 'List', items: [sliceObject(), sliceObject({ extra: { endpoints: 5 } })] };
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: JSON.stringify(list) });
  assert.equal(run.code, 1);
  assert.match(run.stderr, /stdin#1.*items\/1/);
  assert.equal(run.stdout, '');
});

test('every serve flag reads its SHORTCUT_WEBHOOK_ variable, and the flag wins', () => {
  const env = {
    SHORTCUT_WEBHOOK_HOST: '127.0.0.2', SHORTCUT_WEBHOOK_PORT: '9444', SHORTCUT_WEBHOOK_OPS_PORT: '8181',
    SHORTCUT_WEBHOOK_KUBECONFIG: '/k', SHORTCUT_WEBHOOK_SHORTCUTS_KUBECONFIG: '/hub', SHORTCUT_WEBHOOK_SHORTCUTS_NAMESPACE: 'liqo',
    SHORTCUT_WEBHOOK_CLUSTER_ID: 'cluster9', SHORTCUT_WEBHOOK_RESYNC_INTERVAL: '1m', SHORTCUT_WEBHOOK_LOG_LEVEL: 'debug',
    SHORTCUT_WEBHOOK_TLS_CERT: '/c', SHORTCUT_WEBHOOK_TLS_KEY: '/key',
  };
  const fromEnv = parseCommand(['serve'], env);
  assert.ok(fromEnv.kind === 'serve');
  const read = (config: typeof fromEnv.config) => [config.host, config.port, config.opsPort, config.kubeconfig, config.shortcutsKubeconfigs[0]?.value,
    config.shortcutsNamespace, config.clusterId, config.resyncIntervalMs, config.logLevel, config.tls?.cert, config.tls?.key];
  assert.deepEqual(read(fromEnv.config), ['127.0.0.2', 9444, 8181, '/k', '/hub', 'liqo', 'cluster9', 60_000, 'debug', '/c', '/key']);
  const flags = parseCommand(['serve', '--host', '::1', '--port', '1', '--ops-port', '2', '--kubeconfig', '/k2', '--shortcuts-kubeconfig', '/hub2',
    '--shortcuts-namespace', 'other', '--cluster-id', 'c1', '--resync-interval', '2m', '--log-level', 'warn', '--tls-cert', '/c2', '--tls-key', '/key2'], env);
  assert.ok(flags.kind === 'serve');
  assert.deepEqual(read(flags.config), ['::1', 1, 2, '/k2', '/hub2', 'other', 'c1', 120_000, 'warn', '/c2', '/key2']);
});

test('the controller\'s pace: 8 patches in flight and 1,000 requests/s by default, their variables, and the flag wins', () => {
  const pace = (argv: readonly string[], env: NodeJS.ProcessEnv = {}) => {
    const parsed = parseCommand(['serve', ...argv], env);
    assert.ok(parsed.kind === 'serve');
    return [parsed.config.maxConcurrentPatches, parsed.config.maxPatchesPerSecond];
  };
  assert.deepEqual(pace([]), [8, 1000]);
  const env = { SHORTCUT_WEBHOOK_MAX_CONCURRENT_PATCHES: '4', SHORTCUT_WEBHOOK_MAX_PATCHES_PER_SECOND: '100' };
  assert.deepEqual(pace([], env), [4, 100]);
  assert.deepEqual(pace(['--max-concurrent-patches', '16', '--max-patches-per-second', '50'], env), [16, 50]);
});

test('--stale-view-after: 60s by default, its variable, 0 for never, and the flag wins', () => {
  const stale = (argv: readonly string[], env: NodeJS.ProcessEnv = {}) => {
    const parsed = parseCommand(['serve', ...argv], env);
    assert.ok(parsed.kind === 'serve');
    return parsed.config.staleViewAfterMs;
  };
  assert.equal(stale([]), 60_000);
  assert.equal(stale([], { SHORTCUT_WEBHOOK_STALE_VIEW_AFTER: '2m' }), 120_000);
  assert.equal(stale(['--stale-view-after', '0'], { SHORTCUT_WEBHOOK_STALE_VIEW_AFTER: '2m' }), 0);
});

test('--connection-stale-after: 30s by default, its variable, 0 for off, the flag wins, and status and explain read it too', () => {
  const bound = (command: 'serve' | 'status' | 'explain', argv: readonly string[], env: NodeJS.ProcessEnv = {}) => {
    const parsed = parseCommand([command, ...argv, ...(command === 'explain' ? ['web'] : [])], env);
    assert.ok(parsed.kind === command);
    return parsed.config.connectionStaleAfterMs;
  };
  assert.equal(bound('serve', []), 30_000);
  assert.equal(bound('serve', [], { SHORTCUT_WEBHOOK_CONNECTION_STALE_AFTER: '1m' }), 60_000);
  assert.equal(bound('serve', ['--connection-stale-after', '0'], { SHORTCUT_WEBHOOK_CONNECTION_STALE_AFTER: '1m' }), 0);
  assert.equal(bound('status', [], { SHORTCUT_WEBHOOK_CONNECTION_STALE_AFTER: '45s' }), 45_000);
  assert.equal(bound('explain', ['--connection-stale-after', '5s']), 5000);
});

test('SHORTCUT_WEBHOOK_EXPLAIN turns on --explain', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts], { stdin: sliceYaml, env: { SHORTCUT_WEBHOOK_EXPLAIN: 'true' } });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /FCC states for cluster cluster2/);
});
