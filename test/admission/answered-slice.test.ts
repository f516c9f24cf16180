// What the healing watch is told an answered EndpointSlice is stored as: the members of the object the answer's patch
// makes, as kube-apiserver writes them (map keys sorted, empty maps left out), for a patched and an unchanged review.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import jsonpatch from 'fast-json-patch';
import { answeredSliceMembers } from '../../src/admission/answered-slice.ts';
import { patchFor } from '../../src/admission/patch.ts';
import { isSkip } from '../../src/core/endpoint-slice.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { isUnchanged, rewriteEndpointSlice } from '../../src/core/rewrite.ts';
import { fcc, sliceObject, snapshotOf } from '../support/builders.ts';

/** The members the way Go writes the object the patch makes. */
function stored(object: JsonObject): Record<string, string | undefined> {
  const sorted = (map: unknown) => (map === undefined || Object.keys(map as object).length === 0 ? undefined
    : JSON.stringify(Object.fromEntries(Object.entries(map as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))));
  const metadata = object.metadata as { labels?: unknown; annotations?: unknown };
  return { labels: sorted(metadata.labels), annotations: sorted(metadata.annotations), addressType: JSON.stringify(object.addressType), endpoints: JSON.stringify(object.endpoints) };
}

test('a patched slice: the members are those of the object the patch makes, its annotations sorted as stored', () => {
  const slice = sliceObject({ name: 'web', addresses: [['10.63.0.7'], ['10.200.0.1'], ['10.63.0.8', '10.200.0.2']] });
  // Another tool's annotation that sorts after the product's: added where a map keeps its order, sorted where Go writes it.
  (slice.metadata as { annotations?: Record<string, string> }).annotations = { 'zz.example.com/note': 'kept' };
  const rewrite = rewriteEndpointSlice(slice, snapshotOf([fcc()]));
  assert.ok(!isSkip(rewrite) && !isUnchanged(rewrite), 'the shortcut rewrites it');
  const after = jsonpatch.applyPatch(structuredClone(slice), patchFor(rewrite).map((op) => ({ ...op })), true, false).newDocument as JsonObject;
  const members = answeredSliceMembers(rewrite);
  assert.ok(members !== undefined);
  assert.deepEqual(Object.fromEntries(members.map((m) => [m.name, m.text])), stored(after));
  assert.match(String(members.find((m) => m.name === 'annotations')?.text), /^\{"liqo\.io\/shortcut-addresses".*"zz\.example\.com\/note":"kept"\}$/);
});

test('an unchanged slice answers as it came; one whose endpoints are no list is never passed over', () => {
  const slice = sliceObject({ name: 'web', addresses: [['10.200.0.1']] });
  const rewrite = rewriteEndpointSlice(slice, snapshotOf([fcc()]));
  assert.ok(!isSkip(rewrite) && isUnchanged(rewrite));
  assert.deepEqual(Object.fromEntries((answeredSliceMembers(rewrite) ?? []).map((m) => [m.name, m.text])), stored(slice));
  const broken = { ...rewrite, slice: { ...rewrite.slice, object: { ...rewrite.slice.object, endpoints: null } } };
  assert.equal(answeredSliceMembers(broken), undefined);
});
