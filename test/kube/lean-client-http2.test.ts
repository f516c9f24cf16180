// The controller's lean client over HTTP/2, as kube-apiserver offers it: an HTTP/2 front (ALPN h2 only, a client
// certificate required) passes each stream on to the test API server. One session carries every request; the
// statuses the pass acts on keep their Retry-After and message; a session the server sends away, or one that stops
// answering, is replaced by the next request; a new client certificate gets a session of its own while a request on
// the old one finishes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createSecureServer, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { stringify } from 'yaml';
import { leanStoredObjects } from '../../src/controller/lean-stored-objects.ts';
import type { StoredObjectRef, StoredObjects } from '../../src/controller/stored-objects.ts';
import { httpStatus, retryAfterHeader } from '../../src/kube/client.ts';
import { readKubeConfig, ReloadingKubeConfig } from '../../src/kube/reloading-config.ts';
import { sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { scratchDir } from '../support/scratch.ts';
import { waitFor } from '../support/wait-for.ts';

const TOKEN = 'h2-token';
const SLICES = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices' } as const;
const ref = (name: string): StoredObjectRef => ({ ...SLICES, namespace: 'demo', name });
const SELECTOR = 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io';

function clientCertificate(dir: string, name: string, ca: { cert: string; key: string }): { certFile: string; keyFile: string } {
  const file = (suffix: string) => join(dir, `${name}.${suffix}`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', file('key'), '-out', file('csr'));
  writeFileSync(file('ext'), 'extendedKeyUsage=clientAuth\n');
  openssl('x509', '-req', '-in', file('csr'), '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '1', '-extfile', file('ext'), '-out', file('crt'));
  return { certFile: file('crt'), keyFile: file('key') };
}

function clientCa(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'client-ca.crt');
  const key = join(dir, 'client-ca.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=client-ca', '-keyout', key, '-out', cert],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  return { cert, key };
}

interface StreamSeen {
  readonly client: string;
  readonly session: Http2Session;
  readonly headers: IncomingHttpHeaders;
}

interface Http2Front {
  readonly url: string;
  readonly streams: StreamSeen[];
  readonly sessions: Set<Http2Session>;
  /** `silent`: streams are never answered (a dead connection); `hold`: passed on only at release(). */
  mode: 'pass' | 'silent' | 'hold';
  release(): void;
  close(): Promise<void>;
}

/** HTTP/2 only (ALPN h2), a client certificate signed by `clientCa` required; each stream passed on to `server`. */
async function http2Front(server: KubeApiServer, tls: { key: Buffer; cert: Buffer; clientCa: Buffer }): Promise<Http2Front> {
  const target = new URL(server.url);
  const streams: StreamSeen[] = [];
  const sessions = new Set<Http2Session>();
  const held: (() => void)[] = [];
  const front: Http2Front = {
    url: '', streams, sessions, mode: 'pass', close: async () => {},
    release: () => { for (const pass of held.splice(0)) pass(); },
  };
  const secure = createSecureServer({ key: tls.key, cert: tls.cert, ca: tls.clientCa, requestCert: true, rejectUnauthorized: true, allowHTTP1: false });
  secure.on('session', (session) => sessions.add(session));
  secure.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const socket = stream.session?.socket as TLSSocket | undefined;
    streams.push({ client: String(socket?.getPeerCertificate().subject?.CN), session: stream.session as Http2Session, headers });
    stream.on('error', () => {});
    if (front.mode === 'silent') return;
    const pass = () => forward(stream, headers);
    if (front.mode === 'hold') held.push(pass); else pass();
  });
  const forward = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const forwarded = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith(':')));
    const upstream = httpRequest({
      hostname: target.hostname, port: target.port, method: headers[':method'], path: headers[':path'], headers: forwarded,
    }, (answer) => {
      const head: Record<string, string | string[]> = { ':status': String(answer.statusCode ?? 500) };
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !['connection', 'keep-alive', 'transfer-encoding'].includes(name)) head[name] = value;
      }
      stream.respond(head);
      answer.pipe(stream);
    });
    upstream.on('error', () => stream.close());
    stream.pipe(upstream);
  };
  await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
  return Object.assign(front, {
    url: `https://localhost:${(secure.address() as AddressInfo).port}`,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => secure.close(() => resolve()));
    },
  });
}

