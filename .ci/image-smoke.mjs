// The image, run as the Deployment runs it, checked: .ci/image calls this after building. Every check asserts; the
// first failure exits 1 with what was expected and what came.
//
//   node .ci/image-smoke.mjs --image IMAGE --commit SHA --version V --runtime-image BASE [--nofile N] [--nproc N]
//
// The container runs with the Deployment's arguments and environment (manifests/05-deployment.yaml), a read-only root
// filesystem, /tmp as a small tmpfs (the Deployment's emptyDir), no capabilities, no new privileges, uid/gid 65532 and
// the serving key pair mounted read-only with mode 0440 (the Secret's defaultMode, group 65532 as fsGroup makes it), in
// file mode on the README's examples as leaf cluster2. It has no network but its loopback: the checks run in it with
// `podman exec` and the image's own node (the image has no shell and no curl), so no host port is taken.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';

const { values } = parseArgs({ options: { image: { type: 'string' }, commit: { type: 'string' }, version: { type: 'string' }, 'runtime-image': { type: 'string' }, nofile: { type: 'string', default: '65536' }, nproc: { type: 'string', default: '65536' } } });
const { image, commit, version } = values;
assert.ok(image && commit && version && values['runtime-image'], 'usage: --image IMAGE --commit SHA --version V --runtime-image BASE');
const root = new URL('..', import.meta.url).pathname;
const name = `shortcut-webhook-smoke-${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'shortcut-webhook-smoke-'));
const started = Date.now();

function run(command, args, { input, allowFailure = false } = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', input, maxBuffer: 64 << 20 });
  if (!allowFailure) assert.equal(result.status, 0, `${command} ${args.join(' ')} failed (${result.status}):\n${result.stderr}${result.stdout}`);
  return result;
}
const podman = (args, options) => run('podman', args, options);
const say = (line) => process.stdout.write(`# image-smoke: ${line} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);

