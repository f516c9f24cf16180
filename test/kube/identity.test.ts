// Every request to an API server names the product: User-Agent shortcut-webhook/<version>, and each write a
// fieldManager of shortcut-webhook (the API server's audit log and managedFields said node-fetch before).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CoordinationV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { FIELD_MANAGER, loadKubeAccess } from '../../src/kube/client.ts';
import { buildInfo, userAgent } from '../../src/version.ts';
import { scratchDir } from '../support/scratch.ts';

interface Seen { readonly method: string; readonly url: URL; readonly headers: IncomingHttpHeaders }

test('API calls, writes and watches carry the product\'s User-Agent, and writes its fieldManager', async () => {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    seen.push({ method: request.method ?? '', url: new URL(request.url ?? '/', 'http://x'), headers: request.headers });
    request.resume();
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(request.url?.includes('watch=true') ? '' : '{"kind":"Status","metadata":{}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  const dir = scratchDir('shortcut-identity-');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'test',
    clusters: [{ name: 'test', cluster: { server: `http://127.0.0.1:${address.port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'test', user: { token: 'secret' } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
  }));
  try {
    const access = loadKubeAccess(kubeconfig, {}, userAgent());
    assert.ok(access);
    const objects = access.config.makeApiClient(CustomObjectsApi);
    await objects.listClusterCustomObject({ group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices' });
    await objects.patchNamespacedCustomObject({ group: 'discovery.k8s.io', version: 'v1', namespace: 'demo', plural: 'endpointslices', name: 'web', body: [] });
    // A write that names its own field manager keeps it.
    await objects.patchNamespacedCustomObject({ group: 'discovery.k8s.io', version: 'v1', namespace: 'demo', plural: 'endpointslices', name: 'web', body: [], fieldManager: 'other' });
    await access.config.makeApiClient(CoordinationV1Api).createNamespacedLease({ namespace: 'demo', body: { metadata: { name: 'lease' } } });
    await new Promise<void>((resolve, reject) => {
      void new Watch(access.config).watch('/apis/discovery.k8s.io/v1/endpointslices', {}, () => {}, (error) => (error ? reject(error) : resolve()));
    });
    assert.equal(seen.length, 5);
    for (const request of seen) {
      assert.equal(request.headers['user-agent'], `shortcut-webhook/${buildInfo().version}`, `${request.method} ${request.url}`);
      assert.equal(request.headers.authorization, 'Bearer secret');
    }
    assert.deepEqual(seen.map((request) => [request.method, request.url.searchParams.get('fieldManager')]),
      [['GET', null], ['PATCH', FIELD_MANAGER], ['PATCH', 'other'], ['POST', FIELD_MANAGER], ['GET', null]]);
  } finally {
    server.close();
  }
});

test('the User-Agent is the package\'s name and version', () => {
  assert.match(userAgent(), /^shortcut-webhook\/\d+\.\d+\.\d+/);
});
