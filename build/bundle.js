// The one esbuild configuration of the project. `npm ci` / `npm install` run it (the `prepare` script) to make dist/,
// which bin/shortcut-webhook.js runs while it matches the sources; the Dockerfile runs it for the image; the admission
// benchmark and the image test run the Dockerfile's step.
//
//   node build/bundle.js [--outdir DIR] [--prepare]
//
// One ES module per command, split at main.ts's dynamic imports: `rewrite` and `--help` load neither the Kubernetes
// client nor fastify, pino or prom-client. The packages are bundled in too (CommonJS ones through a createRequire
// banner), but for EXTERNAL. All files land flat in DIR, one level below the checkout as src/*.ts are, so
// `new URL('../certs/…', import.meta.url)` finds the same file from the bundle as from the sources. DIR/modules.json
// names, for each output module, the files it holds and what it imports at run time (the startup and image tests
// read it).
//
// --prepare (npm's lifecycle): never fails the install. Without esbuild (`npm ci --omit=dev`) or with sources that do
// not build, it says so and leaves no stamp, and the executable runs the sources through tsx.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BUNDLE_ENTRY, buildCommit, ROOT, STAMP_FILE, sourceStamp } from './source-stamp.js';

/**
 * Packages loaded from node_modules at run time rather than bundled. Everything else is bundled: one file read instead
 * of one per module. yaml is 72 CommonJS files, half of a `rewrite` start (about 50 ms of 150 in a CPU profile);
 * fastify, pino and prom-client, some 300 files, were a third of the CPU of a `serve` start to /readyz (270 ms down to
 * 185 ms on Node 24, median of 6). pino's transports (worker threads found by __dirname) do not work from the bundle;
 * the logger writes to a stream and uses none.
 *
 * The Kubernetes client is bundled too (issue 38): loaded from node_modules it was 967 modules and 21 MB of source,
 * which V8 keeps for lazy compilation; in cluster mode on Node 24 the process held 141 MB at rest against 108 MB with
 * the parts the product uses bundled (heap 50 -> 25 MB), and a cluster-mode start took 1.25 s of CPU against 0.58 s.
 * Three of its packages stay external: node-fetch (its url.parse() and its whatwg-url's require('punycode') print
 * Node's deprecation warnings DEP0169 and DEP0040 from any file outside node_modules), ws and debug (each require()s
 * optional packages in a try, bufferutil, utf-8-validate and supports-color, which are not installed).
 */
const EXTERNAL = ['node-fetch', 'ws', 'debug'];
export const MODULES_FILE = 'modules.json';

/** The entry: main() on the process's arguments, exactly as bin/shortcut-webhook.js calls it from the sources. */
const ENTRY = "import { main } from './src/main.ts'; process.exitCode = await main(process.argv.slice(2));";

/** package.json's version (a stamp input: a new version makes a new bundle). */
function packageJsonVersion(root) {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  if (typeof version !== 'string') throw new Error('package.json has no version');
  return version;
}

/** The stamp of the bundle in `outdir` when it is complete (stamp written last), else undefined. */
function stampOf(outdir) {
  try {
    return existsSync(join(outdir, BUNDLE_ENTRY)) ? readFileSync(join(outdir, STAMP_FILE), 'utf8').trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Builds the bundle of the sources as they are now into `outdir`, where other processes may be running the current
 * one: building never races running. A bundle of these very sources is left untouched (`npx shortcut-webhook` in a
 * checkout re-runs `prepare`, and rewriting dist/ under the tests running it failed them with ERR_MODULE_NOT_FOUND).
 * Otherwise esbuild writes into a private folder beside it, and each file is moved in by rename (atomic): the new
 * chunks, the entry, then the stamp. Only then are the previous build's chunks removed, which no new start runs,
 * since their stamp no longer matches the sources.
 */
export async function bundle(outdir, root = ROOT) {
  const { build } = await import('esbuild');
  const external = EXTERNAL.flatMap((name) => [name, `${name}/*`]);
  const before = sourceStamp(root);
  mkdirSync(outdir, { recursive: true });
  if (stampOf(outdir) === before) return join(outdir, BUNDLE_ENTRY);
  const staging = mkdtempSync(join(outdir, '.build-'));
  try {
    const { metafile } = await build({
      absWorkingDir: root,
      stdin: { contents: ENTRY, resolveDir: root, sourcefile: 'shortcut-webhook.ts', loader: 'ts' },
      bundle: true,
      splitting: true,
      platform: 'node',
      // The oldest Node the package supports (package.json's engines).
      target: 'node22',
      format: 'esm',
      external,
      // Bundled CommonJS calls require() for Node's built-ins: an ES module has no require of its own.
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
      // What `shortcut-webhook version` reports where no git checkout is beside the bundle (the image), and the
      // package's version: the bundle reads nothing beside itself, so it runs from any folder (the bench's under .tmp/).
      define: {
        SHORTCUT_WEBHOOK_BUILD_COMMIT: JSON.stringify(buildCommit(root) ?? ''),
        SHORTCUT_WEBHOOK_BUILD_VERSION: JSON.stringify(packageJsonVersion(root)),
      },
      outdir: staging,
      entryNames: BUNDLE_ENTRY.replace(/\.mjs$/, ''),
      chunkNames: '[name]-[hash]',
      outExtension: { '.js': '.mjs' },
      sourcemap: true,
      // Stack traces need only the mappings: the sources are in the checkout, and not in the image.
      sourcesContent: false,
      logLevel: 'warning',
      metafile: true,
    });
    const modules = Object.fromEntries(Object.entries(metafile.outputs)
      .filter(([path]) => path.endsWith('.mjs'))
      .map(([path, output]) => [path.split('/').at(-1), {
        inputs: Object.keys(output.inputs).sort(),
        external: [...new Set(output.imports.filter((item) => item.external).map((item) => item.path))].sort(),
      }]));
    writeFileSync(join(staging, MODULES_FILE), `${JSON.stringify(modules, null, 1)}\n`);
    // A file edited while esbuild read the sources: the bundle may hold either version, so it gets no stamp.
    if (sourceStamp(root) !== before) throw new Error('the sources changed during the build; run it again');
    writeFileSync(join(staging, STAMP_FILE), `${before}\n`);
    const built = readdirSync(staging);
    const last = [BUNDLE_ENTRY, `${BUNDLE_ENTRY}.map`, MODULES_FILE, STAMP_FILE];
    for (const name of [...built.filter((name) => !last.includes(name)), ...last]) {
      if (built.includes(name)) renameSync(join(staging, name), join(outdir, name));
    }
    // The last build's chunks (their names carry hashes); nothing else in `outdir` is touched.
    for (const name of readdirSync(outdir)) {
      if (/\.mjs(\.map)?$/.test(name) && !built.includes(name)) rmSync(join(outdir, name), { force: true });
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return join(outdir, BUNDLE_ENTRY);
}

// Run as a script (not imported): node gives the main module's real path, symbolic links resolved.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { outdir: { type: 'string' }, prepare: { type: 'boolean' } } });
  const outdir = resolve(values.outdir ?? join(ROOT, 'dist'));
  try {
    await bundle(outdir);
  } catch (error) {
    if (!values.prepare) throw error;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`shortcut-webhook: no bundle made (${message.split('\n')[0]}); bin/shortcut-webhook.js runs the sources through tsx\n`);
  }
}
