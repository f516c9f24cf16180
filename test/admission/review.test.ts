import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admissionResponse, Outcome } from '../../src/admission/responses.ts';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview, type AdmissionRequest } from '../../src/admission/review.ts';
import type { Json } from '../../src/core/json.ts';
import { fcc, reviewObject, sliceObject, snapshotOf } from '../support/builders.ts';

const snapshot = snapshotOf([fcc()]);

function requestOf(body: Json): AdmissionRequest {
  const decoded = decodeReview(body);
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.message);
  return decoded.value;
}

function decodedPatch(body: Json): unknown {
  const request = requestOf(body);
  const response = admissionResponse(request, reviewEndpointSlice(request, snapshot));
  return response.response.patch === undefined ? undefined : JSON.parse(Buffer.from(response.response.patch, 'base64').toString());
}

test('the worked example answers with exactly the two operations of LIQO.md', () => {
  assert.deepEqual(decodedPatch(reviewObject(sliceObject())), [
    { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' },
    { op: 'add', path: '/metadata/annotations', value: {
      'liqo.io/shortcut-addresses': '10.61.0.151',
      'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}',
    } },
  ]);
});

test('keys of an existing annotations map are escaped as JSON pointers', () => {
  const patch = decodedPatch(reviewObject(sliceObject({ annotations: { other: 'x', 'liqo.io/shortcut-addresses': 'old' } })));
  assert.deepEqual(patch, [
    { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.151' },
    { op: 'replace', path: '/metadata/annotations/liqo.io~1shortcut-addresses', value: '10.61.0.151' },
    { op: 'add', path: '/metadata/annotations/liqo.io~1shortcut-original-addresses', value: '{"10.61.0.151":"10.63.0.151"}' },
  ]);
});

test('an unchanged slice is allowed without a patch', () => {
  const request = requestOf(reviewObject(sliceObject({ addresses: [['10.200.0.1']] })));
  const outcome = reviewEndpointSlice(request, snapshot);
  assert.equal(outcome.kind, 'unchanged');
  assert.deepEqual(admissionResponse(request, outcome), {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: true },
  });
});

test('a v1beta1 review is answered in v1beta1 with the same uid', () => {
  const request = requestOf(reviewObject(sliceObject(), { apiVersion: 'admission.k8s.io/v1beta1', uid: 'abc' }));
  const response = admissionResponse(request, reviewEndpointSlice(request, snapshot));
  assert.equal(response.apiVersion, 'admission.k8s.io/v1beta1');
  assert.equal(response.response.uid, 'abc');
  assert.equal(response.response.patchType, 'JSONPatch');
});

for (const operation of ['DELETE', 'CONNECT']) {
  test(`${operation} is allowed unchanged`, () => {
    const outcome = reviewEndpointSlice(requestOf(reviewObject(sliceObject(), { operation })), snapshot);
    assert.equal(outcome.kind, 'skipped');
  });
}

test('UPDATE is rewritten like CREATE', () => {
  const outcome = reviewEndpointSlice(requestOf(reviewObject(sliceObject(), { operation: 'UPDATE', oldObject: sliceObject() })), snapshot);
  assert.equal(outcome.kind, 'patched');
});

test('a review of another kind is skipped even if its object looks like a slice', () => {
  const body = reviewObject(sliceObject());
  const request = { ...requestOf(body), kind: { group: '', version: 'v1', kind: 'Endpoints' } };
  assert.equal(reviewEndpointSlice(request, snapshot).kind, 'skipped');
});

test('a dry-run review is read as one, and answered with the same patch as the real write', () => {
  const dry = requestOf(reviewObject(sliceObject(), { dryRun: true }));
  const real = requestOf(reviewObject(sliceObject()));
  assert.deepEqual([dry.dryRun, real.dryRun], [true, false]);
  const answer = admissionResponse(dry, reviewEndpointSlice(dry, snapshot));
  assert.equal(answer.response.patchType, 'JSONPatch');
  assert.deepEqual(answer, admissionResponse(real, reviewEndpointSlice(real, snapshot)));
});

test('every outcome is allowed, and only patched carries a patch', () => {
  const request = { apiVersion: 'admission.k8s.io/v1', uid: 'u' } as const;
  assert.deepEqual(admissionResponse(request, Outcome.errored(new Error('boom'))).response, { uid: 'u', allowed: true });
  assert.deepEqual(admissionResponse(request, Outcome.skipped('deadline', 'y')).response, { uid: 'u', allowed: true });
});

const malformed: readonly [string, Json, RegExp][] = [
  ['a non-object body', [1, 2], /not a JSON object/],
  ['a wrong apiVersion', { apiVersion: 'v1', kind: 'AdmissionReview', request: { uid: 'u', operation: 'CREATE' } }, /apiVersion/],
  ['a wrong kind', { apiVersion: 'admission.k8s.io/v1', kind: 'Pod', request: { uid: 'u', operation: 'CREATE' } }, /kind/],
  ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, /request/],
  ['an empty uid', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: '', operation: 'CREATE' } }, /uid/],
  ['a numeric uid', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 5, operation: 'CREATE' } }, /uid/],
  ['no operation', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u' } }, /operation/],
];
for (const [name, body, message] of malformed) {
  test(`a review with ${name} is refused with a clear message`, () => {
    const decoded = decodeReview(body);
    assert.ok(!decoded.ok);
    assert.match(decoded.message, message);
  });
}

test('a review without an object is skipped, not a crash', () => {
  const body = reviewObject(null);
  assert.equal(reviewEndpointSlice(requestOf(body), snapshot).kind, 'skipped');
});

test('an object without apiVersion/kind is read as the EndpointSlice the review says it is, and patched in place', () => {
  const { apiVersion: _a, kind: _k, ...bare } = sliceObject();
  const patch = decodedPatch(reviewObject(bare)) as { op: string; path: string }[];
  assert.deepEqual(patch.map((op) => `${op.op} ${op.path}`), ['replace /endpoints/0/addresses/0', 'add /metadata/annotations']);
});
