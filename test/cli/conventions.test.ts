// The command line as kubectl users expect it: short flags, several inputs, readable argument errors, `version`,
// and the environment checked for typos and Kubernetes service links.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { configurationObject, fccObject, sliceObject } from '../support/builders.ts';
import { runCli } from '../support/run-cli.ts';
import { scratchDir } from '../support/scratch.ts';

const dir = scratchDir('shortcut-conventions-');
const shortcuts = join(dir, 'fcc.yaml');
writeFileSync(shortcuts, `${stringify(fccObject())}---\n${stringify(fccObject({ name: 'down', connected: false }))}`);
const inputs = join(dir, 'inputs');
mkdirSync(inputs);
writeFileSync(join(inputs, 'b.yaml'), stringify(sliceObject({ name: 'b' })));
writeFileSync(join(inputs, 'a.json'), JSON.stringify(sliceObject({ name: 'a' })));
writeFileSync(join(inputs, 'notes.txt'), 'not an input');
const single = join(dir, 'c.yaml');
writeFileSync(single, stringify(sliceObject({ name: 'c' })));
const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function names(stdout: string): string[] {
  return stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { metadata: { name: string } }).metadata.name);
}

test('-f takes files, folders and -, repeatable, read in command-line order with the arguments', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '-o', 'json', '-f', single, inputs, '-f', '-'],
    { stdin: stringify(sliceObject({ name: 'stdin' })) });
  assert.equal(run.code, 0, run.stderr);
  // The folder's .yaml/.yml/.json files in name order; other files are not inputs.
  assert.deepEqual(names(run.stdout), ['c', 'a', 'b', 'stdin']);
});

test('a folder is never an EISDIR, and an empty folder says what it lacks', async () => {
  const empty = scratchDir('shortcut-empty-');
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, empty]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /is a folder without \.yaml, \.yml or \.json files/);
  assert.doesNotMatch(run.stderr, /EISDIR/);
});

test('-o patch prints the bare JSON Patch array (the contract\'s format) and names each line\'s object on stderr', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '-o', 'patch', single]);
  const patch = JSON.parse(run.stdout) as { value?: unknown }[];
  assert.ok(Array.isArray(patch));
  assert.equal(patch[0]?.value, '10.61.0.151');
  assert.match(run.stderr, new RegExp(`patch line 1 is ${single.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}#1 demo/c`));
});

test('an FCC that cannot be used is said on stderr without --explain, one line each', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, single]);
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0] ?? '', /^shortcut-webhook rewrite: FCC liqo\/down is not used for cluster cluster2: not-connected/);
});

test('--explain -o json: one object per slice with its addresses, and the FCC states', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, '--explain', '-o', 'json', single]);
  assert.equal(run.code, 0, run.stderr);
  const explained = JSON.parse(run.stdout) as {
    slices: { slice: string; cluster: string; addresses: { input: string; output: string; fcc: string; pair: string; reason: string }[] }[];
    fccs: { fcc: string; state: string }[];
  };
  assert.equal(explained.slices.length, 1);
  assert.equal(explained.slices[0]?.slice, 'demo/c');
  assert.deepEqual(explained.slices[0]?.addresses[0], { input: '10.63.0.151', output: '10.61.0.151', fcc: 'liqo/cluster2-cluster3', pair: '10.63.0.0/16 -> 10.61.0.0/16', hubIp: null, peer: null, configuration: null, reason: 'rewritten' });
  assert.deepEqual(explained.fccs.map((f) => [f.fcc, f.state]), [['liqo/cluster2-cluster3', 'usable'], ['liqo/down', 'not-connected']]);
  const table = await runCli(['rewrite', '--shortcuts', shortcuts, '--explain', '-o', 'yaml', single]);
  assert.equal(table.code, 2);
  assert.match(table.stderr, /--output yaml does not go with --explain/);
});

