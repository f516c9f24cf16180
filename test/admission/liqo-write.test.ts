// A write by Liqo's own EndpointSlice writer carries every address as Liqo computes it now: nothing of it is restored
// from the originals annotation the stored slice keeps. Liqo sends one of our outputs itself when a Service flips to
// its direct connections; restoring it would turn it back into a hub address that may since name another pod.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyRewrite } from '../../src/core/rewrite.ts';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview } from '../../src/admission/review.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { fcc, reviewObject, sliceObject, snapshotOf } from '../support/builders.ts';

/** Stored rewritten: 10.63.0.151 (the hub's view) moved into the shortcut's 10.61.0.151, the original recorded. */
const stored = sliceObject({
  addresses: [['10.61.0.151']],
  annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' },
});

/** The slice as the reviewed write leaves it; `manager` is the write's field manager (UpdateOptions, as a patch's). */
function reviewed(object: Json, snapshot: Snapshot, manager: string | undefined): { addresses: unknown; annotations: unknown } {
  const body = reviewObject(object, { operation: 'UPDATE', oldObject: stored });
  const options = { apiVersion: 'meta.k8s.io/v1', kind: 'UpdateOptions', ...(manager === undefined ? {} : { fieldManager: manager }) };
  const decoded = decodeReview({ ...body, request: { ...(body.request as JsonObject), options } });
  assert.ok(decoded.ok);
  const outcome = reviewEndpointSlice(decoded.value, snapshot);
  const result = outcome.kind === 'patched' ? applyRewrite(outcome.rewrite) : (object as JsonObject);
  const metadata = result.metadata as JsonObject;
  return { addresses: (result.endpoints as { addresses: string[] }[]).map((e) => e.addresses), annotations: metadata.annotations ?? {} };
}

test('the address Liqo\'s writer sends itself stays, and the original recorded for it goes, whatever the view', () => {
  for (const snapshot of [snapshotOf([]), snapshotOf([fcc({ connected: false })])]) {
    assert.deepEqual(reviewed(stored, snapshot, 'shadow-endpointslice-controller'), { addresses: [['10.61.0.151']], annotations: {} });
  }
});

test('with the shortcut usable, the address Liqo sends in its target is flagged, with no original', () => {
  assert.deepEqual(reviewed(stored, snapshotOf([fcc()]), 'shadow-endpointslice-controller'),
    { addresses: [['10.61.0.151']], annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151' } });
});

test('a hub address Liqo\'s writer sends is rewritten as before', () => {
  const fresh: JsonObject = { ...stored, endpoints: sliceObject().endpoints ?? [] };
  assert.deepEqual(reviewed(fresh, snapshotOf([fcc()]), 'shadow-endpointslice-controller'), {
    addresses: [['10.61.0.151']],
    annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' },
  });
});

test('a write that carries back what we wrote (our controller, another client, no manager said) is restored as before', () => {
  for (const manager of ['shortcut-webhook', 'kubectl-edit', undefined]) {
    assert.deepEqual(reviewed(stored, snapshotOf([]), manager), { addresses: [['10.63.0.151']], annotations: {} }, String(manager));
  }
});
