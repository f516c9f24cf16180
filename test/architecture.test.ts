// The pure layers stay pure: src/core and src/admission import nothing that does I/O, keeps time or logs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = new URL('../src/', import.meta.url).pathname;
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

function filesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const pure: Record<string, readonly string[]> = {
  core: ['ipaddr.js'],
  admission: [],
};
const CLOCK_OR_IO = /\b(Date\.now|new Date|performance\.now|process\.|console\.|setTimeout|setInterval|Math\.random)\b/;

for (const [layer, allowedPackages] of Object.entries(pure)) {
  test(`src/${layer} imports only pure code`, () => {
    const files = filesIn(join(root, layer));
    assert.ok(files.length > 0);
    for (const file of files) {
      for (const specifier of importsOf(file)) {
        const relative = specifier.startsWith('.');
        const allowed = relative
          ? !/\/(view|server|controller|cli|config|main|metrics|log|tls)\b/.test(specifier) && !specifier.includes('../..')
          : allowedPackages.includes(specifier);
        assert.ok(allowed, `${file} imports ${specifier}`);
      }
    }
  });

  test(`src/${layer} reads no clock, environment or console`, () => {
    for (const file of filesIn(join(root, layer))) {
      const code = readFileSync(file, 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      assert.doesNotMatch(code, CLOCK_OR_IO, file);
    }
  });
}

test('the architecture check would catch an I/O import', () => {
  assert.deepEqual(importsOf(new URL('./architecture.test.ts', import.meta.url).pathname).slice(0, 3), ['node:assert/strict', 'node:fs', 'node:path']);
});
