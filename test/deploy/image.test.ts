// The image (Dockerfile, .dockerignore) and how the Deployment starts it. The suite has no container engine: it reads
// the Dockerfile, runs its bundling and pruning steps for real against this checkout, and puts the Deployment's
// arguments and environment through the real command-line parser. .ci/image (run by .ci/run) builds the Dockerfile
// with buildah and runs the image as the Deployment does; the tests below keep that script in CI.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseCommand } from '../../src/cli.ts';
import { renderChart } from './support/chart.ts';
import { containerOf } from './support/checks.ts';
import { buildImageBundle, entrypointNodeFlags, readDockerfile } from './support/dockerfile.ts';
import { at, isRecord, listAt, only, readManifests, stringAt, type KubeObject } from './support/kube.ts';
import { repoPath, repoRoot } from './support/paths.ts';

const dockerfile = readDockerfile();
/** The LTS major the image runs (issue 17: Node 20 is past its end of life). */
const IMAGE_NODE_MAJOR = '24';
const finalStage = Math.max(...dockerfile.map((instruction) => instruction.stage));
const final = dockerfile.filter((instruction) => instruction.stage === finalStage);
const args = new Map(dockerfile.filter((instruction) => instruction.keyword === 'ARG' && instruction.stage === -1).map((instruction) => {
  const [name = '', value = ''] = instruction.args.split('=');
  return [name, value];
}));

function resolveArgs(text: string): string {
  return text.replace(/\$\{?([A-Z_]+)\}?/g, (whole, name: string) => args.get(name) ?? whole);
}

// .dockerignore: the subset of its syntax in use (globs with * and **, no exceptions).
const ignorePatterns = readFileSync(repoPath('.dockerignore'), 'utf8').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));

function ignored(path: string): boolean {
  const matches = (pattern: string, candidate: string): boolean => {
    // `**/` matches any number of directories, none included (Docker's extension of filepath.Match).
    const glob = (part: string): string => part.split('*').map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*');
    const regex = pattern.split('**/').map((part) => part.split('**').map(glob).join('.*')).join('(?:.*/)?');
    return new RegExp(`^${regex}$`).test(candidate);
  };
  const parts = path.split('/');
  return ignorePatterns.some((pattern) => {
    assert.ok(!pattern.startsWith('!'), 'exceptions are not emulated');
    const clean = pattern.replace(/^\/|\/$/g, '');
    return parts.some((_part, index) => matches(clean, parts.slice(0, index + 1).join('/')));
  });
}

