// `npm test`: Node 20's `node --test` does not expand globs, so this finds the test files and hands them over.
//   npm test                    every test/**/*.test.ts
//   npm test -- test/core       only the files under the given paths
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { warnIfOldNode } from '../bin/node-version.js';

warnIfOldNode();

const root = fileURLToPath(new URL('..', import.meta.url));

function collect(path) {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules' && entry.name !== 'fixtures')
    .flatMap((entry) => collect(join(path, entry.name)));
}

const roots = process.argv.slice(2);
const files = (roots.length > 0 ? roots : ['test']).flatMap((path) => collect(join(root, path))).sort();
if (files.length === 0) {
  console.error(`no test files under ${roots.join(' ') || 'test'}`);
  process.exit(1);
}
// Each file fails in bounded time instead of hanging the run. Node 22 bounds the whole file with --test-timeout (its
// hooks included), Node 24 each test and suite; either way the bound is the slowest legitimate file, with room for a
// loaded machine. --test-force-exit ends a file whose timed-out test left a socket or a timer behind (Node 24 would
// otherwise wait on it for ever). Figures: docs/testing.md, "Tests fail, they do not hang".
const UNIT_TIMEOUT_MS = 300_000;
const E2E_TIMEOUT_MS = 900_000;
const e2eRoot = join(root, 'test', 'e2e');
const isE2e = (file) => file.startsWith(e2eRoot + sep);

function run(group, timeoutMs) {
  if (group.length === 0) return 0;
  const result = spawnSync(process.execPath, [
    '--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', `--test-timeout=${timeoutMs}`, '--test-force-exit',
    ...group.map((file) => relative(root, file)),
  ], { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } });
  return result.status ?? 1;
}

const e2e = files.filter(isE2e);
const unit = run(files.filter((file) => !isE2e(file)), UNIT_TIMEOUT_MS);
// The e2e suite's Go builds first, outside any file's timeout (minutes each on a cold cache).
const prebuilt = e2e.length === 0 ? 0 : spawnSync(process.execPath, [
  '--import', 'tsx', join('test', 'e2e', 'support', 'prebuild.ts'), ...(e2e.some((file) => file.endsWith(`${sep}datapath.test.ts`)) ? ['--datapath'] : []),
], { cwd: root, stdio: 'inherit' }).status ?? 1;
const ended = prebuilt === 0 ? run(e2e, E2E_TIMEOUT_MS) : prebuilt;
process.exit(unit || ended);