function reloading(dir: string, server: string, caFile: string, user: Record<string, unknown>): ReloadingKubeConfig {
  const file = join(dir, 'kubeconfig');
  const write = (entries: Record<string, unknown>) => writeFileSync(file, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: 'u', user: entries }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  write(user);
  return new ReloadingKubeConfig({
    load: () => {
      const config = readKubeConfig(file, {});
      if (config === undefined) throw new Error('no config');
      return config;
    },
    origin: file, files: [file], logger: recordingLogger().logger, pollIntervalMs: 60_000, userAgent: 'shortcut-webhook/h2-test',
  });
}

interface World {
  readonly dir: string;
  readonly server: KubeApiServer;
  readonly front: Http2Front;
  readonly ca: { cert: string; key: string };
  readonly caFile: string;
  close(): Promise<void>;
}

async function world(): Promise<World> {
  const dir = scratchDir('shortcut-h2-');
  const serving = makeCerts(join(dir, 'serving'));
  const ca = clientCa(dir);
  const server = await startKubeApiServer({ token: TOKEN });
  const front = await http2Front(server, { key: serving.key, cert: serving.cert, clientCa: readFileSync(ca.cert) });
  return { dir, server, front, ca, caFile: serving.caFile, close: async () => { await front.close(); await server.close(); } };
}

/** A world, and the controller's objects over it with its client certificate and token; all closed after `body`. */
async function withController(body: (w: World, objects: StoredObjects) => Promise<void>, options: { readonly timeoutMs?: number } = {}): Promise<void> {
  const w = await world();
  const client = clientCertificate(w.dir, 'shortcut-controller', w.ca);
  const config = reloading(w.dir, w.front.url, w.caFile, { 'client-certificate': client.certFile, 'client-key': client.keyFile, token: TOKEN });
  const objects = leanStoredObjects(config, options);
  try {
    await body(w, objects);
  } finally {
    objects.close();
    config.close();
    await w.close();
  }
}

