// Credentials that follow their files and the API's 401s, against the test API server's bearer-token check.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { readKubeConfig, ReloadingKubeConfig, TOKEN_FILE_PROVIDER, TokenFiles } from '../../src/kube/reloading-config.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const dirs: string[] = [];
after(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); });
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-creds-'));
  dirs.push(dir);
  return dir;
}

function kubeconfigText(server: string, user: Record<string, string>): string {
  return stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  });
}

/** Writes as an editor or `kubectl config` does: a new file renamed over the old one. */
function replaceFile(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

function reloading(file: string, logger = recordingLogger().logger, now?: () => number): ReloadingKubeConfig {
  return new ReloadingKubeConfig({
    load: () => {
      const config = readKubeConfig(file, {});
      if (config === undefined) throw new Error('no config');
      return config;
    },
    origin: file, files: [file], logger, pollIntervalMs: 60_000, ...(now === undefined ? {} : { now }),
  });
}

const FCCS = { group: 'networking.liqo.io', version: 'v1beta1', plural: 'foreignclusterconnections' } as const;

/** A kubeconfig with a bearer token for `server`, its reloading config, and an API client made from it. */
function tokenClient(server: KubeApiServer, token: string): { file: string; config: ReloadingKubeConfig; api: CustomObjectsApi } {
  const file = join(tempDir(), 'kubeconfig');
  writeFileSync(file, kubeconfigText(server.url, { token }));
  const config = reloading(file);
  return { file, config, api: config.makeApiClient(CustomObjectsApi) };
}

async function withServer(token: string, run: (server: KubeApiServer) => Promise<void>): Promise<void> {
  const server = await startKubeApiServer({ token });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

test('tokenFile (kubectl\'s key) and token-file are read from the file, relative to the kubeconfig, not kept inline', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'token'), 'from-file\n');
  const file = join(dir, 'kubeconfig');
  for (const key of ['tokenFile', 'token-file']) {
    writeFileSync(file, kubeconfigText('https://hub.example:6443', { [key]: 'token', token: 'inline' }));
    const user = readKubeConfig(file, {})?.getCurrentUser();
    assert.equal(user?.token, undefined, `${key}: the file wins over the inline token`);
    assert.deepEqual(user?.authProvider, { name: TOKEN_FILE_PROVIDER, config: { path: join(dir, 'token'), token: 'inline' } });
  }
});

test('a token file is read again once a minute old, at once after invalidate(), and a failed read keeps the last token', () => {
  const dir = tempDir();
  const path = join(dir, 'token');
  let now = 0;
  const tokens = new TokenFiles(() => now);
  writeFileSync(path, 'one\n');
  assert.equal(tokens.token(path), 'one');
  writeFileSync(path, 'two');
  now = 59_999;
  assert.equal(tokens.token(path), 'one', 'cached for a minute, as client-go does');
  now = 60_000;
  assert.equal(tokens.token(path), 'two');
  writeFileSync(path, 'three');
  tokens.invalidate();
  assert.equal(tokens.token(path), 'three', 'a 401 makes the next request read the file');
  rmSync(path);
  tokens.invalidate();
  assert.equal(tokens.token(path), 'three', 'a token file being swapped is not a reason to send no token');
});

test('a rewritten kubeconfig is adopted once; an unchanged one is not a reload; a broken one keeps the last good one and says why once', async () => {
  const dir = tempDir();
  const file = join(dir, 'kubeconfig');
  writeFileSync(file, kubeconfigText('https://hub.example:6443', { token: 'old' }));
  const { logger, records } = recordingLogger();
  const config = reloading(file, logger);
  const reasons: string[] = [];
  config.onReload((reason) => reasons.push(reason));

  await config.reload('test');
  assert.deepEqual(reasons, [], 'the same contents are no reload');
  replaceFile(file, kubeconfigText('https://hub.example:6443', { token: 'new' }));
  await config.reload('test');
  assert.deepEqual(reasons, ['test']);
  assert.equal(config.getCurrentUser()?.token, 'new');
  assert.equal(config.status().reloads, 1);

  replaceFile(file, 'users: [');
  await config.reload('test');
  await config.reload('test');
  assert.equal(config.getCurrentUser()?.token, 'new', 'the last good credentials stay');
  assert.match(config.status().reloadProblem ?? '', /./);
  assert.equal(records.filter((r) => r.msg === 'kubeconfig not reloaded, keeping the last good one').length, 1);
  replaceFile(file, kubeconfigText('https://hub.example:6443', { token: 'newer' }));
  await config.reload('test');
  assert.equal(config.status().reloadProblem, null);
  assert.equal(records.filter((r) => r.msg === 'credentials reloaded').length, 2);
});

