// certs/make-certs.sh and certs/install-secret.sh: the chain openssl accepts for the webhook's Service name, and the
// Secret and caBundle patch the install script sends (to a stand-in kubectl that records its calls).
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { at, listAt, parseManifests, recordAt, stringAt, validateAgainstSchema } from './support/kube.ts';
import { repoPath } from './support/paths.ts';
import { scratchDir } from '../support/scratch.ts';

const work = mkdtempSync(join(tmpdir(), 'shortcut-webhook-certs-'));
after(() => rmSync(work, { recursive: true, force: true }));

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, ...env } });
}

function makeCerts(out: string, namespace: string): void {
  const result = run('bash', [repoPath('certs/make-certs.sh'), '--out', out, '--namespace', namespace]);
  assert.equal(result.status, 0, result.stderr);
}

function verify(caFile: string, certFile: string, hostname: string): SpawnSyncReturns<string> {
  return run('openssl', ['verify', '-CAfile', caFile, '-verify_hostname', hostname, '-purpose', 'sslserver', certFile]);
}

describe('certs/make-certs.sh', () => {
  const out = join(work, 'edge');
  makeCerts(out, 'edge-ns');

  test('makes a CA and a serving certificate that openssl verifies for shortcut-webhook.<ns>.svc', () => {
    const result = verify(join(out, 'ca.crt'), join(out, 'tls.crt'), 'shortcut-webhook.edge-ns.svc');
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /tls\.crt: OK/);
  });

  test('keeps the private keys readable by the owner only', () => {
    for (const key of ['ca.key', 'tls.key']) assert.equal(statSync(join(out, key)).mode & 0o077, 0, key);
  });

  test('the chain is refused for another namespace\'s Service name and by another CA', () => {
    assert.notEqual(verify(join(out, 'ca.crt'), join(out, 'tls.crt'), 'shortcut-webhook.other.svc').status, 0);
    const other = join(work, 'other');
    makeCerts(other, 'edge-ns');
    assert.notEqual(verify(join(other, 'ca.crt'), join(out, 'tls.crt'), 'shortcut-webhook.edge-ns.svc').status, 0);
  });
});

// A kubectl that records every call (one line of arguments, tab-separated) and the manifests piped to `apply -f -`;
// `get` of the webhook configuration answers as if it existed when FAKE_MWC=1.
const fakeKubectl = join(work, 'kubectl');
writeFileSync(fakeKubectl, `#!/usr/bin/env bash
set -euo pipefail
log="$FAKE_DIR/calls"
( IFS=$'\\t'; printf '%s\\n' "$*" ) >> "$log"
args=" $* "
case "$args" in
  *" apply -f - "*) cat > "$FAKE_DIR/applied-$(wc -l < "$log" | tr -d ' ').yaml" ;;
  *" get namespace "*) exit 1 ;;
  *" get mutatingwebhookconfiguration "*)
    [ "\${FAKE_MWC:-0}" = 1 ] || { echo 'NotFound' >&2; exit 1; }
    printf 'endpointslices.shortcut-webhook.liqo.io\\n' ;;
esac
`);
chmodSync(fakeKubectl, 0o755);

interface Installed { readonly status: number | null; readonly stderr: string; readonly calls: string[][]; readonly applied: string[] }

