// The pure layers stay pure: src/core and src/admission import nothing that does I/O, keeps time or logs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = new URL('../src/', import.meta.url).pathname;
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function importsIn(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/** The rule itself, so that it can be tried on code that breaks it. */
function forbiddenImports(text: string, allowedPackages: readonly string[]): string[] {
  return importsIn(text).filter((specifier) => (specifier.startsWith('.')
    ? /\/(view|server|controller|cli|config|main|metrics|log|tls)\b/.test(specifier) || specifier.includes('../..')
    : !allowedPackages.includes(specifier)));
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
      assert.deepEqual(forbiddenImports(readFileSync(file, 'utf8'), allowedPackages), [], file);
    }
  });

  test(`src/${layer} reads no clock, environment or console`, () => {
    for (const file of filesIn(join(root, layer))) {
      const code = readFileSync(file, 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      assert.doesNotMatch(code, CLOCK_OR_IO, file);
    }
  });
}

test('the architecture check catches I/O imports, dynamic ones and reads of the clock', () => {
  const bad = [
    "import { readFile } from 'node:fs/promises';",
    "import type { Logger } from '../log.ts';",
    "export { x } from '../view/file-source.ts';",
    "const m = await import('prom-client');",
    "import ipaddr from 'ipaddr.js';",
  ].join('\n');
  assert.deepEqual(forbiddenImports(bad, ['ipaddr.js']), ['node:fs/promises', '../log.ts', '../view/file-source.ts', 'prom-client']);
  assert.match('const now = Date.now();', CLOCK_OR_IO);
  assert.doesNotMatch('const dated = parse(text);', CLOCK_OR_IO);
});