test('a Secret volume\'s ..data symlink swap is noticed without being asked', async () => {
  const volume = join(tempDir(), 'hub');
  mkdirSync(volume);
  const version = (name: string, token: string) => {
    mkdirSync(join(volume, `..${name}`));
    writeFileSync(join(volume, `..${name}`, 'kubeconfig'), kubeconfigText('https://hub.example:6443', { token }));
    symlinkSync(`..${name}`, join(volume, '..data_tmp'));
    renameSync(join(volume, '..data_tmp'), join(volume, '..data'));
  };
  version('v1', 'first');
  symlinkSync('..data/kubeconfig', join(volume, 'kubeconfig'));
  const config = reloading(join(volume, 'kubeconfig'));
  config.watch();
  try {
    version('v2', 'second');
    await waitFor(() => config.getCurrentUser()?.token === 'second', { description: 'the swapped kubeconfig is read' });
  } finally {
    config.close();
  }
});

test('an API client made before a rotation uses the new credentials: a 401 re-reads the kubeconfig and the next call passes', async () => {
  await withServer('old', async (server) => {
    const { file, config, api } = tokenClient(server, 'old');
    await api.listClusterCustomObject(FCCS);
    // The operator writes the new token, the old one is revoked; no file event reaches us (polling is a minute away).
    writeFileSync(file, kubeconfigText(server.url, { token: 'new' }));
    server.setToken('new');
    await assert.rejects(api.listClusterCustomObject(FCCS), (error: { code?: number }) => error.code === 401);
    await waitFor(() => config.status().reloads === 1, { description: 'the 401 made it read the kubeconfig again' });
    assert.equal(config.status().refused?.status, 401);
    await api.listClusterCustomObject(FCCS);
    assert.equal(config.status().refused, null, 'an accepted call ends the refusal');
  });
});

test('a token file rotated under a running client is sent after a 401, without waiting out the minute', async () => {
  await withServer('old', async (server) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'token'), 'old');
    const file = join(dir, 'kubeconfig');
    writeFileSync(file, kubeconfigText(server.url, { tokenFile: 'token' }));
    const config = reloading(file, undefined, () => 0);
    const api = config.makeApiClient(CustomObjectsApi);
    await api.listClusterCustomObject(FCCS);
    writeFileSync(join(dir, 'token'), 'new');
    server.setToken('new');
    await assert.rejects(api.listClusterCustomObject(FCCS));
    await api.listClusterCustomObject(FCCS);
    assert.equal(config.status().reloads, 0, 'the kubeconfig itself did not change');
  });
});

test('a change of server in the kubeconfig moves clients made before it', async () => {
  await withServer('t', async (first) => {
    await withServer('t', async (second) => {
      const file = join(tempDir(), 'kubeconfig');
      writeFileSync(file, kubeconfigText(first.url, { token: 't' }));
      const config = reloading(file);
      const api = config.makeApiClient(CustomObjectsApi);
      await api.listClusterCustomObject(FCCS);
      replaceFile(file, kubeconfigText(second.url, { token: 't' }));
      await config.reload('test');
      await api.listClusterCustomObject(FCCS);
      assert.equal(second.requests.length, 1);
    });
  });
});

test('a refusal is said once per outage, whoever reports it, and its end once', async () => {
  const file = join(tempDir(), 'kubeconfig');
  writeFileSync(file, kubeconfigText('https://hub.example:6443', { token: 't' }));
  const { logger, records } = recordingLogger();
  const config = reloading(file, logger);
  // A list through an API client: the client's middleware and the list's owner both report the same 401, each retry.
  for (let retry = 0; retry < 3; retry++) {
    config.refused(401, 'an API call');
    config.refused(401, 'list foreignclusterconnections');
  }
  await config.reload('settle');
  assert.equal(records.filter((r) => r.msg === 'the API server refuses these credentials (401): reading them again').length, 1);
  assert.equal(config.status().refused?.during, 'list foreignclusterconnections');
  config.accepted();
  config.accepted();
  assert.equal(records.filter((r) => r.msg === 'the API server accepts the credentials again').length, 1);
  assert.equal(config.status().refused, null);
});

test('API calls share one kept-alive connection, a rotated token included: the Lease\'s renewals do not open a TLS connection each', async () => {
  await withServer('old', async (server) => {
    const { file, config, api } = tokenClient(server, 'old');
    for (let i = 0; i < 5; i++) await api.listClusterCustomObject(FCCS);
    assert.equal(server.connectionsAccepted(), 1, 'five calls, one connection');
    // A token is a header of each request: rotated, it is sent on the same connection.
    replaceFile(file, kubeconfigText(server.url, { token: 'new' }));
    server.setToken('new');
    await config.reload('test');
    await api.listClusterCustomObject(FCCS);
    assert.equal(server.connectionsAccepted(), 1);
    config.close();
  });
});
