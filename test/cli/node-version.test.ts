// On a Node.js older than package.json's engines, every command says so once on stderr and goes on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const WARNING = /^shortcut-webhook: Node\.js (\S+) is older than this package supports \(engines: node >=22\); use Node\.js 22 or newer/m;

/** Runs `node <args>` as if its version were `version` (process.versions.node is configurable). */
function runAs(version: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } {
  const pretend = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`;
  const { OLD_NODE_WARNED_BY_SHORTCUT_WEBHOOK: _said, ...clean } = process.env;
  const run = spawnSync(process.execPath, [`--import=${pretend}`, ...args], { cwd: root, encoding: 'utf8', env: { ...clean, ...env }, timeout: 60_000 });
  return { status: run.status, stderr: run.stderr };
}

test('the CLI on an older Node says so once, on stderr, and still runs', () => {
  for (const args of [['bin/shortcut-webhook.js', '--help'], ['bin/shortcut-webhook.js', 'version'],
    ['bin/shortcut-webhook.js', 'rewrite', '--shortcuts', 'examples/shortcuts.yaml', '-o', 'patch', 'examples/endpointslice.yaml']]) {
    const run = runAs('20.20.2', args);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr.match(new RegExp(WARNING.source, 'gm'))?.length, 1, `${args.join(' ')}:\n${run.stderr}`);
    assert.match(run.stderr, /Node\.js 20\.20\.2 is older/);
  }
});

test('npm test\'s runner says so once; the processes it starts are told it was said', () => {
  const run = runAs('21.7.0', ['test/run.mjs', 'test/support']);
  assert.equal(run.stderr.match(new RegExp(WARNING.source, 'gm'))?.length, 1, run.stderr);
  const child = runAs('21.7.0', ['bin/shortcut-webhook.js', '--help'], { OLD_NODE_WARNED_BY_SHORTCUT_WEBHOOK: '1' });
  assert.equal(child.status, 0);
  assert.doesNotMatch(child.stderr, WARNING);
});

test('a supported Node says nothing', () => {
  for (const version of ['22.0.0', '24.21.0', '30.1.2']) {
    const run = runAs(version, ['bin/shortcut-webhook.js', '--help']);
    assert.equal(run.status, 0);
    assert.doesNotMatch(run.stderr, WARNING, version);
  }
});
