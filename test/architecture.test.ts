// Each layer of src/ imports only what its entry below names: the data path stays a straight line, and the pure
// layers (core, admission) stay free of I/O, clocks and logging.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';

const root = new URL('../src/', import.meta.url).pathname;
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

interface Allowed {
  /** Folders of src/ and files at its root (by name, without .ts) this layer may import from. */
  readonly layers: readonly string[];
  /** Packages by name; `node:` allows every built-in module. */
  readonly packages: readonly string[];
}

const ALLOWED: Readonly<Record<string, Allowed>> = {
  core: { layers: ['core'], packages: ['ipaddr.js'] },
  admission: { layers: ['core', 'admission'], packages: [] },
  util: { layers: ['core', 'util'], packages: ['node:', 'yaml'] },
  // log: credential reloads and refusals are said where they happen; yaml: the kubeconfig's tokenFile, which client-node skips.
  kube: { layers: ['core', 'util', 'kube', 'log'], packages: ['node:', '@kubernetes/client-node', 'yaml'] },
  view: { layers: ['core', 'util', 'kube', 'view', 'log'], packages: ['node:', '@kubernetes/client-node'] },
  // offline: the stored-objects gauge folds each object with status's own decisions (one source of truth).
  controller: {
    layers: ['core', 'admission', 'util', 'kube', 'view', 'controller', 'offline', 'log', 'metrics'],
    packages: ['node:', '@kubernetes/client-node'],
  },
  server: { layers: ['core', 'admission', 'util', 'view', 'server', 'log', 'metrics'], packages: ['node:', 'fastify'] },
  offline: { layers: ['core', 'admission', 'util', 'view', 'offline', 'cli', 'config'], packages: ['node:', 'yaml'] },
  // One file a subcommand: the shells over the layers below, each loaded only when its command runs.
  commands: {
    layers: ['core', 'admission', 'util', 'kube', 'view', 'controller', 'server', 'offline', 'commands', 'cli', 'config', 'log', 'metrics', 'version', 'app', 'tls', 'dev-tls'],
    packages: ['node:', '@kubernetes/client-node'],
  },
};

function importsIn(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/** The layer a path under src/ belongs to: its first folder, or its own name for a file at the root. */
function layerOf(path: string): string {
  const [first = '', ...rest] = relative(root, path).split(sep);
  return rest.length === 0 ? first.replace(/\.ts$/, '') : first;
}

/** The rule itself, for a file at `file` with this text, so that it can be tried on code that breaks it. */
function forbiddenImports(file: string, text: string): string[] {
  const allowed = ALLOWED[layerOf(file)];
  if (allowed === undefined) return [];
  return importsIn(text).filter((specifier) => {
    if (!specifier.startsWith('.')) return !allowed.packages.some((name) => (name.endsWith(':') ? specifier.startsWith(name) : specifier === name));
    const target = resolve(dirname(file), specifier);
    return !target.startsWith(root) || !allowed.layers.includes(layerOf(target));
  });
}

function filesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

test('every folder of src/ has an entry in the allow-list', () => {
  const folders = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  assert.deepEqual(folders, Object.keys(ALLOWED).sort());
});

for (const layer of Object.keys(ALLOWED)) {
  test(`src/${layer} imports only what its allow-list names`, () => {
    const files = filesIn(join(root, layer));
    assert.ok(files.length > 0);
    for (const file of files) assert.deepEqual(forbiddenImports(file, readFileSync(file, 'utf8')), [], file);
  });
}

const CLOCK_OR_IO = /\b(Date\.now|new Date|performance\.now|process\.|console\.|setTimeout|setInterval|Math\.random)\b/;

for (const layer of ['core', 'admission']) {
  test(`src/${layer} reads no clock, environment or console`, () => {
    for (const file of filesIn(join(root, layer))) {
      const code = readFileSync(file, 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      assert.doesNotMatch(code, CLOCK_OR_IO, file);
    }
  });
}

test('the check refuses forbidden imports, also through a sibling folder, dynamic ones and packages', () => {
  const inCore = join(root, 'core', 'example.ts');
  const bad = [
    "import { readFile } from 'node:fs/promises';",
    "import type { Logger } from '../log.ts';",
    "export { x } from '../view/file-source.ts';",
    "import { y } from './../admission/../server/admission-route.ts';",
    "const m = await import('prom-client');",
    "import ipaddr from 'ipaddr.js';",
    "import { parseCidr } from './cidr.ts';",
  ].join('\n');
  assert.deepEqual(forbiddenImports(inCore, bad),
    ['node:fs/promises', '../log.ts', '../view/file-source.ts', './../admission/../server/admission-route.ts', 'prom-client']);
  // A layer may use what it names and nothing past it: admission reaches core, but not view through core's folder.
  const inAdmission = join(root, 'admission', 'example.ts');
  assert.deepEqual(forbiddenImports(inAdmission, "import { a } from '../core/rewrite.ts';\nimport { b } from '../core/../view/shortcut-view.ts';"),
    ['../core/../view/shortcut-view.ts']);
  assert.deepEqual(forbiddenImports(join(root, 'server', 'example.ts'), "import { c } from '../controller/plan.ts';"), ['../controller/plan.ts']);
  assert.match('const now = Date.now();', CLOCK_OR_IO);
  assert.doesNotMatch('const dated = parse(text);', CLOCK_OR_IO);
});