test('a Configuration that cannot be used is said on stderr, one line each', async () => {
  const unlabelled = configurationObject({ peer: 'cluster7' });
  (unlabelled.metadata as { labels: Record<string, string> }).labels = {};
  const { status: _status, ...noStatus } = configurationObject({ peer: 'cluster8' });
  const file = join(dir, 'leaf.yaml');
  writeFileSync(file, [fccObject(), unlabelled, noStatus].map((object) => stringify(object)).join('---\n'));
  const run = await runCli(['rewrite', '--shortcuts', file, single]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.stderr.trimEnd().split('\n'), [
    'shortcut-webhook rewrite: Configuration liqo-tenant-cluster7/cluster7 is not used: it has no liqo.io/remote-cluster-id label, so it names no peer',
    'shortcut-webhook rewrite: Configuration liqo-tenant-cluster8/cluster8 (peer cluster8) records no status.remote.cidr: the leaf\'s view of that peer is unknown',
    // The leaf sees the hub's external CIDR, and no --hub was given: said once, as /readyz says it.
    'shortcut-webhook rewrite: the hub\'s IPAM objects are not known (no hub source: give --hub files, or --shortcuts-kubeconfig to read the hub): addresses it allocated stay hub-external',
  ]);
});

const argumentErrors: readonly [readonly string[], RegExp][] = [
  [['rewrite', '--shortcuts', shortcuts, '--bogus'], /^shortcut-webhook rewrite: unknown flag --bogus\n/],
  [['rewrite', '--shortcuts', shortcuts, '--outptu', 'json'], /unknown flag --outptu \(did you mean --output\?\)/],
  [['rewrite', '--shortcuts', shortcuts, '-o'], /--output needs a value \(FORMAT\)/],
  [['rewrite', '--shortcuts', shortcuts, '--explain=yes'], /--explain takes no value/],
  [['serve', '--port'], /--port needs a value \(N\)/],
  [['rewrite'], /^shortcut-webhook rewrite: needs at least one --shortcuts PATH/],
  [['serve', 'x'], /^shortcut-webhook serve: takes no arguments, got x/],
  [['serve', '--port', '8080'], /--port and --ops-port are both 8080/],
  [['serve', '--port', '9000', '--ops-port', '9000'], /--port and --ops-port are both 9000/],
  [['explain'], /give one slice NAME or a label selector with -l/],
  [['explain', 'a', '-l', 'x=y'], /not both or neither/],
  [['version', '-o', 'yaml'], /^shortcut-webhook version: --output yaml: expected one of text, json/],
  [['verison'], /unknown command "verison" \(did you mean version\?\)/],
];
for (const [argv, message] of argumentErrors) {
  test(`${argv.join(' ')}: a usage error in the product's words (exit 2)`, async () => {
    const run = await runCli(argv);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, message);
    // Node's parseArgs texts never reach the user, and the command is named once.
    assert.doesNotMatch(run.stderr, /after '--'|argument missing|<value>|ERR_PARSE_ARGS/);
    assert.doesNotMatch(run.stderr, /(serve|rewrite|version|explain): \1/);
  });
}

test('-h works on every command', async () => {
  for (const command of ['serve', 'rewrite', 'explain', 'version']) {
    const run = await runCli([command, '-h']);
    assert.equal(run.code, 0, command);
    assert.match(run.stdout, new RegExp(`^Usage: shortcut-webhook ${command}`));
    assert.match(run.stdout, /-h, --help/);
  }
  assert.match((await runCli(['rewrite', '-h'])).stdout, /-f, --filename PATH[\s\S]*-o, --output FORMAT/);
});

test('version and --version print the version, the commit when known and the Node.js version; -o json', async () => {
  for (const argv of [['version'], ['--version']]) {
    const run = await runCli(argv);
    assert.equal(run.code, 0);
    assert.match(run.stdout, new RegExp(`^shortcut-webhook ${version.replaceAll('.', '\\.')}( \\(commit [0-9a-f]{40}\\))?, Node\\.js ${process.version}\\n$`));
  }
  const json = JSON.parse((await runCli(['version', '-o', 'json'])).stdout) as { version: string; commit: string | null; node: string };
  assert.equal(json.version, version);
  assert.equal(json.node, process.version);
  assert.ok(json.commit === null || /^[0-9a-f]{40}$/.test(json.commit));
});