describe('the Dockerfile', () => {
  test('builds in stages and runs on one Node LTS major, 24, on a distroless or slim base of one Debian release', () => {
    const bases = dockerfile.filter((instruction) => instruction.keyword === 'FROM').map((instruction) => resolveArgs(instruction.args));
    assert.ok(bases.length >= 2, 'multi-stage');
    const majors = bases.map((base) => /(?:\bnode:|nodejs)(\d+)/.exec(base)?.[1]);
    assert.deepEqual(majors, majors.map(() => IMAGE_NODE_MAJOR), bases.join(', '));
    const releases = bases.map((base) => /(bookworm|debian12)/.test(base) ? 12 : /(trixie|debian13)/.test(base) ? 13 : undefined);
    assert.ok(releases.every((release) => release !== undefined && release === releases[0]), bases.join(', '));
    assert.match(bases.at(-1) ?? '', /^(gcr\.io\/distroless\/nodejs24-debian1[23](:nonroot)?|node:24-[a-z]+-slim)$/);
  });

  test('its Node major is one package.json supports and one .ci/run tests the suite on', () => {
    const pkg: unknown = JSON.parse(readFileSync(repoPath('package.json'), 'utf8'));
    const engines = isRecord(pkg) && isRecord(pkg['engines']) ? String(pkg['engines']['node']) : '';
    const minimum = /^>=(\d+)(?:\.(\d+))?$/.exec(engines);
    assert.ok(minimum !== null, `engines.node is a lower bound: ${engines}`);
    assert.ok(Number(minimum[1]) <= Number(IMAGE_NODE_MAJOR));
    // .ci/run reads the major from RUNTIME_IMAGE with this very pattern, then runs the suite on it.
    const ci = readFileSync(repoPath('.ci/run'), 'utf8');
    const pattern = /sed -n '(s\/[^']+)'/.exec(ci)?.[1] ?? '';
    assert.ok(pattern !== '' && ci.includes('.ci/install-node'), 'the CI installs the image\'s major');
    const read = spawnSync('sed', ['-n', pattern, repoPath('Dockerfile')], { encoding: 'utf8' });
    assert.equal(read.stdout.trim(), IMAGE_NODE_MAJOR);
  });

  test('runs as a numeric non-root user, the one the Deployment asks for', () => {
    const users = final.filter((instruction) => instruction.keyword === 'USER');
    assert.equal(users.length, 1);
    const [user, group] = (users[0]?.args ?? '').split(':');
    assert.match(user ?? '', /^[1-9]\d*$/);
    const deployment = only(readManifests(repoPath('manifests/05-deployment.yaml')), 'Deployment');
    assert.equal(Number(user), at(deployment, 'spec.template.spec.securityContext.runAsUser'));
    assert.equal(Number(group), at(deployment, 'spec.template.spec.securityContext.runAsGroup'));
  });

  test('installs from the lockfile with the .npmrc it was written with, in every stage that installs', () => {
    const installs = dockerfile.filter((instruction) => instruction.keyword === 'RUN' && /\bnpm (ci|install|i)\b/.test(instruction.args));
    assert.ok(installs.length >= 2);
    assert.ok(installs.every((instruction) => /\bnpm ci\b/.test(instruction.args)), 'npm ci, never npm install');
    // Without legacy-peer-deps (.npmrc), `npm ci` finds the lockfile out of sync with package.json and fails.
    assert.match(readFileSync(repoPath('.npmrc'), 'utf8'), /^legacy-peer-deps=true$/m);
    for (const install of installs) {
      const copiedBefore = dockerfile.filter((instruction) => instruction.stage === install.stage && instruction.keyword === 'COPY'
        && dockerfile.indexOf(instruction) < dockerfile.indexOf(install));
      assert.ok(copiedBefore.some((instruction) => instruction.args.split(' ').slice(0, -1).includes('.npmrc')), `stage ${install.stage} copies .npmrc before npm ci`);
    }
  });

  test('trusts an extra CA bundle only through a build secret, in the stages that install, never in the image', () => {
    const installs = dockerfile.filter((instruction) => instruction.keyword === 'RUN' && /\bnpm ci\b/.test(instruction.args));
    for (const install of installs) {
      assert.match(install.args, /--mount=type=secret,id=ca-certificates/);
      assert.match(install.args, /NODE_EXTRA_CA_CERTS=\/run\/secrets\/ca-certificates/);
    }
    assert.ok(!dockerfile.some((instruction) => instruction.keyword === 'ENV' && instruction.args.includes('NODE_EXTRA_CA_CERTS')));
    assert.ok(!dockerfile.some((instruction) => instruction.keyword === 'COPY' && /ca-certificates|\.crt\b/.test(instruction.args)));
  });

  test('labels the image with its version and the source commit', () => {
    const labels = final.filter((instruction) => instruction.keyword === 'LABEL').map((instruction) => instruction.args).join(' ');
    assert.match(labels, /org\.opencontainers\.image\.version="\$\{VERSION\}"/);
    assert.match(labels, /org\.opencontainers\.image\.revision="\$\{SOURCE_COMMIT\}"/);
    assert.ok(final.some((instruction) => instruction.keyword === 'ARG' && instruction.args === 'SOURCE_COMMIT'), 'the final stage declares SOURCE_COMMIT');
  });

  test('is built and run in CI: .ci/run calls .ci/image, which builds this Dockerfile and smoke-tests the image', () => {
    const ci = readFileSync(repoPath('.ci/run'), 'utf8').split('\n').filter((line) => !line.trim().startsWith('#'));
    assert.ok(ci.some((line) => line.trim() === '.ci/image'), '.ci/run runs .ci/image');
    const script = readFileSync(repoPath('.ci/image'), 'utf8');
    assert.match(script, /^set -euo pipefail$/m);
    assert.match(script, /buildah bud [^\n]*-f Dockerfile/);
    assert.match(script, /--build-arg "NODE_IMAGE=/);
    assert.match(script, /--build-arg "RUNTIME_IMAGE=/);
    assert.match(script, /--build-arg "SOURCE_COMMIT=/);
    assert.match(script, /node \.ci\/image-smoke\.mjs/);
  });

  test('installs production dependencies only and keeps of them only what the bundle imports', () => {
    const copiedModules = final.find((instruction) => instruction.keyword === 'COPY' && instruction.args.includes('node_modules'));
    const fromStage = /--from=(\S+)/.exec(copiedModules?.args ?? '')?.[1];
    const stageNames = dockerfile.filter((instruction) => instruction.keyword === 'FROM').map((instruction) => / AS (\S+)$/i.exec(instruction.args)?.[1]);
    const depsStage = stageNames.indexOf(fromStage);
    assert.ok(depsStage >= 0, 'node_modules come from a named stage');
    const depsInstall = dockerfile.find((instruction) => instruction.stage === depsStage && instruction.keyword === 'RUN' && instruction.args.includes('npm ci'));
    assert.match(depsInstall?.args ?? '', /--omit=dev/);
    // The bundle holds every package but the external ones: build/runtime-modules.js removes the rest, reading the
    // bundle's own list of what it imports.
    const deps = dockerfile.filter((instruction) => instruction.stage === depsStage);
    assert.ok(deps.some((instruction) => instruction.keyword === 'COPY' && instruction.args === '--from=build /src/dist/modules.json ./dist/'));
    assert.ok(deps.some((instruction) => instruction.keyword === 'COPY' && instruction.args === 'build/runtime-modules.js ./build/'));
    const prune = deps.find((instruction) => instruction.keyword === 'RUN' && instruction.args.includes('build/runtime-modules.js'));
    assert.match(prune?.args ?? '', /--modules dist\/modules\.json --node-modules node_modules/);
    assert.ok(prune !== undefined && depsInstall !== undefined && deps.indexOf(prune) > deps.indexOf(depsInstall), 'prunes after installing');
  });

  test('the final stage copies only the bundle, the production node_modules and package.json, and runs nothing', () => {
    assert.ok(!final.some((instruction) => instruction.keyword === 'RUN'), 'a distroless stage has no shell to RUN with');
    const copies = final.filter((instruction) => instruction.keyword === 'COPY').map((instruction) => instruction.args);
    assert.deepEqual(copies, ['--from=deps /app/node_modules ./node_modules', '--from=build /src/dist ./dist', 'package.json ./']);
    assert.ok(!dockerfile.some((instruction) => instruction.keyword === 'ADD'), 'no ADD (no remote fetches, no tar magic)');
  });

  test('starts the bundle with `serve` by default and exposes the webhook and ops ports', () => {
    const entrypoint: unknown = JSON.parse(final.find((instruction) => instruction.keyword === 'ENTRYPOINT')?.args ?? 'null');
    assert.deepEqual(entrypoint, ['node', '--enable-source-maps', '--single-threaded-gc', '--max-semi-space-size=4', 'dist/shortcut-webhook.mjs']);
    // The admission benchmark starts the webhook with the same flags, read from here.
    assert.deepEqual(entrypointNodeFlags(), ['--enable-source-maps', '--single-threaded-gc', '--max-semi-space-size=4']);
    const command: unknown = JSON.parse(final.find((instruction) => instruction.keyword === 'CMD')?.args ?? 'null');
    assert.deepEqual(command, ['serve']);
    const exposed = final.filter((instruction) => instruction.keyword === 'EXPOSE').flatMap((instruction) => instruction.args.split(' '));
    assert.deepEqual(exposed.sort(), ['8080', '9443']);
  });

  test('puts node on PATH, which the preStop hook of the Deployment relies on', () => {
    const env = final.filter((instruction) => instruction.keyword === 'ENV').map((instruction) => instruction.args).join(' ');
    const path = /PATH=(\S+)/.exec(env)?.[1] ?? '';
    assert.ok(path.split(':').includes('/nodejs/bin'), 'distroless keeps node in /nodejs/bin');
    assert.match(env, /NODE_ENV=production/);
  });

  test('copies from the build context only files that exist and that .dockerignore lets through', () => {
    for (const instruction of dockerfile.filter((item) => item.keyword === 'COPY' && !item.args.startsWith('--from'))) {
      const sources = instruction.args.split(' ').slice(0, -1);
      for (const source of sources) {
        assert.ok(existsSync(repoPath(source)), `${source} exists`);
        assert.ok(!ignored(source.replace(/\/$/, '')), `${source} is not ignored`);
      }
    }
  });
});

describe('.dockerignore', () => {
  test('keeps dependencies, the test tools, keys, generated certificates, git, tests and benchmarks out of the build context', () => {
    for (const path of ['node_modules/yaml/package.json', '.tools/helm-v3-layer@2.0.0/helm', 'certs/out/tls.key', 'certs/out/ca.crt', 'deep/dir/server.key', 'x.pem', '.git/HEAD', 'test/run.mjs', 'bench/run.ts']) {
      assert.ok(ignored(path), `${path} is ignored`);
    }
  });

  test('lets the sources and the lockfile through', () => {
    for (const path of ['src/main.ts', 'src/core/rewrite.ts', 'build/bundle.js', 'bin/shortcut-webhook.js', 'package.json', 'package-lock.json', 'tsconfig.json']) {
      assert.ok(!ignored(path), `${path} is let through`);
    }
  });
});

describe('the bundle the Dockerfile builds', () => {
  const out = repoPath('.tmp', `image-test-${process.pid}`);
  after(() => rmSync(out, { recursive: true, force: true }));
  let bundled: { status: number | null; stderr: string } | undefined;
  const bundle = (): string => {
    const outfile = join(out, 'shortcut-webhook.mjs');
    if (bundled === undefined) {
      mkdirSync(out, { recursive: true });
      bundled = buildImageBundle(outfile, dockerfile);
    }
    assert.equal(bundled.status, 0, bundled.stderr);
    return outfile;
  };

  test('bundles src/main.ts without tsx and imports only production dependencies at run time', () => {
    const files = readdirSync(dirname(bundle())).filter((name) => name.endsWith('.mjs'));
    assert.ok(files.length > 1, 'one module per command, split at main.ts\'s dynamic imports');
    // What each module imports at run time, as esbuild resolved it (build/bundle.js writes it beside the bundle): a
    // scan of the text would also find the require() calls inside code that packages such as ajv generate as strings.
    const modules: unknown = JSON.parse(readFileSync(join(out, 'modules.json'), 'utf8'));
    assert.ok(isRecord(modules));
    assert.deepEqual(Object.keys(modules).sort(), [...files].sort());
    const pkg: unknown = JSON.parse(readFileSync(repoPath('package.json'), 'utf8'));
    const dependencies = new Set(Object.keys(isRecord(pkg) && isRecord(pkg['dependencies']) ? pkg['dependencies'] : {}));
    const builtins = new Set(builtinModules);
    const imported = new Set<string>();
    for (const module of Object.values(modules)) {
      const external = isRecord(module) && Array.isArray(module['external']) ? module['external'] : [];
      for (const specifier of external.map(String)) {
        if (specifier.startsWith('node:') || builtins.has(specifier.split('/')[0] ?? '')) continue;
        const parts = specifier.split('/');
        imported.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] ?? specifier);
      }
    }
    assert.deepEqual([...imported].sort(), ['debug', 'node-fetch', 'ws'], 'the packages build/bundle.js keeps external');
    // What `npm ci --omit=dev` installs: the production dependencies and theirs, as build/runtime-modules.js finds them.
    const everything = join(out, 'production-dependencies.json');
    writeFileSync(everything, JSON.stringify({ 'all.mjs': { external: [...dependencies] } }));
    const closure = spawnSync(process.execPath, [repoPath('build/runtime-modules.js'), '--modules', everything, '--node-modules', repoPath('node_modules'), '--dry-run'],
      { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(closure.status, 0, closure.stderr);
    const installed = new Set(closure.stdout.split('\n').filter(Boolean).map((path) => path.split('node_modules/').at(-1)));
    for (const name of imported) {
      assert.ok(installed.has(name), `${name} is imported at run time but is not installed with the production dependencies`);
      assert.ok(name !== 'tsx' && name !== 'esbuild', `${name} is removed from the image`);
    }
  });

  test('needs from node_modules only the few packages of the Kubernetes client kept external, which build/runtime-modules.js keeps', () => {
    bundle();
    const kept = spawnSync(process.execPath, [repoPath('build/runtime-modules.js'), '--modules', join(out, 'modules.json'), '--node-modules', repoPath('node_modules'), '--dry-run'],
      { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(kept.status, 0, kept.stderr);
    // Folders as runtime-modules.js prints them (relative, through a symlinked node_modules too): their package names.
    const packages = kept.stdout.split('\n').filter(Boolean).map((path) => path.split('node_modules/').at(-1));
    for (const needed of ['node-fetch', 'ws', 'debug', 'whatwg-url']) assert.ok(packages.includes(needed), `${needed} is kept`);
    for (const bundled of ['@kubernetes/client-node', 'js-yaml', 'openid-client', 'fastify', 'pino', 'prom-client', 'yaml', 'ipaddr.js', 'fast-json-patch', 'tsx', 'esbuild', 'typescript', '@types/node']) {
      assert.ok(!packages.includes(bundled), `${bundled} is not kept`);
    }
  });

  test('build/runtime-modules.js removes unneeded packages, declarations and maps, and refuses a missing dependency', () => {
    const tree = join(out, 'prune-tree');
    const write = (path: string, text: string): void => {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    };
    const pkg = (name: string, dependencies: Record<string, string> = {}): string => JSON.stringify({ name, version: '1.0.0', dependencies });
    write('dist/modules.json', JSON.stringify({ 'a.mjs': { external: ['@scope/client', 'node:fs', 'fs'] } }));
    write('node_modules/@scope/client/package.json', pkg('@scope/client', { dep: '1', '@types/x': '1' }));
    write('node_modules/@scope/client/index.js', '');
    write('node_modules/@scope/client/index.d.ts', '');
    write('node_modules/@scope/client/index.js.map', '');
    write('node_modules/@scope/client/node_modules/dep/package.json', pkg('dep'));
    write('node_modules/@types/x/package.json', pkg('@types/x'));
    write('node_modules/bundled/package.json', pkg('bundled'));
    write('node_modules/.bin/bundled', '');
    const run = (): ReturnType<typeof spawnSync> => spawnSync(process.execPath, [repoPath('build/runtime-modules.js'), '--modules', join(tree, 'dist/modules.json'), '--node-modules', join(tree, 'node_modules')], { encoding: 'utf8' });
    const pruned = run();
    assert.equal(pruned.status, 0, String(pruned.stderr));
    for (const kept of ['@scope/client/index.js', '@scope/client/node_modules/dep/package.json']) assert.ok(existsSync(join(tree, 'node_modules', kept)), `${kept} kept`);
    for (const gone of ['@scope/client/index.d.ts', '@scope/client/index.js.map', '@types/x', 'bundled', '.bin']) assert.ok(!existsSync(join(tree, 'node_modules', gone)), `${gone} removed`);
    rmSync(join(tree, 'node_modules/@scope/client/node_modules/dep'), { recursive: true });
    const missing = run();
    assert.notEqual(missing.status, 0);
    assert.match(String(missing.stderr), /dep, needed by @scope\/client, is not installed/);
  });

  test('answers --help and serve --help', () => {
    const outfile = bundle();
    for (const argv of [['--help'], ['serve', '--help']]) {
      const result = spawnSync(process.execPath, ['--enable-source-maps', outfile, ...argv], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
      assert.equal(result.status, 0, `${argv.join(' ')}: ${result.stderr}`);
      assert.match(result.stdout, /serve/);
    }
  });

  test('says the package\'s version wherever its folder lies, with no package.json beside it (the bench runs it from .tmp/<dir>/)', () => {
    const outfile = bundle();
    assert.ok(!existsSync(join(out, '..', 'package.json')), 'the folder above the bundle has no package.json');
    const result = spawnSync(process.execPath, [outfile, 'version'], { cwd: out, encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, result.stderr);
    const { version } = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version: string };
    assert.match(result.stdout, new RegExp(`\\b${version.replaceAll('.', '\\.')}\\b`));
  });
});

/** The argv and environment a container of the Deployment starts with (downward API values filled in). */
function startup(deployment: KubeObject): { argv: string[]; env: NodeJS.ProcessEnv } {
  const container = containerOf(deployment);
  const env: NodeJS.ProcessEnv = {};
  for (const item of listAt(container, 'env')) {
    const name = stringAt(item, 'name');
    env[name] = isRecord(item) && typeof item['value'] === 'string' ? item['value'] : `from-${name.toLowerCase()}`;
  }
  return { argv: listAt(container, 'args').map(String), env };
}

describe('the Deployment\'s command line, read by the real parser', () => {
  test('the plain manifests start `serve` on 9443/8080 with the mounted certificate', () => {
    const { argv, env } = startup(only(readManifests(repoPath('manifests/05-deployment.yaml')), 'Deployment'));
    const command = parseCommand(argv, env);
    assert.equal(command.kind, 'serve', JSON.stringify(command));
    if (command.kind !== 'serve') return;
    assert.equal(command.config.port, 9443);
    assert.equal(command.config.opsPort, 8080);
    assert.deepEqual(command.config.tls, { cert: '/etc/shortcut-webhook/tls/tls.crt', key: '/etc/shortcut-webhook/tls/tls.key' });
    assert.equal(command.config.source, 'cluster');
    assert.equal(command.config.controller, true);
    assert.equal(command.config.resyncIntervalMs, 5 * 60_000);
    assert.equal(command.config.logLevel, 'info');
    assert.notEqual(command.config.host, '127.0.0.1', 'reachable from the Service');
  });

  test('the chart\'s hub source, namespace, cluster ID and --no-controller reach the config', () => {
    const rendered = renderChart({
      values: {
        clusterId: 'cluster2',
        logLevel: 'warn',
        controller: { enabled: false },
        shortcuts: { source: 'hubKubeconfig', hubKubeconfigSecret: 'hub', namespace: 'liqo' },
      },
    });
    const { argv, env } = startup(only(rendered.objects, 'Deployment'));
    const command = parseCommand(argv, env);
    assert.equal(command.kind, 'serve', JSON.stringify(command));
    if (command.kind !== 'serve') return;
    assert.deepEqual(command.config.shortcutsKubeconfigs, [{ hub: undefined, value: '/etc/shortcut-webhook/hub/kubeconfig' }]);
    assert.equal(command.config.shortcutsNamespace, 'liqo');
    assert.equal(command.config.clusterId, 'cluster2');
    assert.equal(command.config.controller, false);
    assert.equal(command.config.logLevel, 'warn');
  });

  test('a service link that enableServiceLinks: false keeps out would be ignored with a warning, not taken for the port', () => {
    const { argv, env } = startup(only(readManifests(repoPath('manifests/05-deployment.yaml')), 'Deployment'));
    const { SHORTCUT_WEBHOOK_PORT: _ignored, ...withoutPort } = env;
    const command = parseCommand(argv, { ...withoutPort, SHORTCUT_WEBHOOK_PORT: 'tcp://10.96.0.10:443' });
    assert.ok(command.kind === 'serve');
    assert.equal(command.config.port, 9443);
    assert.match(command.warnings.join('\n'), /Kubernetes service link/);
  });
});
