// POST /mutate/shadowendpointslices over real HTTPS: the same straight line and error policy as EndpointSlices.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import jsonpatch from 'fast-json-patch';
import { buildWebhookApp } from '../../src/app.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { loadTlsMaterial } from '../../src/tls.ts';
import { SnapshotStore, type ShortcutView } from '../../src/view/shortcut-view.ts';
import { reviewObject, shadowObject } from '../support/builders.ts';
import { directWorldParts } from '../support/direct-world.ts';
import { post1 } from '../support/https-client.ts';
import { startHarness } from '../support/webhook-harness.ts';

const PATH = '/mutate/shadowendpointslices';

const shadow = shadowObject({
  endpoints: [{ addresses: ['10.200.0.9'], pod: 'web-h' }, { addresses: ['10.203.0.5'], pod: 'web-0' }],
  data: { clusterAddresses: { cluster3: ['10.203.0.5'] } },
});

function shadowReview(object: Json, options: { operation?: string; uid?: string; apiVersion?: string; oldObject?: Json } = {}): JsonObject {
  const review = reviewObject(object, options);
  const request = review.request as JsonObject;
  return {
    ...review,
    request: {
      ...request,
      kind: { group: 'offloading.liqo.io', version: 'v1beta1', kind: 'ShadowEndpointSlice' },
      resource: { group: 'offloading.liqo.io', version: 'v1beta1', resource: 'shadowendpointslices' },
      requestKind: { group: 'offloading.liqo.io', version: 'v1beta1', kind: 'ShadowEndpointSlice' },
      requestResource: { group: 'offloading.liqo.io', version: 'v1beta1', resource: 'shadowendpointslices' },
      userInfo: { username: 'system:serviceaccount:liqo-tenant-cluster2:virtual-kubelet-cluster1' },
    },
  };
}

interface Answer { readonly response: { uid: string; allowed: boolean; patchType?: string; patch?: string } }

test('a shadow the hub remapped is answered with a patch that moves the address back; the metrics say so by resource', async () => {
  const harness = await startHarness();
  try {
    harness.store.publish(directWorldParts());
    const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(shadowReview(shadow, { uid: 'u-1' })), { path: PATH });
    assert.equal(answer.status, 200);
    const body = JSON.parse(answer.body) as Answer;
    assert.equal(body.response.uid, 'u-1');
    assert.equal(body.response.allowed, true);
    assert.equal(body.response.patchType, 'JSONPatch');
    const patch = JSON.parse(Buffer.from(body.response.patch ?? '', 'base64').toString()) as jsonpatch.Operation[];
    const patched = jsonpatch.applyPatch(structuredClone(shadow), patch, true, false).newDocument as JsonObject;
    const template = (patched.spec as { template: { endpoints: { addresses: string[] }[] } }).template;
    assert.deepEqual(template.endpoints.map((e) => e.addresses), [['10.200.0.9'], ['10.200.0.5']]);
    const text = await harness.metrics.registry.metrics();
    assert.match(text, /admission_requests_total\{operation="CREATE",result="patched",resource="shadowendpointslices"\} 1/);
    assert.match(text, /admission_requests_total\{operation="CREATE",result="patched",resource="endpointslices"\} 0/);
    assert.match(text, /shortcut_webhook_shadow_addresses_total\{outcome="repaired"\} 1/);
    assert.ok(harness.logs.some((line) => line.includes('"msg":"shadow patched"') && line.includes('"shadow":"demo/web-abcde"')));
  } finally {
    await harness.close();
  }
});

test('v1beta1 reviews are answered in kind; the repaired shadow sent again is allowed without a patch', async () => {
  const harness = await startHarness();
  try {
    harness.store.publish(directWorldParts());
    const first = JSON.parse((await post1(harness.url, harness.certs.ca, JSON.stringify(shadowReview(shadow, { apiVersion: 'admission.k8s.io/v1beta1' })), { path: PATH })).body) as Answer & { apiVersion: string };
    assert.equal(first.apiVersion, 'admission.k8s.io/v1beta1');
    const patch = JSON.parse(Buffer.from(first.response.patch ?? '', 'base64').toString()) as jsonpatch.Operation[];
    const repaired = jsonpatch.applyPatch(structuredClone(shadow), patch, true, false).newDocument;
    const again = JSON.parse((await post1(harness.url, harness.certs.ca, JSON.stringify(shadowReview(repaired, { operation: 'UPDATE', oldObject: repaired })), { path: PATH })).body) as Answer;
    assert.deepEqual(again.response, { uid: '705ab4f5-6393-11e8-b7cc-42010a800002', allowed: true });
    assert.match(await harness.metrics.registry.metrics(), /admission_requests_total\{operation="UPDATE",result="unchanged",resource="shadowendpointslices"\} 1/);
  } finally {
    await harness.close();
  }
});