function install(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Installed {
  const dir = join(work, name);
  const result = spawnSync('bash', ['-c', 'mkdir -p "$FAKE_DIR" && : > "$FAKE_DIR/calls" && exec bash "$@"', 'install', repoPath('certs/install-secret.sh'), '--out', join(dir, 'certs'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, KUBECTL: fakeKubectl, FAKE_DIR: dir, ...env },
  });
  const calls = readFileSync(join(dir, 'calls'), 'utf8').split('\n').filter((line) => line !== '').map((line) => line.split('\t'));
  const applied = readdirSync(dir).filter((file) => file.startsWith('applied-')).sort().map((file) => readFileSync(join(dir, file), 'utf8'));
  return { status: result.status, stderr: result.stderr, calls, applied };
}

function base64File(path: string): string {
  return readFileSync(path).toString('base64');
}

describe('certs/install-secret.sh', () => {
  const installed = install('install', ['--namespace', 'leaf-ns', '--context', 'leaf'], { FAKE_MWC: '1' });
  const certs = join(work, 'install', 'certs');

  test('creates the missing namespace and applies a kubernetes.io/tls Secret with the key pair and the CA', () => {
    assert.equal(installed.status, 0, installed.stderr);
    assert.ok(installed.calls.some((call) => call.join(' ') === '--context leaf create namespace leaf-ns'));
    assert.equal(installed.applied.length, 1);
    const [secret] = parseManifests(installed.applied[0] ?? '', 'applied Secret');
    assert.ok(secret);
    validateAgainstSchema(secret);
    assert.equal(secret.kind, 'Secret');
    assert.equal(secret.metadata.name, 'shortcut-webhook-tls');
    assert.equal(secret.metadata.namespace, 'leaf-ns');
    assert.equal(at(secret, 'type'), 'kubernetes.io/tls');
    const data = recordAt(secret, 'data');
    for (const file of ['tls.crt', 'tls.key', 'ca.crt']) assert.equal(data[file], base64File(join(certs, file)), file);
    assert.ok(!installed.applied[0]?.includes('ca.key'), 'the CA key stays on the machine');
  });

  test('makes the certificate for the namespace it installs into', () => {
    assert.equal(verify(join(certs, 'ca.crt'), join(certs, 'tls.crt'), 'shortcut-webhook.leaf-ns.svc').status, 0);
  });

  test('patches the CA into the caBundle of every webhook of the configuration', () => {
    const patch = installed.calls.find((call) => call.includes('patch'));
    assert.ok(patch, 'a patch call');
    assert.deepEqual(patch.slice(0, 5), ['--context', 'leaf', 'patch', 'mutatingwebhookconfiguration', 'shortcut-webhook']);
    const body: unknown = JSON.parse(patch[patch.indexOf('-p') + 1] ?? '');
    assert.deepEqual(body, [{ op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: base64File(join(certs, 'ca.crt')) }]);
    assert.ok(patch.includes('--type=json'));
  });

  test('passes --context to every kubectl call', () => {
    for (const call of installed.calls) assert.deepEqual(call.slice(0, 2), ['--context', 'leaf']);
  });

  test('without the webhook configuration yet, applies the Secret and says to run again', () => {
    const early = install('early', []);
    assert.equal(early.status, 0, early.stderr);
    assert.equal(early.applied.length, 1);
    assert.ok(!early.calls.some((call) => call.includes('patch')));
    assert.match(early.stderr, /run this script again after 'kubectl apply -f manifests\/'/);
  });

  test('--print-ca-bundle prints the base64 CA and calls no kubectl', () => {
    const dir = join(work, 'install', 'certs');
    const result = run('bash', [repoPath('certs/install-secret.sh'), '--out', dir, '--namespace', 'leaf-ns', '--print-ca-bundle'], { KUBECTL: '/nonexistent/kubectl' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), base64File(join(dir, 'ca.crt')));
  });

  test('rejects an unknown argument with exit code 2', () => {
    assert.equal(run('bash', [repoPath('certs/install-secret.sh'), '--bogus']).status, 2);
  });

  test('the applied Secret is the one the Deployment mounts', () => {
    const [deployment] = parseManifests(readFileSync(repoPath('manifests/05-deployment.yaml'), 'utf8'), 'deployment');
    const volumes = listAt(deployment, 'spec.template.spec.volumes');
    assert.ok(volumes.some((volume) => stringAt(volume, 'name') === 'tls' && at(volume, 'secret.secretName') === 'shortcut-webhook-tls'));
  });
});

describe('certs/make-certs.sh arguments', () => {
  const script = repoPath('certs/make-certs.sh');
  test('--help prints the help and nothing else', () => {
    const result = run('bash', [script, '--help']);
    assert.equal(result.status, 0);
    assert.match(result.stdout, /^Makes a private CA/);
    assert.doesNotMatch(result.stdout, /set -euo|^\s*(if|while|case)\b/m);
    assert.equal(result.stderr, '');
  });

  for (const [args, message] of [
    [['--out'], /--out needs a value/],
    [['--namespace', '--force'], /--namespace needs a value/],
    [['--days', 'soon'], /--days soon: expected a whole number/],
    [['--days', '0'], /--days 0: expected a whole number/],
    [['--namespace', 'Not_A_Label'], /--namespace Not_A_Label: expected a DNS label/],
    [['--service', 'a.b'], /--service a\.b: expected a DNS label/],
    [['--out=/tmp/x'], /write --out=\/tmp\/x as --out \/tmp\/x/],
    [['--bogus'], /unknown argument --bogus/],
  ] as const) {
    test(`${args.join(' ')}: a message and exit 2, nothing made`, () => {
      const out = join(work, `bad-${args.join('-').replace(/\W+/g, '_')}`);
      const result = run('bash', [script, ...args, ...(args[0] === '--out' || String(args[0]).startsWith('--out=') ? [] : ['--out', out])]);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /unbound variable/);
      assert.equal(readdirSync(work).includes(`bad-${args.join('-').replace(/\W+/g, '_')}`), false);
    });
  }

  test('never installs packages: without openssl it says so and stops', () => {
    const bin = scratchDir('shortcut-no-openssl-');
    // Only what the script needs besides openssl, so `command -v openssl` fails.
    for (const tool of ['bash', 'dirname', 'awk', 'sed']) {
      const found = run('bash', ['-c', `command -v ${tool}`]).stdout.trim();
      if (found !== '') writeFileSync(join(bin, tool), `#!/bin/sh\nexec ${found} "$@"\n`, { mode: 0o755 });
    }
    const result = spawnSync(join(bin, 'bash'), [script, '--out', join(work, 'none')], { encoding: 'utf8', env: { PATH: bin } });
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /openssl is required and not installed/);
    assert.doesNotMatch(readFileSync(script, 'utf8'), /apt-get install -y|apt-get update/);
  });
});
