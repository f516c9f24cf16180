// The suite leaves nothing under the OS temp dir, failed tests included: a child process whose tests fail (or whose
// script throws) after making scratch folders and certificates leaves an empty temp dir behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { scratchDir } from './scratch.ts';

const support = new URL('.', import.meta.url).pathname;

/** What a child run with its own temp dir left in it (tsx's compile cache aside), and how it ended. */
function leftBy(source: string, args: readonly string[]): { left: string[]; status: number | null; stderr: string } {
  const root = scratchDir('shortcut-scratch-test-');
  const temp = join(root, 'tmp');
  mkdirSync(temp);
  const script = join(root, 'child.test.ts');
  writeFileSync(script, source);
  // Without NODE_TEST_CONTEXT, which this runner sets: the child's node:test would report to it, and exit 0.
  const { NODE_TEST_CONTEXT: _runner, ...env } = process.env;
  const child = spawnSync(process.execPath, ['--import', 'tsx', ...args, script], { encoding: 'utf8', env: { ...env, TMPDIR: temp } });
  return { left: readdirSync(temp).filter((name) => !name.startsWith('tsx-')), status: child.status, stderr: child.stderr + child.stdout };
}

test('folders and certificates of failing tests are removed: a test\'s own after it, the file\'s at exit', () => {
  const { left, status, stderr } = leftBy(`
    import assert from 'node:assert/strict';
    import { existsSync } from 'node:fs';
    import { test } from 'node:test';
    import { makeCerts } from ${JSON.stringify(join(support, 'certs.ts'))};
    import { scratchDir } from ${JSON.stringify(join(support, 'scratch.ts'))};
    const shared = scratchDir('file-');
    test('fails', (t) => {
      const own = scratchDir('own-', t);
      const certs = makeCerts();
      assert.ok(existsSync(shared) && existsSync(own) && existsSync(certs.keyFile));
      assert.fail('planned failure');
    });
  `, ['--test', '--test-reporter=tap']);
  assert.notEqual(status, 0, 'the child\'s test failed');
  assert.match(stderr, /planned failure/);
  assert.deepEqual(left, []);
});

test('a script that throws after making them leaves nothing either', () => {
  const { left, status, stderr } = leftBy(`
    import { makeCerts } from ${JSON.stringify(join(support, 'certs.ts'))};
    import { scratchDir } from ${JSON.stringify(join(support, 'scratch.ts'))};
    scratchDir('file-');
    makeCerts();
    throw new Error('planned crash');
  `, []);
  assert.notEqual(status, 0);
  assert.match(stderr, /planned crash/);
  assert.deepEqual(left, []);
});