test('with no commit known (the sources outside any git checkout), version says none and -o json says "commit": null', () => {
  // The sources, not the bundle (which carries the commit it was built from); GIT_DIR pointing nowhere: git knows no checkout.
  const run = (output: string) => spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e',
    `const { main } = await import('./src/main.ts'); process.exitCode = await main(['version', '-o', '${output}']);`],
  { cwd: new URL('../../', import.meta.url), encoding: 'utf8', env: { ...process.env, GIT_DIR: join(dir, 'no-such-git-dir') } });
  const text = run('text');
  assert.equal(text.status, 0, text.stderr);
  assert.equal(text.stdout, `shortcut-webhook ${version}, Node.js ${process.version}\n`);
  const json = run('json');
  assert.equal(json.status, 0, json.stderr);
  assert.equal(json.stdout, `${JSON.stringify({ version, commit: null, node: process.version })}\n`);
});

test('an unknown SHORTCUT_WEBHOOK_* variable is a warning naming the nearest known one; service links are not', async () => {
  const run = await runCli(['rewrite', '--shortcuts', shortcuts, single], { env: {
    SHORTCUT_WEBHOOK_CLUSTERID: 'cluster2', SHORTCUT_WEBHOOK_SERVICE_HOST: '10.96.0.12', SHORTCUT_WEBHOOK_PORT_443_TCP_ADDR: '10.96.0.12',
  } });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /^shortcut-webhook: warning: ignored SHORTCUT_WEBHOOK_CLUSTERID: no such setting \(did you mean SHORTCUT_WEBHOOK_CLUSTER_ID\?\)$/m);
  assert.doesNotMatch(run.stderr, /SERVICE_HOST|443_TCP/);
});

test('SHORTCUT_WEBHOOK_PORT=tcp://... is recognised as a Kubernetes service link and ignored, with a message saying so', async () => {
  const { parseCommand } = await import('../../src/cli.ts');
  const parsed = parseCommand(['serve', '--tls-cert', 'c', '--tls-key', 'k'], { SHORTCUT_WEBHOOK_PORT: 'tcp://10.96.0.12:443' });
  assert.ok(parsed.kind === 'serve');
  assert.equal(parsed.config.port, 9443);
  assert.equal(parsed.warnings.length, 1);
  assert.match(parsed.warnings[0] ?? '', /SHORTCUT_WEBHOOK_PORT=tcp:\/\/10\.96\.0\.12:443: that is a Kubernetes service link .*enableServiceLinks: false/);
});

test('every service link Kubernetes makes for a Service named shortcut-webhook with a named port is no typo: only the PORT link is said, as a link', async () => {
  const { parseCommand } = await import('../../src/cli.ts');
  // What the kubelet injects for Service shortcut-webhook, port 443 named https (pkg/kubelet/envvars).
  const links = {
    SHORTCUT_WEBHOOK_SERVICE_HOST: '10.96.0.12', SHORTCUT_WEBHOOK_SERVICE_PORT: '443', SHORTCUT_WEBHOOK_SERVICE_PORT_HTTPS: '443',
    SHORTCUT_WEBHOOK_PORT: 'tcp://10.96.0.12:443', SHORTCUT_WEBHOOK_PORT_443_TCP: 'tcp://10.96.0.12:443',
    SHORTCUT_WEBHOOK_PORT_443_TCP_PROTO: 'tcp', SHORTCUT_WEBHOOK_PORT_443_TCP_PORT: '443', SHORTCUT_WEBHOOK_PORT_443_TCP_ADDR: '10.96.0.12',
  };
  const parsed = parseCommand(['serve', '--tls-cert', 'c', '--tls-key', 'k'], links);
  assert.ok(parsed.kind === 'serve');
  assert.equal(parsed.warnings.length, 1, parsed.warnings.join('\n'));
  assert.match(parsed.warnings[0] ?? '', /^ignored SHORTCUT_WEBHOOK_PORT=tcp:\/\/10\.96\.0\.12:443: that is a Kubernetes service link/);
});

