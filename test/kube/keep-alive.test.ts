// The kept-alive pool stands in for the agent client-node makes per request, while the TLS material stays the same.
import assert from 'node:assert/strict';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, createServer, get as httpsGet } from 'node:https';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { KeepAlivePool, type RequestAgent } from '../../src/kube/keep-alive.ts';
import { makeCerts } from '../support/certs.ts';

test('agents made with the same TLS material get one kept-alive agent; another client certificate or CA gets a new one', () => {
  const pool = new KeepAlivePool();
  const material = { ca: Buffer.from('ca-1'), cert: Buffer.from('cert-1'), key: Buffer.from('key-1') };
  const first = pool.agentFor(new HttpsAgent({ ...material }));
  assert.ok(first instanceof HttpsAgent);
  assert.equal((first as HttpsAgent & { keepAlive: boolean }).keepAlive, true);
  assert.equal(pool.agentFor(new HttpsAgent({ ...material, ca: Buffer.from('ca-1') })), first, 'equal bytes, another Buffer: the same pool');
  const rotated = pool.agentFor(new HttpsAgent({ ...material, cert: Buffer.from('cert-2'), key: Buffer.from('key-2') }));
  assert.notEqual(rotated, first, 'a rotated client certificate connects anew');
  assert.equal((rotated as HttpsAgent).options.cert?.toString(), 'cert-2');
  assert.notEqual(pool.agentFor(new HttpsAgent({ ...material, ca: [Buffer.from('ca-2')], cert: Buffer.from('cert-2'), key: Buffer.from('key-2') })), rotated, 'another CA too');
  assert.notEqual(pool.agentFor(new HttpsAgent({ ...material, rejectUnauthorized: false })), first, 'and verification turned off');
  pool.destroy();
});

test('a proxy\'s agent (not a plain http or https Agent) is used as it is; plain http gets a kept-alive agent', () => {
  class ProxyAgent extends HttpsAgent {}
  const pool = new KeepAlivePool();
  const proxy = new ProxyAgent();
  assert.equal(pool.agentFor(proxy), proxy);
  const plain = pool.agentFor(new HttpAgent());
  assert.equal((plain as HttpAgent & { keepAlive: boolean }).keepAlive, true);
  assert.equal(pool.agentFor(new HttpAgent()), plain);
  pool.destroy();
});

test('an agent already kept alive (another pool\'s, as the reloading kubeconfig hands out) is used as it is: one pool of connections, not two', () => {
  const outer = new KeepAlivePool();
  const inner = new KeepAlivePool();
  const kept = inner.agentFor(new HttpsAgent({ cert: Buffer.from('cert-1') }));
  assert.equal(outer.agentFor(kept), kept);
  inner.destroy();
  outer.destroy();
});

test('a request in flight on a pool replaced meanwhile (a rotated client certificate or CA) finishes; the next request takes the new pool', async (t) => {
  const certs = makeCerts();
  let arrived = () => {};
  const reached = new Promise<void>((resolve) => { arrived = resolve; });
  let release = () => {};
  const released = new Promise<void>((resolve) => { release = resolve; });
  const server = createServer({ cert: certs.cert, key: certs.key }, (request, response) => {
    if (request.url === '/slow') {
      arrived();
      void released.then(() => response.end('slow answer'));
    } else response.end('fast answer');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pool = new KeepAlivePool();
  t.after(() => { pool.destroy(); server.close(); });
  const port = (server.address() as AddressInfo).port;
  const get = (path: string, agent: RequestAgent) => new Promise<string>((resolve, reject) => {
    const request = httpsGet({ host: '127.0.0.1', port, path, servername: 'localhost', agent: agent as HttpsAgent }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => resolve(body)).on('error', reject);
    });
    request.on('error', reject);
  });
  const old = pool.agentFor(new HttpsAgent({ ca: certs.ca }));
  const inFlight = get('/slow', old);
  await reached;
  // The CA bundle rotated (the same CA, read again with a second certificate in the bundle): another pool.
  const replaced = pool.agentFor(new HttpsAgent({ ca: [certs.ca, certs.ca] }));
  assert.notEqual(replaced, old);
  assert.equal(await get('/fast', replaced), 'fast answer');
  release();
  assert.equal(await inFlight, 'slow answer', 'the request sent on the old pool is answered, not cut');
});