test('over HTTP/2 where the server speaks it: every request on one session, with the client certificate, token, user agent and field manager', async () => {
  await withController(async (w, objects) => {
    for (let i = 0; i < 5; i++) await w.server.create(sliceObject({ name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`]] }));
    const first = await objects.listPage({ ...SLICES, labelSelector: SELECTOR, limit: 3 });
    const second = await objects.listPage({ ...SLICES, labelSelector: SELECTOR, limit: 3, continueToken: first.continueToken });
    assert.deepEqual([first.items.length, second.items.length, second.continueToken], [3, 2, undefined]);
    const stored = w.server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name: 'web-0' });
    assert.deepEqual(await objects.get(ref('web-0')), JSON.parse(JSON.stringify(stored)));
    // Five patches at once: multiplexed on the one session, not a connection each.
    await Promise.all(Array.from({ length: 5 }, (_, i) => objects.patch(ref(`web-${i}`), [{ op: 'add', path: '/metadata/labels/patched', value: 'yes' }])));
    for (let i = 0; i < 5; i++) {
      assert.equal(w.server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name: `web-${i}` })?.metadata?.labels?.['patched'], 'yes');
    }
    const patch = w.server.requests.find((r) => r.method === 'PATCH');
    assert.equal(patch?.query.fieldManager, 'shortcut-webhook');
    assert.equal(patch?.contentType, 'application/json-patch+json');
    assert.equal(w.front.streams.length, 8);
    assert.equal(new Set(w.front.streams.map((s) => s.session)).size, 1, 'one session');
    for (const seen of w.front.streams) {
      assert.equal(seen.client, 'shortcut-controller');
      assert.equal(seen.headers['user-agent'], 'shortcut-webhook/h2-test');
      assert.equal(seen.headers['authorization'], `Bearer ${TOKEN}`);
    }
  });
});

test('over HTTP/2, the statuses the pass acts on keep their Retry-After and Status message', async () => {
  await withController(async (w, objects) => {
    const missing = await objects.get(ref('nothing')).then(() => undefined, (error: unknown) => error);
    assert.equal(httpStatus(missing), 404);
    assert.match(String(missing), /not found/);
    w.server.failNext({ method: 'GET' }, 429, { retryAfterSeconds: 7 });
    const throttled = await objects.listPage({ ...SLICES, labelSelector: SELECTOR, limit: 1 }).then(() => undefined, (error: unknown) => error);
    assert.equal(httpStatus(throttled), 429);
    assert.equal(retryAfterHeader(throttled), '7');
    assert.equal((await objects.listPage({ ...SLICES, labelSelector: SELECTOR, limit: 1 })).items.length, 0);
  });
});

test('over HTTP/2, a session the server sends away or that stops answering is replaced by the next request', async () => {
  await withController(async (w, objects) => {
    await w.server.create(sliceObject({ name: 'web', addresses: [['10.63.0.1']] }));
    assert.ok(await objects.get(ref('web')));
    const [firstSession] = w.front.sessions;
    const ended = new Promise((resolve) => firstSession?.once('close', resolve));
    firstSession?.close();
    await ended;
    assert.ok(await objects.get(ref('web')));
    assert.equal(w.front.sessions.size, 2, 'a second session after the GOAWAY');

    w.front.mode = 'silent';
    await assert.rejects(objects.get(ref('web')), /no answer from localhost:\d+ within 300 ms/);
    w.front.mode = 'pass';
    assert.ok(await objects.get(ref('web')));
    assert.equal(w.front.sessions.size, 3, 'the silent session was given up for a new one');
  }, { timeoutMs: 300 });
});

test('over HTTP/2, a rotated client certificate gets a session of its own within a second; a request in flight on the old one finishes', async () => {
  const w = await world();
  const first = clientCertificate(w.dir, 'first-cert', w.ca);
  const second = clientCertificate(w.dir, 'second-cert', w.ca);
  const config = reloading(w.dir, w.front.url, w.caFile, { 'client-certificate': first.certFile, 'client-key': first.keyFile, token: TOKEN });
  const objects = leanStoredObjects(config);
  try {
    await w.server.create(sliceObject({ name: 'web', addresses: [['10.63.0.1']] }));
    w.front.mode = 'hold';
    const inFlight = objects.get(ref('web'));
    await waitFor(() => w.front.streams.length === 1, { timeoutMs: 5000, description: 'the first request reaches the server' });
    w.front.mode = 'pass';
    writeFileSync(join(w.dir, 'first-cert.crt'), readFileSync(second.certFile));
    writeFileSync(join(w.dir, 'first-cert.key'), readFileSync(second.keyFile));
    // The files are read again within a second (the client keeps the KubeConfig's credentials that long).
    await waitFor(async () => (await objects.get(ref('web'))) !== undefined && w.front.streams.at(-1)?.client === 'second-cert',
      { timeoutMs: 5000, intervalMs: 100, description: 'a request with the new certificate' });
    w.front.release();
    assert.ok(await inFlight, 'the request in flight on the old session');
    const byCertificate = new Map(w.front.streams.map((s) => [s.client, s.session]));
    assert.deepEqual([...byCertificate.keys()], ['first-cert', 'second-cert']);
    assert.notEqual(byCertificate.get('first-cert'), byCertificate.get('second-cert'), 'a session for each certificate');
  } finally {
    objects.close();
    config.close();
    await w.close();
  }
});
