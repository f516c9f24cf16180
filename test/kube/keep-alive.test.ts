// The kept-alive pool stands in for the agent client-node makes per request, while the TLS material stays the same.
import assert from 'node:assert/strict';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { test } from 'node:test';
import { KeepAlivePool } from '../../src/kube/keep-alive.ts';

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
