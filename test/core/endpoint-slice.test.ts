// What makes an object a reflected EndpointSlice, narrowed from untrusted JSON.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asEndpointSlice, isSkip, readReflectedSlice, sliceName } from '../../src/core/endpoint-slice.ts';
import { sliceObject } from '../support/builders.ts';

test('a slice is named namespace/name, and an object without a name says so', () => {
  assert.equal(sliceName(sliceObject({ name: 'web' })), 'demo/web');
  assert.equal(sliceName({ metadata: { name: 'web' } }), 'web');
  assert.equal(sliceName({ metadata: { namespace: 'demo' } }), 'demo/(unnamed)');
  assert.equal(sliceName(null), '(unnamed)');
  assert.equal(sliceName({ metadata: 'web' }), '(unnamed)');
});

test('a list item gets apiVersion and kind back, and never loses what it says itself', () => {
  const { apiVersion: _a, kind: _k, ...bare } = sliceObject();
  assert.deepEqual(asEndpointSlice(bare), sliceObject());
  const { kind: _kind, ...noKind } = sliceObject();
  assert.deepEqual(asEndpointSlice(noKind), { ...noKind, apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' });
  const other = { apiVersion: 'v1', kind: 'Endpoints' };
  assert.equal(asEndpointSlice(other), other);
  assert.equal(asEndpointSlice('text'), 'text');
});

test('the slice read carries its family, cluster, annotations and endpoints', () => {
  const slice = readReflectedSlice(sliceObject({ addressType: 'IPv6', destination: 'cluster7', annotations: { a: 'b' } }));
  assert.ok(!isSkip(slice));
  assert.deepEqual([slice.family, slice.clusterId, slice.annotations, slice.endpoints.length], ['IPv6', 'cluster7', { a: 'b' }, 1]);
  const bare = readReflectedSlice({ ...sliceObject({ annotations: null }), endpoints: null });
  assert.ok(!isSkip(bare));
  assert.deepEqual([bare.annotations, bare.endpoints], [undefined, []]);
});

test('the destination label wins over --cluster-id, which only fills in for a missing or empty label', () => {
  const labelled = readReflectedSlice(sliceObject({ destination: 'cluster7' }), { clusterId: 'cluster2' });
  assert.ok(!isSkip(labelled) && labelled.clusterId === 'cluster7');
  const empty = readReflectedSlice(sliceObject({ destination: '' }), { clusterId: 'cluster2' });
  assert.ok(!isSkip(empty) && empty.clusterId === 'cluster2');
});

const skips: readonly [string, unknown, string, RegExp][] = [
  ['not an object', [], 'not-endpointslice', /not a JSON object/],
  ['another kind', { ...sliceObject(), kind: 'Endpoints' }, 'not-endpointslice', /discovery\.k8s\.io\/v1 Endpoints is not discovery\.k8s\.io\/v1 EndpointSlice/],
  ['no apiVersion', { ...sliceObject(), apiVersion: undefined }, 'not-endpointslice', /^\? EndpointSlice is not/],
  ['labels that are a string', { ...sliceObject(), metadata: { labels: 'x' } }, 'malformed', /labels/],
  ['a slice of the EndpointSlice controller', sliceObject({ managedBy: 'endpointslice-controller.k8s.io' }), 'not-reflected', /is endpointslice-controller\.k8s\.io/],
  ['a slice without labels', { ...sliceObject(), metadata: { name: 'x' } }, 'not-reflected', /is unset/],
  ['an FQDN slice', sliceObject({ addressType: 'FQDN' }), 'unsupported-address-type', /addressType FQDN is not IPv4 or IPv6/],
  ['no destination and no --cluster-id', sliceObject({ destination: null }), 'unknown-cluster', /no offloading\.liqo\.io\/destination label/],
];
for (const [name, object, reason, detail] of skips) {
  test(`${name} is left alone as ${reason}, and the detail says why`, () => {
    const result = readReflectedSlice(object);
    assert.ok(isSkip(result));
    assert.equal(result.skip, reason);
    assert.match(result.detail, detail);
  });
}