test('a malformed data annotation, an EndpointSlice sent to the shadow route and an unsynced view are allowed without a patch', async () => {
  const harness = await startHarness({ synced: false });
  try {
    const unsynced = JSON.parse((await post1(harness.url, harness.certs.ca, JSON.stringify(shadowReview(shadow)), { path: PATH })).body) as Answer;
    assert.equal(unsynced.response.patch, undefined);
    harness.store.publish(directWorldParts());
    const malformed = shadowObject({ endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }], data: '{"clusterAddresses":[1,2]}' });
    for (const review of [shadowReview(malformed), reviewObject(shadow)]) {
      const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(review), { path: PATH });
      assert.equal(answer.status, 200);
      assert.equal((JSON.parse(answer.body) as Answer).response.patch, undefined);
    }
    const text = await harness.metrics.registry.metrics();
    assert.match(text, /admission_requests_total\{operation="CREATE",result="unchanged",resource="shadowendpointslices"\} 1/);
    assert.match(text, /admission_requests_total\{operation="CREATE",result="skipped",resource="shadowendpointslices"\} 2/);
  } finally {
    await harness.close();
  }
});

test('a shadow whose addresses are all direct is answered without a patch, and still counted in shadow_addresses_total on /metrics', async () => {
  const harness = await startHarness();
  try {
    harness.store.publish(directWorldParts());
    // 10.200.0.5 and .6 lie in what the leaf declares for cluster3: Liqo maps them itself, nothing to repair.
    const direct = shadowObject({
      endpoints: [{ addresses: ['10.200.0.5'], pod: 'web-0' }, { addresses: ['10.200.0.6'], pod: 'web-1' }],
      data: { clusterAddresses: { cluster3: ['10.200.0.5', '10.200.0.6'] } },
    });
    const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(shadowReview(direct, { uid: 'u-direct' })), { path: PATH });
    assert.deepEqual((JSON.parse(answer.body) as Answer).response, { uid: 'u-direct', allowed: true });
    const text = await (await fetch(`${harness.opsUrl}/metrics`)).text();
    const sample = (series: string) => text.split('\n').find((line) => line.startsWith(`shortcut_webhook_${series} `));
    assert.equal(sample('admission_requests_total{operation="CREATE",result="unchanged",resource="shadowendpointslices"}')?.split(' ')[1], '1');
    assert.deepEqual(['direct', 'repaired', 'hub-path', 'unresolved'].map((outcome) => sample(`shadow_addresses_total{outcome="${outcome}"}`)?.split(' ')[1]),
      ['2', '0', '0', '0']);
  } finally {
    await harness.close();
  }
});

test('bad bodies on the shadow route get 400 and 415, counted for that route', async () => {
  const harness = await startHarness();
  try {
    assert.equal((await post1(harness.url, harness.certs.ca, '{"apiVersion":', { path: PATH })).status, 400);
    assert.equal((await post1(harness.url, harness.certs.ca, JSON.stringify({ kind: 'AdmissionReview' }), { path: PATH })).status, 400);
    assert.equal((await post1(harness.url, harness.certs.ca, '{}', { path: PATH, contentType: 'text/plain' })).status, 415);
    assert.match(await harness.metrics.registry.metrics(), /admission_requests_total\{operation="unknown",result="error",resource="shadowendpointslices"\} 3/);
  } finally {
    await harness.close();
  }
});

test('an internal error on the shadow route is answered allowed without a patch, logged and counted', async () => {
  const { makeCerts } = await import('../support/certs.ts');
  const certs = makeCerts();
  const logs: string[] = [];
  const logger = createLogger('info', new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
  const metrics = new Metrics();
  const healthy = new SnapshotStore();
  const broken: ShortcutView = { ...healthy, isSynced: () => true, isLapsed: () => false, lastSync: () => 0, subscribe: () => () => {},
    current: () => { throw new Error('view exploded'); } };
  const app = buildWebhookApp({ view: broken, metrics, logger, clusterId: undefined, tls: await loadTlsMaterial({ cert: certs.certFile, key: certs.keyFile }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const address = app.addresses()[0];
    const url = `https://localhost:${typeof address === 'object' ? address.port : 0}`;
    const answer = await post1(url, certs.ca, JSON.stringify(shadowReview(shadow, { uid: 'boom' })), { path: PATH });
    assert.equal(answer.status, 200);
    assert.deepEqual((JSON.parse(answer.body) as Answer).response, { uid: 'boom', allowed: true });
    assert.match(await metrics.registry.metrics(), /admission_requests_total\{operation="CREATE",result="error",resource="shadowendpointslices"\} 1/);
    assert.ok(logs.some((line) => line.includes('view exploded') && line.includes('"shadow":"demo/web-abcde"')));
  } finally {
    await app.close();
  }
});

test('/debug/pairs shows per peer what Liqo\'s direct connections get', async () => {
  const harness = await startHarness({ clusterId: 'cluster2' });
  try {
    harness.store.publish(directWorldParts({ tunnels: { cluster3: ['Connected'], cluster4: ['Error'] } }));
    const body = await (await fetch(`${harness.opsUrl}/debug/pairs`)).json() as { hub: { directConnections: { peer: string; state: string; reason: string | null }[] } };
    assert.deepEqual(body.hub.directConnections.map(({ peer, state, reason }) => ({ peer, state, reason })), [
      { peer: 'cluster3', state: 'repaired', reason: null },
      { peer: 'cluster4', state: 'hub-path', reason: 'tunnel-down' },
    ]);
  } finally {
    await harness.close();
  }
});