test('boolean variables accept every spelling the message names', async () => {
  const { parseCommand } = await import('../../src/cli.ts');
  for (const [value, expected] of [['true', false], ['yes', false], ['1', false], ['false', true], ['no', true], ['0', true], ['TRUE', false]] as const) {
    const parsed = parseCommand(['serve', '--tls-cert', 'c', '--tls-key', 'k'], { SHORTCUT_WEBHOOK_NO_CONTROLLER: value });
    assert.ok(parsed.kind === 'serve', value);
    assert.equal(parsed.config.controller, expected, value);
  }
  const bad = await runCli(['serve'], { env: { SHORTCUT_WEBHOOK_NO_CONTROLLER: 'maybe' } });
  const accepted = /expected (.*)$/m.exec(bad.stderr)?.[1]?.split(/, | or /) ?? [];
  assert.deepEqual(accepted.sort(), ['0', '1', 'false', 'no', 'true', 'yes']);
});

test('a bare rewrite on a terminal says it is reading standard input', async () => {
  // `script` gives the child a terminal for its stdin; skipped where util-linux's script is missing.
  const which = spawnSync('script', ['--version'], { encoding: 'utf8' });
  if (which.status !== 0) return;
  const bin = new URL('../../bin/shortcut-webhook.js', import.meta.url).pathname;
  const result = spawnSync('script', ['-qec', `${process.execPath} ${bin} rewrite --shortcuts ${shortcuts} < /dev/tty`, '/dev/null'],
    { input: '\x04', encoding: 'utf8', timeout: 20_000 });
  assert.match(result.stdout, /reading EndpointSlices from standard input/);
});

test('a variable meant for rewrite does not break version or explain: their per-run flags are command-line only', async () => {
  const run = await runCli(['version'], { env: { SHORTCUT_WEBHOOK_OUTPUT: 'patch' } });
  assert.equal(run.code, 0, run.stderr);
  const { parseCommand } = await import('../../src/cli.ts');
  const parsed = parseCommand(['explain', 'web'], { SHORTCUT_WEBHOOK_OUTPUT: 'patch', SHORTCUT_WEBHOOK_NAMESPACE: 'x', SHORTCUT_WEBHOOK_CLUSTER_ID: 'c' });
  assert.ok(parsed.kind === 'explain');
  assert.deepEqual([parsed.config.output, parsed.config.namespace, parsed.config.clusterId], ['text', undefined, 'c']);
  assert.match(parsed.warnings.join('\n'), /ignored SHORTCUT_WEBHOOK_NAMESPACE: no such setting/);
  const help = (await runCli(['explain', '--help'])).stdout;
  assert.doesNotMatch(help, /SHORTCUT_WEBHOOK_(OUTPUT|NAMESPACE|SELECTOR)/);
  assert.match(help, /SHORTCUT_WEBHOOK_KUBECONFIG/);
});

test('--explain -o json names the hub IP, the peer and the Configuration of a resolved address', async () => {
  const fixture = new URL('../fixtures/stock-liqo-resolves-through-the-hubs-ipam/', import.meta.url).pathname;
  const run = await runCli(['rewrite', '--shortcuts', `${fixture}shortcuts.yaml`, '--hub', `${fixture}hub.yaml`, '--explain', '-o', 'json', `${fixture}input.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  const explained = JSON.parse(run.stdout) as { slices: { addresses: Record<string, unknown>[] }[] };
  assert.deepEqual(explained.slices[0]?.addresses[0], {
    input: '10.71.0.12', output: '10.61.0.151', fcc: null, pair: null, hubIp: 'demo/web-0', peer: 'cluster3',
    configuration: 'liqo-tenant-cluster3/cluster3', reason: 'rewritten: via cluster3 (liqo-tenant-cluster3/cluster3)',
  });
  assert.equal(explained.slices[0]?.addresses[2]?.['reason'], 'no-hub-ip: no IP of cluster1 is allocated at 10.70.0.14');
});
