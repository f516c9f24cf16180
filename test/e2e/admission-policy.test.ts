// manifests/hardening/admission-policy.yaml on a real kube-apiserver: the product's own ServiceAccount (a token the API
// server issues for it, with the shipped RBAC) may write what the webhook and its controller write, the addresses of
// reflected objects and the product's annotations, and nothing else, should its token be stolen.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { waitFor } from '../support/wait-for.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { KubeClient, type KubeObject } from './support/kube-client.ts';
import { installCrds, liqoCrds, shadowSlice } from './support/liqo.ts';
import { pathOf, shippedManifests } from './support/objects.ts';
import { skipReason } from './support/skip.ts';

const REFLECTED = { 'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io', 'kubernetes.io/service-name': 'web' };
const JSON_PATCH = { contentType: 'application/json-patch+json' };

function slice(name: string, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, namespace: 'demo', labels, annotations: { 'example.com/owner': 'liqo' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.63.0.151'], conditions: { ready: true }, nodeName: 'cluster1', targetRef: { kind: 'RemotePod', name: 'web-0', namespace: 'demo' } }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

/** The patch the webhook answers for examples/admission-review.json (README): the address moved, its two annotations added. */
const PRODUCT_PATCH = [
  { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' },
  { op: 'add', path: '/metadata/annotations/liqo.io~1shortcut-addresses', value: '10.61.0.151' },
  { op: 'add', path: '/metadata/annotations/liqo.io~1shortcut-original-addresses', value: '{"10.61.0.151":"10.63.0.151"}' },
];

/** A write the policy refuses, by one of its own messages (an evaluation error would say otherwise). */
async function assertDenied(client: KubeClient, path: string, patch: unknown, policy: string): Promise<void> {
  const answer = await client.request('PATCH', path, patch, JSON_PATCH);
  assert.equal(answer.status, 422, answer.text);
  assert.match(answer.text, new RegExp(`ValidatingAdmissionPolicy '${policy}' with binding '[^']+' denied request: shortcut-webhook may`));
}

describe('the admission policy of the product\'s identity', { skip: skipReason(), timeout: 180_000 }, () => {
  let cp: ControlPlane;
  let product: KubeClient;

  before(async () => {
    cp = await startControlPlane();
    const { admin } = cp;
    await installCrds(admin, liqoCrds().filter((crd) => crd.metadata?.name === 'shadowendpointslices.offloading.liqo.io'));
    const identity = shippedManifests().filter((o) => ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(String(o.kind)));
    for (const object of identity) await admin.ok('POST', pathOf(object), object);
    for (const object of shippedManifests('hardening').filter((o) => String(o.kind).startsWith('ValidatingAdmissionPolicy'))) await admin.ok('POST', pathOf(object), object);
    await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } });
    const token = await admin.ok<{ status: { token: string } }>('POST', '/api/v1/namespaces/shortcut-webhook/serviceaccounts/shortcut-webhook/token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    product = new KubeClient(cp.url, cp.ca, { token: token.status.token });
    await admin.ok('POST', pathOf(slice('web-abcde', REFLECTED)), slice('web-abcde', REFLECTED));
    await admin.ok('POST', pathOf(slice('own-abcde', { 'kubernetes.io/service-name': 'own' })), slice('own-abcde', { 'kubernetes.io/service-name': 'own' }));
    const shadow = shadowSlice({ name: 'web-shadow', annotations: { 'liqo.io/direct-connections-data': '{"clusterAddresses":{"cluster3":["10.63.0.151"]}}' } });
    await admin.ok('POST', pathOf(shadow), shadow);
    // A policy is enforced once the API server has compiled it: wait until an out-of-bounds write is refused.
    await waitFor(async () => (await product.request('PATCH', '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices/own-abcde',
      [{ op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' }], JSON_PATCH)).status === 422,
    { timeoutMs: 30_000, description: 'the policy is enforced' });
  });

  after(async () => {
    product?.close();
    await cp?.stop();
  });

  const SLICE = '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices/web-abcde';
  const SHADOW = '/apis/offloading.liqo.io/v1beta1/namespaces/demo/shadowendpointslices/web-shadow';

  test('the product\'s own patch of a reflected EndpointSlice passes: an address moved, its two annotations written, then removed', async () => {
    const patched = await product.ok('PATCH', SLICE, PRODUCT_PATCH, JSON_PATCH);
    assert.deepEqual((patched.endpoints as { addresses: string[] }[])[0]?.addresses, ['10.61.0.151']);
    await product.ok('PATCH', SLICE, [
      { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.63.0.151' },
      { op: 'remove', path: '/metadata/annotations/liqo.io~1shortcut-addresses' },
      { op: 'remove', path: '/metadata/annotations/liqo.io~1shortcut-original-addresses' },
    ], JSON_PATCH);
  });

  for (const [what, patch] of [
    ['a label', [{ op: 'add', path: '/metadata/labels/evil', value: 'x' }]],
    ['another annotation', [{ op: 'replace', path: '/metadata/annotations/example.com~1owner', value: 'me' }]],
    ['a new annotation', [{ op: 'add', path: '/metadata/annotations/example.com~1other', value: 'x' }]],
    ['an endpoint added', [{ op: 'add', path: '/endpoints/-', value: { addresses: ['10.60.0.1'] } }]],
    ['an address added', [{ op: 'add', path: '/endpoints/0/addresses/-', value: '10.60.0.1' }]],
    ['an endpoint\'s node', [{ op: 'replace', path: '/endpoints/0/nodeName', value: 'leaf-node' }]],
    ['an endpoint\'s target', [{ op: 'replace', path: '/endpoints/0/targetRef/name', value: 'db-0' }]],
    ['a condition', [{ op: 'replace', path: '/endpoints/0/conditions/ready', value: false }]],
    ['the ports', [{ op: 'replace', path: '/ports/0/port', value: 22 }]],
  ] as const) {
    test(`the product may not change ${what} of a reflected EndpointSlice`, () => assertDenied(product, SLICE, patch, 'shortcut-webhook-endpointslices'));
  }

  test('the product may not change an EndpointSlice Liqo did not reflect, nor make one reflected', async () => {
    const own = '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices/own-abcde';
    for (const patch of [
      [{ op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' }],
      [{ op: 'add', path: '/metadata/labels/endpointslice.kubernetes.io~1managed-by', value: 'endpointslice.reflection.liqo.io' }],
    ]) {
      const answer = await product.request('PATCH', own, patch, JSON_PATCH);
      assert.equal(answer.status, 422, answer.text);
      assert.match(answer.text, /denied request: shortcut-webhook may change only EndpointSlices reflected by Liqo/);
    }
  });

  test('the product\'s own repair of a reflected ShadowEndpointSlice passes: an address, the data annotation and its two records', async () => {
    await product.ok('PATCH', SHADOW, [
      { op: 'replace', path: '/spec/template/endpoints/0/addresses/0', value: '10.70.0.4' },
      { op: 'replace', path: '/metadata/annotations/liqo.io~1direct-connections-data', value: '{"clusterAddresses":{}}' },
      { op: 'add', path: '/metadata/annotations/liqo.io~1shortcut-shadow-original-addresses', value: '{"10.70.0.4":"10.63.0.151"}' },
      { op: 'add', path: '/metadata/annotations/liqo.io~1shortcut-original-direct-connections-data', value: '{"clusterAddresses":{"cluster3":["10.63.0.151"]}}' },
    ], JSON_PATCH);
  });

  for (const [what, patch] of [
    ['the EndpointSlice route\'s annotation', [{ op: 'add', path: '/metadata/annotations/liqo.io~1shortcut-original-addresses', value: '{}' }]],
    ['an endpoint\'s target', [{ op: 'replace', path: '/spec/template/endpoints/0/targetRef/name', value: 'db-0' }]],
    ['an endpoint added', [{ op: 'add', path: '/spec/template/endpoints/-', value: { addresses: ['10.60.0.1'] } }]],
    ['the ports', [{ op: 'replace', path: '/spec/template/ports/0/port', value: 22 }]],
    ['a label', [{ op: 'add', path: '/metadata/labels/evil', value: 'x' }]],
  ] as const) {
    test(`the product may not change ${what} of a reflected ShadowEndpointSlice`, () => assertDenied(product, SHADOW, patch, 'shortcut-webhook-shadowendpointslices'));
  }

  test('everyone else is not matched: the admin changes what the product may not', async () => {
    await cp.admin.ok('PATCH', SLICE, [{ op: 'add', path: '/metadata/labels/team', value: 'a' }], JSON_PATCH);
  });
});
