// `npm test`: Node 20's `node --test` does not expand globs, so this finds the test files and hands them over.
//   npm test                    every test/**/*.test.ts
//   npm test -- test/core       only the files under the given paths
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
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
const result = spawnSync(process.execPath, [
  '--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2',
  ...files.map((file) => relative(root, file)),
], { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } });
process.exit(result.status ?? 1);
