// What a start loads, and what bin/shortcut-webhook.js runs. `rewrite` and every `--help` never load the Kubernetes
// client, fastify, pino or prom-client; `serve` in file mode loads the server but not the Kubernetes client. The bin
// runs dist/ only while it was built from src/ as it is (build/source-stamp.js), the sources through tsx otherwise.
// Each case runs the real executable of a copy of this checkout (node_modules linked), with module-record.mjs
// noting every module the process resolved or required; a module of dist/ stands for the files bundled into it.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeCerts } from '../support/certs.ts';
import { waitFor } from '../support/wait-for.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const recorder = new URL('../support/module-record.mjs', import.meta.url).href;
const HEAVY = ['@kubernetes/client-node', 'fastify', 'pino', 'prom-client'];
const REWRITE = ['rewrite', '--shortcuts', join(root, 'examples/shortcuts.yaml'), '--explain', join(root, 'examples/endpointslice.yaml')];
const HELPS = [['--help'], ['serve', '--help'], ['rewrite', '--help']];

const scratch = mkdtempSync(join(tmpdir(), 'shortcut-startup-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let records = 0;

/** A copy of what `npm ci` leaves in a checkout, without dist/ (as with `npm ci --ignore-scripts`). */
function checkout(name: string): string {
  const dir = join(scratch, name);
  for (const path of ['bin', 'build', 'src', 'package.json', 'tsconfig.json']) cpSync(join(root, path), join(dir, path), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

function bundle(dir: string, ...flags: string[]): { status: number | null; stderr: string } {
  return spawnSync(process.execPath, [join(dir, 'build/bundle.js'), ...flags], { cwd: dir, encoding: 'utf8' });
}

interface Loaded { readonly files: ReadonlySet<string>; readonly packages: ReadonlySet<string> }

/**
 * The files the process loaded, and the packages they hold: a package loaded from node_modules, or bundled into a
 * module of dist/ that was loaded (dist/modules.json, written by build/bundle.js, names each module's inputs).
 */
function loadedFrom(record: string, dir: string): Loaded {
  const urls = existsSync(record) ? readFileSync(record, 'utf8').split('\n') : [];
  const files = new Set(urls.filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url)));
  const modulesFile = join(dir, 'dist/modules.json');
  const modules: unknown = existsSync(modulesFile) ? JSON.parse(readFileSync(modulesFile, 'utf8')) : {};
  const bundled = [...files].filter((file) => file.startsWith(join(dir, 'dist/'))).flatMap((file) => {
    const module = typeof modules === 'object' && modules !== null ? (modules as Record<string, unknown>)[basename(file)] : undefined;
    const held = typeof module === 'object' && module !== null && 'inputs' in module ? module.inputs : undefined;
    assert.ok(Array.isArray(held), `${file} is in dist/modules.json`);
    return held.map((input) => `/${String(input)}`);
  });
  const packages = new Set([...files, ...bundled].flatMap((file) => {
    const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    return match?.[1] === undefined ? [] : [match[1]];
  }));
  return { files, packages };
}

function run(dir: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string; loaded: Loaded } {
  const record = join(scratch, `record-${records++}.txt`);
  const result = spawnSync(process.execPath, ['--import', recorder, join(dir, 'bin/shortcut-webhook.js'), ...args], {
    cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', MODULE_RECORD_FILE: record },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, loaded: loadedFrom(record, dir) };
}

/** Which entry the bin took: the bundle, or the sources (main.ts through tsx). Exactly one of them. */
function entry(dir: string, loaded: Loaded): 'bundle' | 'sources' {
  const bundled = loaded.files.has(join(dir, 'dist/shortcut-webhook.mjs'));
  const sources = loaded.files.has(join(dir, 'src/main.ts'));
  assert.notEqual(bundled, sources, `one entry: bundle ${bundled}, sources ${sources}`);
  if (bundled) {
    assert.ok(![...loaded.files].some((file) => file.startsWith(join(dir, 'src/'))), 'the bundle loads no file of src/');
    assert.ok(!loaded.packages.has('tsx') && !loaded.packages.has('esbuild'), 'the bundle runs without tsx');
  }
  return bundled ? 'bundle' : 'sources';
}

function assertNoneOf(loaded: Loaded, names: readonly string[], what: string): void {
  assert.deepEqual(names.filter((name) => loaded.packages.has(name)), [], what);
}

describe('a start from the sources (no dist/) and from the bundle', () => {
  const dir = checkout('both');
  const outputs: Record<string, string> = {};

  for (const expected of ['sources', 'bundle'] as const) {
    test(`${expected}: rewrite loads the rewrite command and its packages, nothing of the server`, () => {
      if (expected === 'bundle') assert.equal(bundle(dir).status, 0);
      const result = run(dir, REWRITE);
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, /10\.63\.0\.151 +10\.61\.0\.151 +liqo\/cluster2-cluster3 +rewritten/);
      outputs[expected] = result.stdout;
      assert.equal(entry(dir, result.loaded), expected);
      // The packages are seen, CommonJS ones imported by an ES module and bundled ones alike.
      assert.deepEqual(['ipaddr.js', 'yaml'].filter((name) => !result.loaded.packages.has(name)), [], [...result.loaded.packages].join(', '));
      assertNoneOf(result.loaded, HEAVY, 'rewrite');
    });

    test(`${expected}: a usage error exits 2 and unreadable input 1, with the message on stderr`, () => {
      const usage = run(dir, ['rewrite', '--shortcuts', join(root, 'examples/shortcuts.yaml'), '--output', 'xml']);
      assert.equal(usage.status, 2, usage.stderr);
      assert.match(usage.stderr, /--output xml: expected one of yaml, json, patch/);
      const missing = run(dir, ['rewrite', '--shortcuts', join(root, 'examples/shortcuts.yaml'), join(scratch, 'no-such-file.yaml')]);
      assert.equal(missing.status, 1, missing.stderr);
      assert.match(missing.stderr, /cannot read .*no-such-file\.yaml/);
      assert.equal(entry(dir, missing.loaded), expected);
    });

    test(`${expected}: every --help loads neither a command's modules nor its packages`, () => {
      for (const args of HELPS) {
        const result = run(dir, args);
        assert.equal(result.status, 0, result.stderr);
        assert.match(result.stdout, /^Usage: shortcut-webhook/);
        assert.equal(entry(dir, result.loaded), expected);
        assertNoneOf(result.loaded, [...HEAVY, 'yaml', 'ipaddr.js'], args.join(' '));
        const commands = [...result.loaded.files].filter((file) => /\/(src\/offline\/|src\/serve\.ts|dist\/(command|serve)-)/.test(file));
        assert.deepEqual(commands, [], args.join(' '));
      }
    });
  }

  test('both entries print the same', () => {
    assert.ok(outputs['sources'] !== undefined && outputs['sources'] !== '');
    assert.equal(outputs['bundle'], outputs['sources']);
  });
});

describe('serve in file mode', () => {
  let certs: ReturnType<typeof makeCerts>;
  const dir = checkout('serve');
  before(() => {
    certs = makeCerts(join(scratch, 'certs'));
    assert.equal(bundle(dir).status, 0);
  });

  test('loads fastify, pino and prom-client, and not the Kubernetes client', async () => {
    const record = join(scratch, `record-${records++}.txt`);
    const child = spawn(process.execPath, ['--import', recorder, join(dir, 'bin/shortcut-webhook.js'), 'serve', '--host', '127.0.0.1',
      '--port', '0', '--ops-port', '0', '--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--shortcuts', join(root, 'examples/shortcuts.yaml')], {
      cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', MODULE_RECORD_FILE: record, KUBECONFIG: join(scratch, 'kubeconfig') },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await waitFor(() => output.includes('"msg":"serving"') || child.exitCode !== null, { timeoutMs: 20_000, description: 'serving' });
      assert.match(output, /"msg":"serving"/);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, output);
    const loaded = loadedFrom(record, dir);
    assert.equal(entry(dir, loaded), 'bundle');
    assert.deepEqual(['fastify', 'pino', 'prom-client'].filter((name) => !loaded.packages.has(name)), [], 'the server\'s packages are seen');
    assertNoneOf(loaded, ['@kubernetes/client-node'], 'file mode, KUBECONFIG set: it is not followed');
  });
});

describe('which entry the bin takes', () => {
  const dir = checkout('stale');
  const took = (): 'bundle' | 'sources' => {
    const result = run(dir, ['--help']);
    assert.equal(result.status, 0, result.stderr);
    return entry(dir, result.loaded);
  };

  test('an edit of src/ runs the sources until the next build, whatever the file times say', () => {
    assert.equal(bundle(dir).status, 0);
    assert.equal(took(), 'bundle');
    const file = join(dir, 'src/cli.ts');
    const original = readFileSync(file);
    const { atime, mtime } = statSync(file);
    appendFileSync(file, '\n// an edit\n');
    utimesSync(file, atime, mtime);
    assert.equal(took(), 'sources');
    writeFileSync(file, original);
    utimesSync(file, atime, mtime);
    assert.equal(took(), 'bundle', 'the same sources again: the bundle is current');
    writeFileSync(join(dir, 'src/util/new-file.ts'), 'export {};\n');
    assert.equal(took(), 'sources', 'a new file');
    rmSync(join(dir, 'src/util/new-file.ts'));
    assert.equal(took(), 'bundle');
    writeFileSync(join(dir, 'package.json'), readFileSync(join(dir, 'package.json'), 'utf8').replace('"version"', '"version" '));
    assert.equal(took(), 'sources', 'package.json is an input');
  });

  test('building never races running: a bundle of the same sources is left as it is, and a new one moves in by rename', () => {
    const racing = checkout('racing');
    assert.equal(bundle(racing).status, 0);
    const files = () => new Map(readdirSync(join(racing, 'dist')).map((name) => [name, statSync(join(racing, 'dist', name)).ino]));
    const first = files();
    // `npx shortcut-webhook` in a checkout runs `prepare` again: it used to delete and rewrite dist/ under the
    // processes running it (ERR_MODULE_NOT_FOUND for a chunk).
    assert.equal(bundle(racing, '--prepare').status, 0);
    assert.deepEqual(files(), first, 'the same files, not rewritten');
    appendFileSync(join(racing, 'src/cli.ts'), '\nexport const edited = 1;\n');
    assert.equal(bundle(racing).status, 0);
    const second = files();
    assert.notEqual(second.get('stamp'), first.get('stamp'));
    assert.ok(![...second.keys()].some((name) => name.startsWith('.build-')), 'no staging folder left');
    assert.equal(run(racing, ['--help']).status, 0);
  });

  test('sources that do not build: `prepare` does not fail the install, leaves no stamp of them, and the sources run', () => {
    const broken = checkout('broken');
    assert.equal(bundle(broken).status, 0);
    const good = readFileSync(join(broken, 'dist/stamp'), 'utf8');
    appendFileSync(join(broken, 'src/offline/explain.ts'), '\nexport const = ;\n');
    const prepared = bundle(broken, '--prepare');
    assert.equal(prepared.status, 0);
    assert.match(prepared.stderr, /no bundle made .*runs the sources through tsx/);
    // The last good bundle stays for whoever runs it, under the stamp of the sources it was built from.
    assert.equal(readFileSync(join(broken, 'dist/stamp'), 'utf8'), good);
    assert.notEqual(bundle(broken).status, 0, 'without --prepare a failed build fails');
    const result = run(broken, ['--help']);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(entry(broken, result.loaded), 'sources');
  });
});
