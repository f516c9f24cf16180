// The controller's lean client against the test API server: over real HTTPS (a TLS front that checks the CA, asks for
// a client certificate and passes the bytes on), with the server's bearer-token check, the statuses the pass acts on
// (404, 409, 422, 429 with Retry-After), a body that is not a Status, a rotated token or client certificate, and a
// silent server.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { leanStoredObjects } from '../../src/controller/lean-stored-objects.ts';
import type { StoredObjectRef } from '../../src/controller/stored-objects.ts';
import { describeError, httpStatus, retryAfterHeader } from '../../src/kube/client.ts';
import { readKubeConfig, ReloadingKubeConfig } from '../../src/kube/reloading-config.ts';
import { sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const dirs: string[] = [];
after(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); });
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-lean-'));
  dirs.push(dir);
  return dir;
}

const TOKEN = 'lean-token';
const SLICES = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices' } as const;
const ref = (name: string): StoredObjectRef => ({ ...SLICES, namespace: 'demo', name });

/** A certificate for client authentication named `name`, signed by the client CA in `dir` (the serving certificate is serverAuth only). */
function signClient(dir: string, name: string): { certFile: string; keyFile: string } {
  const file = (suffix: string) => join(dir, `${name}.${suffix}`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', file('key'), '-out', file('csr'));
  writeFileSync(file('ext'), 'extendedKeyUsage=clientAuth\n');
  openssl('x509', '-req', '-in', file('csr'), '-CA', join(dir, 'client-ca.crt'), '-CAkey', join(dir, 'client-ca.key'), '-CAcreateserial', '-days', '1',
    '-extfile', file('ext'), '-out', file('crt'));
  return { certFile: file('crt'), keyFile: file('key') };
}

/** A client CA in `dir` and a certificate it signed for `shortcut-controller`. */
function clientCertificate(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const caFile = join(dir, 'client-ca.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=client-ca', '-keyout', join(dir, 'client-ca.key'), '-out', caFile],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  return { caFile, ...signClient(dir, 'shortcut-controller') };
}

interface TlsFront {
  readonly url: string;
  /** The common names of the client certificates presented, one a connection. */
  readonly clients: string[];
  /** Every byte the clients sent, as text (the requests' headers included). */
  sent(): string;
  close(): Promise<void>;
}

/** HTTPS in front of the test API server (plain HTTP): a client certificate signed by `clientCa` is required. */
async function tlsFront(server: KubeApiServer, tls: { key: Buffer; cert: Buffer; clientCa: Buffer }): Promise<TlsFront> {
  const target = new URL(server.url);
  const clients: string[] = [];
  let sent = '';
  const sockets = new Set<Socket>();
  const front = createTlsServer({ key: tls.key, cert: tls.cert, ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }, (client: TLSSocket) => {
    clients.push(String(client.getPeerCertificate().subject?.CN));
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    client.on('data', (chunk: Buffer) => { sent += chunk.toString('latin1'); });
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://localhost:${(front.address() as AddressInfo).port}`,
    clients,
    sent: () => sent,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

function kubeconfigFile(dir: string, server: string, cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server, ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  return path;
}

function reloading(file: string, userAgent = 'shortcut-webhook/test'): ReloadingKubeConfig {
  return new ReloadingKubeConfig({
    load: () => {
      const config = readKubeConfig(file, {});
      if (config === undefined) throw new Error('no config');
      return config;
    },
    origin: file, files: [file], logger: recordingLogger().logger, pollIntervalMs: 60_000, userAgent,
  });
}

async function plainConfig(server: KubeApiServer): Promise<KubeConfig> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return config;
}

test('over HTTPS with the kubeconfig\'s CA, client certificate and token: pages listed, an object read, a patch stored with our field manager and user agent', async () => {
  const dir = tempDir();
  const serving = makeCerts(join(dir, 'serving'));
  const client = clientCertificate(dir);
  const server = await startKubeApiServer({ token: TOKEN });
  const front = await tlsFront(server, { key: serving.key, cert: serving.cert, clientCa: readFileSync(client.caFile) });
  for (let i = 0; i < 5; i++) await server.create(sliceObject({ name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`]] }));
  const config = reloading(kubeconfigFile(dir, front.url, { 'certificate-authority': serving.caFile },
    { 'client-certificate': client.certFile, 'client-key': client.keyFile, token: TOKEN }));
  const objects = leanStoredObjects(config);
  try {
    const selector = 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io';
    const first = await objects.listPage({ ...SLICES, labelSelector: selector, limit: 3 });
    assert.equal(first.items.length, 3);
    assert.ok(first.continueToken);
    const second = await objects.listPage({ ...SLICES, labelSelector: selector, limit: 3, continueToken: first.continueToken });
    assert.equal(second.items.length, 2);
    assert.equal(second.continueToken, undefined);

    const stored = server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name: 'web-0' });
    assert.ok(stored);
    const read = await objects.get(ref('web-0'));
    assert.deepEqual(read, JSON.parse(JSON.stringify(stored)));

    await objects.patch(ref('web-0'), [
      { op: 'test', path: '/metadata/resourceVersion', value: stored.metadata?.resourceVersion ?? '' },
      { op: 'add', path: '/metadata/labels/patched', value: 'yes' },
    ]);
    const patched = server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name: 'web-0' });
    assert.equal(patched?.metadata?.labels?.['patched'], 'yes');
    const patch = server.requests.find((r) => r.method === 'PATCH');
    assert.equal(patch?.query.fieldManager, 'shortcut-webhook');
    assert.equal(patch?.contentType, 'application/json-patch+json');
    assert.match(front.sent(), /\r\nuser-agent: shortcut-webhook\/test\r\n/i);

    // Four requests over kept-alive connections, each made with the client certificate.
    assert.ok(front.clients.length >= 1 && front.clients.length <= 2, `${front.clients.length} connections`);
    assert.deepEqual(new Set(front.clients), new Set(['shortcut-controller']));
  } finally {
    objects.close();
    config.close();
    await front.close();
    await server.close();
  }
});

test('a rotated client certificate is presented within a second, on a connection of its own', async () => {
  const dir = tempDir();
  const serving = makeCerts(join(dir, 'serving'));
  const client = clientCertificate(dir);
  // The next certificate from the same client CA, for another name, written over the first's files.
  const next = signClient(dir, 'rotated-controller');
  const server = await startKubeApiServer({ token: TOKEN });
  const front = await tlsFront(server, { key: serving.key, cert: serving.cert, clientCa: readFileSync(client.caFile) });
  await server.create(sliceObject({ name: 'web-0', addresses: [['10.63.0.1']] }));
  const config = reloading(kubeconfigFile(dir, front.url, { 'certificate-authority': serving.caFile },
    { 'client-certificate': client.certFile, 'client-key': client.keyFile, token: TOKEN }));
  const objects = leanStoredObjects(config);
  try {
    assert.ok(await objects.get(ref('web-0')));
    assert.deepEqual(front.clients, ['shortcut-controller']);
    writeFileSync(client.certFile, readFileSync(next.certFile));
    writeFileSync(client.keyFile, readFileSync(next.keyFile));
    // The client keeps the KubeConfig's credentials for a second, then reads the files again.
    await waitFor(async () => (await objects.get(ref('web-0'))) !== undefined && front.clients.at(-1) === 'rotated-controller',
      { timeoutMs: 5000, intervalMs: 100, description: 'a request over a connection made with the new certificate' });
    assert.deepEqual(new Set(front.clients), new Set(['shortcut-controller', 'rotated-controller']));
  } finally {
    objects.close();
    config.close();
    await front.close();
    await server.close();
  }
});

test('a server whose certificate the kubeconfig\'s CA did not sign is refused', async () => {
  const dir = tempDir();
  const serving = makeCerts(join(dir, 'serving'));
  const other = makeCerts(join(dir, 'other'));
  const client = clientCertificate(dir);
  const server = await startKubeApiServer({ token: TOKEN });
  const front = await tlsFront(server, { key: serving.key, cert: serving.cert, clientCa: readFileSync(client.caFile) });
  const config = reloading(kubeconfigFile(dir, front.url, { 'certificate-authority': other.caFile },
    { 'client-certificate': client.certFile, 'client-key': client.keyFile, token: TOKEN }));
  const objects = leanStoredObjects(config);
  try {
    await assert.rejects(objects.get(ref('web-0')), (error: unknown) => httpStatus(error) === undefined && /certificate/i.test(describeError(error)));
    assert.equal(server.requests.length, 0);
  } finally {
    objects.close();
    config.close();
    await front.close();
    await server.close();
  }
});

test('the statuses the pass acts on: 404, 409, 422 (a failed test) and 429 with its Retry-After, each with the Status message', async () => {
  const server = await startKubeApiServer();
  const objects = leanStoredObjects(await plainConfig(server));
  try {
    const slice = await server.create(sliceObject({ name: 'web', addresses: [['10.63.0.1']] }));
    const guard = (version: string) => [{ op: 'test' as const, path: '/metadata/resourceVersion', value: version }];

    const missing = await objects.patch(ref('gone'), guard('1')).then(() => undefined, (error: unknown) => error);
    assert.equal(httpStatus(missing), 404);
    assert.match(describeError(missing), /^HTTP 404: .*"gone" not found/);

    const stale = await objects.patch(ref('web'), guard('0')).then(() => undefined, (error: unknown) => error);
    assert.equal(httpStatus(stale), 422);
    assert.match(describeError(stale), /^HTTP 422: /);

    server.failNext({ method: 'PATCH' }, 409);
    const conflict = await objects.patch(ref('web'), guard(slice.metadata?.resourceVersion ?? '')).then(() => undefined, (error: unknown) => error);
    assert.equal(httpStatus(conflict), 409);
    assert.equal(retryAfterHeader(conflict), undefined);

    server.failNext({ method: 'GET' }, 429, { retryAfterSeconds: 7 });
    const throttled = await objects.get(ref('web')).then(() => undefined, (error: unknown) => error);
    assert.equal(httpStatus(throttled), 429);
    assert.equal(retryAfterHeader(throttled), '7');
    assert.match(describeError(throttled), /^HTTP 429: the server has received too many requests/);

    // After all that, the connection still serves: an error's body was read to its end.
    await objects.patch(ref('web'), guard(slice.metadata?.resourceVersion ?? ''));
  } finally {
    objects.close();
    await server.close();
  }
});

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function configFor(url: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }], currentContext: 'c',
  });
  return config;
}

test('an error whose body is not a Status is described by its first line, and its status still read', async () => {
  const proxy = createHttpServer((_request, response) => {
    response.writeHead(502, { 'Content-Type': 'text/html' });
    response.end('<html>502 Bad Gateway</html>\n<p>upstream gone</p>');
  });
  const objects = leanStoredObjects(configFor(await listening(proxy)));
  try {
    const error = await objects.patch(ref('web'), []).then(() => undefined, (caught: unknown) => caught);
    assert.equal(httpStatus(error), 502);
    assert.equal(describeError(error), 'HTTP 502: <html>502 Bad Gateway</html>');
    const empty = createHttpServer((_request, response) => { response.writeHead(503); response.end(); });
    const second = leanStoredObjects(configFor(await listening(empty)));
    try {
      assert.equal(describeError(await second.get(ref('web')).then(() => undefined, (caught: unknown) => caught)), 'HTTP 503: HTTP 503');
    } finally {
      second.close();
      empty.close();
    }
  } finally {
    objects.close();
    proxy.close();
  }
});

test('a server that never answers fails the request after the timeout instead of holding the pass', async () => {
  const silent = createHttpServer(() => { /* never answers */ });
  const objects = leanStoredObjects(configFor(await listening(silent)), { timeoutMs: 100 });
  try {
    await assert.rejects(objects.get(ref('web')), /no answer from 127\.0\.0\.1:\d+ within 100 ms/);
  } finally {
    objects.close();
    silent.closeAllConnections();
    silent.close();
  }
});

test('a rotated token file: the 401 makes the config read it again, and the next request is accepted', async () => {
  const dir = tempDir();
  const server = await startKubeApiServer({ token: 'first' });
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'first');
  const config = reloading(kubeconfigFile(dir, server.url, { 'insecure-skip-tls-verify': true }, { tokenFile }));
  const objects = leanStoredObjects(config);
  try {
    await server.create(sliceObject({ name: 'web', addresses: [['10.63.0.1']] }));
    assert.ok(await objects.get(ref('web')));
    server.setToken('second');
    writeFileSync(tokenFile, 'second');
    // The token file is cached for a minute, as client-go caches it: the first request after the rotation is refused.
    const refused = await objects.get(ref('web')).then(() => undefined, (error: unknown) => error);
    assert.equal(httpStatus(refused), 401);
    assert.equal(config.status().refused?.status, 401);
    assert.ok(await objects.get(ref('web')));
    assert.equal(config.status().refused, null);
  } finally {
    objects.close();
    config.close();
    await server.close();
  }
});

/** What a watch handed over, and how it ended (once). */
function watchRecorder() {
  const events: { type: string; name: unknown }[] = [];
  const ends: unknown[] = [];
  let ended: () => void = () => {};
  const done = new Promise<void>((resolve) => { ended = resolve; });
  return {
    events, ends, done,
    onEvent: (type: string, object: unknown) => { events.push({ type, name: (object as { metadata?: { name?: unknown } } | undefined)?.metadata?.name }); },
    onDone: (error: unknown) => { ends.push(error); ended(); },
  };
}

test('a watch stream: each event handed over once, in order, whatever the chunks cut (mid-line, mid-character), blank lines skipped; done once when the server ends it', async () => {
  const lines = [
    { type: 'ADDED', object: { metadata: { name: 'web-é' } } },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } },
    { type: 'MODIFIED', object: { metadata: { name: 'web-2' } } },
    { type: 'DELETED', object: { metadata: { name: 'web-3' } } },
  ].map((event) => JSON.stringify(event));
  const bytes = Buffer.from(`${lines[0]}\n\n${lines[1]}\n${lines[2]}\n${lines[3]}\n`);
  const cut = bytes.indexOf(Buffer.from('é')) + 1; // inside the two bytes of é
  let asked = '';
  const server = createHttpServer((request, response) => {
    asked = request.url ?? '';
    response.writeHead(200, { 'Content-Type': 'application/json' });
    // Each piece flushed on its own turn: the client sees them as separate chunks.
    const pieces = [bytes.subarray(0, cut), bytes.subarray(cut, cut + 40), bytes.subarray(cut + 40)];
    const next = () => {
      const piece = pieces.shift();
      if (piece === undefined) response.end(); else response.write(piece, () => setImmediate(next));
    };
    next();
  });
  const objects = leanStoredObjects(configFor(await listening(server)));
  try {
    const seen = watchRecorder();
    await objects.watch('/apis/discovery.k8s.io/v1/endpointslices', { resourceVersion: '7', allowWatchBookmarks: true, timeoutSeconds: 30, labelSelector: 'a=b' }, seen.onEvent, seen.onDone);
    await seen.done;
    assert.deepEqual(seen.events, [{ type: 'ADDED', name: 'web-é' }, { type: 'BOOKMARK', name: undefined }, { type: 'MODIFIED', name: 'web-2' }, { type: 'DELETED', name: 'web-3' }]);
    assert.deepEqual(seen.ends, [null]);
    const query = new URL(asked, 'http://x').searchParams;
    assert.deepEqual([...query], [['watch', 'true'], ['resourceVersion', '7'], ['allowWatchBookmarks', 'true'], ['timeoutSeconds', '30'], ['labelSelector', 'a=b']]);
  } finally {
    objects.close();
    server.closeAllConnections();
    server.close();
  }
});

test('a watch refused (403, 410) ends once with the status and the Status message, no event; one aborted ends once and hands over nothing after', async () => {
  let holding: import('node:http').ServerResponse | undefined;
  const server = createHttpServer((request, response) => {
    const status = Number(new URL(request.url ?? '', 'http://x').searchParams.get('resourceVersion'));
    if (status >= 400) {
      response.writeHead(status, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ kind: 'Status', status: 'Failure', message: `refused ${status}`, reason: 'Forbidden', code: status }));
      return;
    }
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'first' } } })}\n`);
    holding = response;
  });
  const objects = leanStoredObjects(configFor(await listening(server)));
  const query = (resourceVersion: string) => ({ resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 30 });
  try {
    for (const status of [403, 410]) {
      const seen = watchRecorder();
      await objects.watch('/api/v1/pods', query(String(status)), seen.onEvent, seen.onDone);
      await seen.done;
      assert.deepEqual(seen.events, []);
      assert.equal(seen.ends.length, 1);
      assert.equal(httpStatus(seen.ends[0]), status);
      assert.match(describeError(seen.ends[0]), new RegExp(`refused ${status}`));
    }
    const seen = watchRecorder();
    const stream = await objects.watch('/api/v1/pods', query('1'), seen.onEvent, seen.onDone);
    await waitFor(() => seen.events.length === 1, { description: 'the first event' });
    stream.abort();
    await seen.done;
    // Written after the abort: never handed over.
    holding?.write(`${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'late' } } })}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen.events, [{ type: 'ADDED', name: 'first' }]);
    assert.equal(seen.ends.length, 1);
  } finally {
    objects.close();
    server.closeAllConnections();
    server.close();
  }
});
