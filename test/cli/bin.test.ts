// The executable as a shell sees it: exit codes, standard streams, no build step.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const bin = new URL('../../bin/shortcut-webhook.js', import.meta.url).pathname;
const root = new URL('../..', import.meta.url).pathname;

function run(args: readonly string[], input?: string) {
  return spawnSync(process.execPath, [bin, ...args], { cwd: root, input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
}

test('rewrite exits 0 and prints the rewritten slice', () => {
  const result = run(['rewrite', '--shortcuts', 'examples/shortcuts.yaml', '--output', 'json', 'examples/endpointslice.yaml']);
  assert.equal(result.status, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout).endpoints[0].addresses[0], '10.61.0.151');
});

test('invalid input exits 1 with the file and document named on stderr', () => {
  const result = run(['rewrite', '--shortcuts', 'examples/shortcuts.yaml'], 'kind: [\n');
  assert.equal(result.status, 1);
  assert.match(result.stderr, /stdin#1/);
  assert.equal(result.stdout, '');
});

test('a usage error exits 2', () => {
  const result = run(['rewrite', '--shortcuts', 'examples/shortcuts.yaml', '--output', 'xml']);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /--output xml: expected one of yaml, json, patch[\s\S]*shortcut-webhook rewrite --help/);
});

test('--help exits 0 on every command', () => {
  for (const args of [['--help'], ['serve', '--help'], ['rewrite', '--help']]) {
    const result = run(args);
    assert.equal(result.status, 0, args.join(' '));
    assert.match(result.stdout, /Usage: shortcut-webhook/);
  }
});

test('npx shortcut-webhook runs it in a checkout, as SPEC §6 says, with no other build step', () => {
  // npm resolves the root package's own bin entry; --offline: nothing may be fetched to find it.
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const result = spawnSync(npx, ['--offline', '--no-install', 'shortcut-webhook', '--help'], {
    cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /^Usage: shortcut-webhook/);
});
