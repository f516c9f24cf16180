// Which reviews are for EndpointSlices, and what a refused review is told: the edges of decodeReview and of the
// kind check in reviewEndpointSlice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview, type AdmissionRequest } from '../../src/admission/review.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { fcc, reviewObject, sliceObject, snapshotOf } from '../support/builders.ts';

const snapshot = snapshotOf([fcc()]);

function decoded(body: Json): AdmissionRequest {
  const result = decodeReview(body);
  assert.ok(result.ok, result.ok ? '' : result.message);
  return result.value;
}

function withKind(kind: Json | undefined, object: Json = sliceObject()): JsonObject {
  const body = reviewObject(object);
  const request = { ...(body.request as JsonObject) };
  if (kind === undefined) delete request.kind; else request.kind = kind;
  return { ...body, request };
}

const otherKinds: readonly [string, Json][] = [
  ['another group', { group: 'apps', version: 'v1', kind: 'EndpointSlice' }],
  ['another version', { group: 'discovery.k8s.io', version: 'v1beta1', kind: 'EndpointSlice' }],
  ['another kind', { group: 'discovery.k8s.io', version: 'v1', kind: 'Endpoints' }],
];
for (const [name, kind] of otherKinds) {
  test(`a review of ${name} is skipped, and says what it was`, () => {
    const outcome = reviewEndpointSlice(decoded(withKind(kind)), snapshot);
    assert.ok(outcome.kind === 'skipped');
    assert.equal(outcome.reason, 'not-endpointslice');
    const { group, version, kind: k } = kind as { group: string; version: string; kind: string };
    assert.equal(outcome.detail, `${group}/${version} ${k} is not discovery.k8s.io/v1 EndpointSlice`);
  });
}

test('a review without a kind is read from its object alone: a bare object is then no EndpointSlice', () => {
  const request = decoded(withKind(undefined));
  assert.equal(request.kind, undefined);
  assert.equal(reviewEndpointSlice(request, snapshot).kind, 'patched');
  const { apiVersion: _a, kind: _k, ...bare } = sliceObject();
  assert.equal(reviewEndpointSlice(decoded(withKind(undefined, bare)), snapshot).kind, 'skipped');
});

test('a kind without a version or kind field, or not an object, is no kind; a missing group is the core group', () => {
  assert.equal(decoded(withKind({ group: 'discovery.k8s.io', kind: 'EndpointSlice' })).kind, undefined);
  assert.equal(decoded(withKind({ group: 'discovery.k8s.io', version: 'v1' })).kind, undefined);
  assert.equal(decoded(withKind('EndpointSlice')).kind, undefined);
  assert.deepEqual(decoded(withKind({ version: 'v1', kind: 'Pod' })).kind, { group: '', version: 'v1', kind: 'Pod' });
});

test('other operations are skipped with the operation named', () => {
  const outcome = reviewEndpointSlice(decoded(reviewObject(sliceObject(), { operation: 'DELETE' })), snapshot);
  assert.deepEqual(outcome, { kind: 'skipped', reason: 'operation', detail: 'DELETE is not CREATE or UPDATE' });
});

const refused: readonly [string, Json, string][] = [
  ['no apiVersion', { kind: 'AdmissionReview', request: { uid: 'u', operation: 'CREATE' } },
    'apiVersion must be admission.k8s.io/v1 or admission.k8s.io/v1beta1, got null'],
  ['a numeric apiVersion', { apiVersion: 1, kind: 'AdmissionReview' }, 'apiVersion must be admission.k8s.io/v1 or admission.k8s.io/v1beta1, got 1'],
  ['no kind', { apiVersion: 'admission.k8s.io/v1', request: {} }, 'kind must be AdmissionReview, got null'],
  ['a wrong kind', { apiVersion: 'admission.k8s.io/v1', kind: 'Pod' }, 'kind must be AdmissionReview, got "Pod"'],
  ['a request that is a list', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: [] }, 'request is missing or not an object'],
  ['no uid', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }, 'request.uid is missing or not a non-empty string'],
  ['a numeric operation', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', operation: 1 } }, 'request.operation is missing or not a string'],
];
for (const [name, body, message] of refused) {
  test(`a review with ${name} is refused with exactly this message: ${message}`, () => {
    const result = decodeReview(body);
    assert.ok(!result.ok);
    assert.equal(result.message, message);
  });
}

test('a decoded request keeps the version, uid, operation and object as sent', () => {
  const request = decoded(reviewObject(sliceObject(), { apiVersion: 'admission.k8s.io/v1beta1', uid: 'u-1', operation: 'UPDATE' }));
  assert.deepEqual([request.apiVersion, request.uid, request.operation, request.dryRun], ['admission.k8s.io/v1beta1', 'u-1', 'UPDATE', false]);
  assert.deepEqual(request.object, sliceObject());
  assert.deepEqual(request.kind, { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' });
});
