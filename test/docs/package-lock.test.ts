// `npm install` in a clean checkout must leave it clean: the lockfile's record of the root package is what npm would
// write from package.json, so a newcomer's first command changes no tracked file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const read = (path: string): Record<string, unknown> => {
  const value: unknown = JSON.parse(readFileSync(`${root}${path}`, 'utf8'));
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value));
  return { ...value };
};

test('package-lock.json records the root package as package.json declares it (engines included)', () => {
  const pkg = read('package.json');
  const lock = read('package-lock.json');
  const packages = lock['packages'];
  assert.ok(typeof packages === 'object' && packages !== null && '' in packages);
  const recorded: unknown = Object.entries(packages).find(([path]) => path === '')?.[1];
  assert.ok(typeof recorded === 'object' && recorded !== null);
  const fields = new Map(Object.entries(recorded));
  for (const field of ['name', 'version', 'license', 'bin', 'engines', 'dependencies', 'devDependencies']) {
    assert.deepEqual(fields.get(field), pkg[field], `package-lock.json's root ${field} is package.json's`);
  }
  assert.equal(lock['name'], pkg['name']);
  assert.equal(lock['version'], pkg['version']);
});