/** The first ```-fenced block after `marker` in the README. */
function readmeBlock(marker) {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `README has ${marker}`);
  const match = /```\w*\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(match, `a block after ${marker}`);
  return match[1];
}

// The Deployment's environment: its literal values, the downward API's filled in; then file mode on the examples.
const deployment = parseAllDocuments(readFileSync(join(root, 'manifests/05-deployment.yaml'), 'utf8')).map((doc) => doc.toJS()).find((doc) => doc?.kind === 'Deployment');
const container = deployment.spec.template.spec.containers[0];
const securityContext = { ...deployment.spec.template.spec.securityContext, ...container.securityContext };
assert.equal(securityContext.readOnlyRootFilesystem, true);
assert.deepEqual(securityContext.capabilities.drop, ['ALL']);
const uid = securityContext.runAsUser;
const gid = securityContext.runAsGroup;
const env = Object.fromEntries(container.env.map((item) => [item.name, item.value ?? `smoke-${item.name.toLowerCase().replace(/_/g, '-')}`]));
const examples = '/etc/shortcut-webhook/examples';
Object.assign(env, {
  SHORTCUT_WEBHOOK_SHORTCUTS: `${examples}/shortcuts.yaml,${examples}/stock-liqo/leaf.yaml`,
  SHORTCUT_WEBHOOK_HUB: `${examples}/stock-liqo/hub.yaml`,
  SHORTCUT_WEBHOOK_CLUSTER_ID: 'cluster2',
});
const tlsMount = container.volumeMounts.find((mount) => mount.name === 'tls').mountPath;
const mode = deployment.spec.template.spec.volumes.find((volume) => volume.name === 'tls').secret.defaultMode;
assert.equal(mode, 0o440);

// The Secret: a key pair made as install-secret.sh makes it, 0440, group 65532, the CA key left out.
const tls = join(work, 'tls');
run(join(root, 'certs/make-certs.sh'), ['--out', tls]);
rmSync(join(tls, 'ca.key'));
for (const file of ['ca.crt', 'tls.crt', 'tls.key']) {
  chownSync(join(tls, file), 0, gid);
  chmodSync(join(tls, file), mode);
}

const runOptions = [
  '--read-only', '--tmpfs', '/tmp:rw,size=16m,mode=1777', '--cap-drop=ALL', '--security-opt=no-new-privileges',
  `--user=${uid}:${gid}`, '--network=none', `--ulimit=nofile=${values.nofile}:${values.nofile}`, `--ulimit=nproc=${values.nproc}:${values.nproc}`,
  '-v', `${tls}:${tlsMount}:ro`, '-v', `${join(root, 'examples')}:${examples}:ro`,
];

function check() {
  // What the image says about itself.
  const [inspected] = JSON.parse(podman(['image', 'inspect', image]).stdout);
  const labels = inspected.Labels ?? inspected.Config?.Labels ?? {};
  assert.equal(labels['org.opencontainers.image.revision'], commit, 'revision label');
  assert.equal(labels['org.opencontainers.image.version'], version, 'version label');
  assert.equal(inspected.Config.User, `${uid}:${gid}`);
  assert.ok(!(inspected.Config.Env ?? []).some((item) => item.startsWith('NODE_EXTRA_CA_CERTS=')), 'no CA setting in the image');

  // What it carries: the bundle, package.json and only the packages the bundle imports; no build-time CA bundle.
  const mount = podman(['image', 'mount', image]).stdout.trim();
  try {
    const app = spawnSync('ls', ['-A', join(mount, 'app')], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort();
    assert.deepEqual(app, ['dist', 'node_modules', 'package.json']);
    for (const dead of ['fastify', 'pino', 'prom-client', 'yaml', 'tsx', 'esbuild', '.bin', 'typescript']) {
      assert.equal(spawnSync('test', ['-e', join(mount, 'app/node_modules', dead)]).status, 1, `node_modules/${dead} is in the image`);
    }
    const certs = readFileSync('/etc/ssl/certs/ca-certificates.crt', 'utf8').match(/-----BEGIN CERTIFICATE-----\n[^\n]+/g) ?? [];
    const probe = certs.at(-1)?.split('\n')[1];
    if (probe !== undefined) {
      const found = spawnSync('grep', ['-rlF', '--', probe, mount], { encoding: 'utf8' });
      assert.equal(found.stdout, '', `the build host's CA bundle is in the image:\n${found.stdout}`);
    }
    const size = spawnSync('du', ['-sm', join(mount, 'app/dist'), join(mount, 'app/node_modules')], { encoding: 'utf8' }).stdout.trim().replace(/\s+/g, ' ');
    say(`contents as expected; MB: ${size.replaceAll(mount, '')}`);
  } finally {
    podman(['image', 'unmount', image], { allowFailure: true });
  }

  // `version`, in the Deployment's container.
  const versionRun = podman(['run', '--rm', ...runOptions, image, 'version']);
  assert.ok(versionRun.stdout.includes(version) && versionRun.stdout.includes(commit.slice(0, 12)), `version prints ${version} and ${commit}: ${versionRun.stdout}`);
  // Every module of the bundle loads: the Kubernetes client is bundled now, and the few packages kept external
  // (build/bundle.js's EXTERNAL: node-fetch, ws, debug) come from node_modules as the chunks import them.
  const load = "import { readdirSync, readFileSync } from 'node:fs'; const fs = readdirSync('/app/dist').filter((f) => f.endsWith('.mjs')); for (const f of fs.filter((f) => f.startsWith('chunk-'))) await import('/app/dist/' + f); if (!fs.some((f) => /KubeConfig = class|class KubeConfig /.test(readFileSync('/app/dist/' + f, 'utf8')))) process.exit(3);";
  podman(['run', '--rm', ...runOptions, '--workdir=/app', '--entrypoint=node', image, '--input-type=module', '-e', load]);
  say(`version ${version} ${commit.slice(0, 12)}; every chunk of the bundle loads, the Kubernetes client's among them`);

  // serve, as the Deployment starts it.
  podman(['run', '-d', '--name', name, ...runOptions, ...Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]), image, ...container.args]);
  const inContainer = (script, input) => podman(['exec', '-i', name, 'node', '--input-type=module', '-e', script], { input, allowFailure: true });
  const readyz = "const r = await fetch('http://127.0.0.1:8080/readyz').catch(() => undefined); process.stdout.write(String(r?.status ?? 0)); process.exit(r?.status === 200 ? 0 : 1);";
  // Ready within the startupProbe's budget (30 x 2 s); the container must be running all along.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = podman(['inspect', '--format', '{{.State.Running}}', name]).stdout.trim();
    assert.equal(state, 'true', `the container stopped:\n${podman(['logs', name], { allowFailure: true }).stderr}`);
    if (inContainer(readyz).status === 0) break;
    assert.ok(Date.now() < deadline, `not ready in 60 s:\n${podman(['logs', name], { allowFailure: true }).stderr}`);
    spawnSync('sleep', ['0.2']); // a probe's period, not a guess at how long start-up takes
  }
  say('serve is ready');

  // The README's two reviews: the answer the offline harness gives for the same view, and for the first the README's
  // own bytes and patch.
  const post = `import { readFileSync } from 'node:fs'; import { request } from 'node:https';
    const body = readFileSync(0);
    const req = request({ host: '127.0.0.1', port: 9443, servername: 'localhost', path: '/mutate/endpointslices', method: 'POST',
      ca: readFileSync('${tlsMount}/ca.crt'), headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const chunks = []; res.on('data', (c) => chunks.push(c)); res.on('end', () => { process.stdout.write(Buffer.concat(chunks)); process.exit(res.statusCode === 200 ? 0 : 1); });
    });
    req.on('error', (e) => { console.error(e.message); process.exit(1); }); req.end(body);`;
  const decode = (answer) => JSON.parse(Buffer.from(JSON.parse(answer).response.patch, 'base64').toString('utf8'));
  for (const review of ['examples/admission-review.json', 'examples/stock-liqo/admission-review.json']) {
    const answer = inContainer(post, readFileSync(join(root, review)));
    assert.equal(answer.status, 0, `${review}: ${answer.stderr}${answer.stdout}`);
    const offline = run(process.execPath, [join(root, 'bin/shortcut-webhook.js'), 'rewrite', '--cluster-id', 'cluster2',
      '--shortcuts', 'examples/shortcuts.yaml', '--shortcuts', 'examples/stock-liqo/leaf.yaml', '--hub', 'examples/stock-liqo/hub.yaml',
      '-o', 'json', review]);
    assert.deepEqual(JSON.parse(answer.stdout), JSON.parse(offline.stdout), `${review}: the image answers as the offline harness`);
    if (review === 'examples/admission-review.json') {
      assert.equal(answer.stdout, readmeBlock('```json').trimEnd(), 'the README\'s answer');
      assert.deepEqual(decode(answer.stdout), JSON.parse(readmeBlock('The `patch`, base64-decoded')));
    } else {
      assert.deepEqual(decode(answer.stdout).find((op) => op.path === '/endpoints/0/addresses/0'),
        { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' }, 'the README\'s stock-Liqo patch: 10.71.0.12 moves to 10.61.0.151');
    }
  }
  say('the README\'s two reviews get the README\'s patches');

  // SIGTERM, as the kubelet stops the pod: drains and exits 0, and the log says so to its last line.
  const stopAt = Date.now();
  podman(['kill', '--signal', 'TERM', name]);
  const exit = podman(['wait', name]).stdout.trim();
  const stopSeconds = (Date.now() - stopAt) / 1000;
  const logs = podman(['logs', name]);
  const lines = `${logs.stdout}${logs.stderr}`.split('\n').filter(Boolean);
  assert.equal(exit, '0', `exit status after SIGTERM:\n${lines.join('\n')}`);
  assert.ok(stopSeconds < 20, `stopped in ${stopSeconds} s`);
  assert.ok(lines.some((line) => line.includes('shutting down')), `logs 'shutting down':\n${lines.join('\n')}`);
  assert.match(lines.at(-1) ?? '', /"msg":"stopped"/, 'the last log line is `stopped`');
  say(`SIGTERM: drained, exit 0 in ${stopSeconds.toFixed(1)} s`);
}

try {
  check();
} finally {
  spawnSync('podman', ['rm', '-f', '-t', '0', name], { stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
}
