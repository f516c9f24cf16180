// Records the product trusts (core/trust.ts): an entry of the original-addresses annotation is used only where the
// product could have written it, whoever sends it. Leaf cluster2 (own pods 10.60/16, external 10.70/16), hub cluster1
// (seen at 10.200/16, its external CIDR at 10.71/16), peer cluster3 seen at 10.61/16; an FCC cluster2-cluster3
// 10.63/16 -> 10.61/16 that is down, so every entry it wrote is restored, and no pair rewrites anything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview } from '../../src/admission/review.ts';
import { isSkip } from '../../src/core/endpoint-slice.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { decodeConfiguration } from '../../src/core/leaf-views.ts';
import { applyRewrite, rewriteEndpointSlice, type AddressTrace } from '../../src/core/rewrite.ts';
import { buildSnapshot, type Snapshot } from '../../src/core/snapshot.ts';
import { SpanSet } from '../../src/core/trust.ts';
import { ipv4 } from '../../src/core/ip.ts';
import { configurationObject, fcc, reviewObject, sliceObject } from '../support/builders.ts';

const ORIGINALS = 'liqo.io/shortcut-original-addresses';

function leaf(fccs = [fcc({ connected: false })]): Snapshot {
  return buildSnapshot({
    version: 1, fccs,
    configurations: [configurationObject({ peer: 'cluster1' }), configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' })]
      .map((c) => decodeConfiguration(c)),
  });
}

function outcome(address: string, base: string, snapshot = leaf()): { output: string; ignored: string | undefined } {
  const traces: AddressTrace[] = [];
  const slice = sliceObject({ addresses: [[address]], annotations: { [ORIGINALS]: JSON.stringify({ [address]: base }) } });
  const result = rewriteEndpointSlice(slice, snapshot, {}, (trace) => traces.push(trace));
  assert.ok(!isSkip(result));
  return { output: traces[0]?.output ?? '', ignored: traces[0]?.ignored?.because };
}

const entries: readonly [string, string, string, string | undefined][] = [
  ['an entry the FCC path wrote is restored', '10.61.0.151', '10.63.0.151', undefined],
  ['an entry the stock path wrote (the hub\'s external CIDR, seen by the leaf) is restored', '10.61.0.12', '10.71.0.12', undefined],
  ['an entry whose address the hub reflects as a hub pod is restored', '10.61.0.5', '10.200.0.5', undefined],
  ['an entry giving back one of the leaf\'s own pods is ignored', '10.61.0.5', '10.60.3.7', 'leaf-own'],
  ['an entry giving back the leaf\'s own external CIDR is ignored', '10.61.0.5', '10.70.0.1', 'leaf-own'],
  ['an entry giving back a node of the leaf (in no space Liqo reflects) is ignored', '10.61.0.5', '172.18.0.2', 'base-not-reflected'],
  ['an entry naming Liqo\'s own hub address (no space the product writes) is ignored', '10.200.0.196', '10.200.0.7', 'out-not-ours'],
  ['an entry naming a leaf pod is ignored', '10.60.0.9', '10.63.0.9', 'leaf-own'],
];
for (const [name, address, base, because] of entries) {
  test(name, () => {
    const { output, ignored } = outcome(address, base);
    assert.equal(ignored, because);
    assert.equal(output, because === undefined ? base : address, 'an ignored entry leaves the address as if it had none');
  });
}

test('without the slice\'s hub label only the FCCs vouch: the leaf\'s view of a peer is not told from the hub\'s', () => {
  const slice = sliceObject({ addresses: [['10.61.0.12']], annotations: { [ORIGINALS]: '{"10.61.0.12":"10.71.0.12"}' } });
  const labels = (slice.metadata as JsonObject).labels as JsonObject;
  const { 'offloading.liqo.io/origin': _origin, ...rest } = labels;
  const unlabelled = { ...slice, metadata: { ...(slice.metadata as JsonObject), labels: rest } };
  const result = rewriteEndpointSlice(unlabelled, leaf());
  assert.ok(!isSkip(result));
  assert.deepEqual(result.ignored.map((entry) => entry.because), ['base-not-reflected']);
});

test('an ignored entry is dropped from the annotation, counted once per address, and the address keeps Liqo\'s text', () => {
  const slice = sliceObject({ addresses: [['10.61.0.5', '10.61.0.151']], annotations: { [ORIGINALS]: '{"10.61.0.5":"172.18.0.2","10.61.0.151":"10.63.0.151"}' } });
  const result = rewriteEndpointSlice(slice, leaf([fcc()]));
  assert.ok(!isSkip(result));
  assert.deepEqual(result.ignored, [{ out: '10.61.0.5', base: '172.18.0.2', because: 'base-not-reflected' }]);
  const out = applyRewrite(result);
  assert.deepEqual((out.endpoints as { addresses: string[] }[])[0]?.addresses, ['10.61.0.5', '10.61.0.151']);
  assert.equal(((out.metadata as JsonObject).annotations as JsonObject)[ORIGINALS], '{"10.61.0.151":"10.63.0.151"}');
});

/** A review of `object` by `manager`, the API server holding `stored`. */
function review(object: JsonObject, stored: JsonObject | undefined, manager: string): JsonObject {
  const body = reviewObject(object, { operation: stored === undefined ? 'CREATE' : 'UPDATE', ...(stored === undefined ? {} : { oldObject: stored }) });
  const decoded = decodeReview({ ...body, request: { ...(body.request as JsonObject), options: { fieldManager: manager } } });
  assert.ok(decoded.ok);
  const answer = reviewEndpointSlice(decoded.value, leaf());
  return answer.kind === 'patched' ? applyRewrite(answer.rewrite) : object;
}

test('at admission a record counts only where the stored object carries it, or in the product\'s own write', () => {
  const carrying = sliceObject({ addresses: [['10.61.0.151']], annotations: { [ORIGINALS]: '{"10.61.0.151":"10.63.0.151"}' } });
  const plain = sliceObject({ addresses: [['10.61.0.151']] });
  const addressOf = (object: JsonObject) => (object.endpoints as { addresses: string[] }[])[0]?.addresses[0];
  // A record arriving with Liqo's write (copied from the hub) on a CREATE, or one the stored object does not carry.
  assert.equal(addressOf(review(carrying, undefined, 'shadow-endpointslice-controller')), '10.61.0.151');
  assert.equal(addressOf(review(carrying, plain, 'shadow-endpointslice-controller')), '10.61.0.151');
  // The same entry already stored, or written by the product itself.
  assert.equal(addressOf(review(carrying, carrying, 'shadow-endpointslice-controller')), '10.63.0.151');
  assert.equal(addressOf(review(carrying, plain, 'shortcut-webhook')), '10.63.0.151');
});

test('a span set finds membership by binary search, merging overlaps and nesting', () => {
  const span = (from: string, to: string) => ({ network: ipv4.parseCanonical(from) ?? 0, last: ipv4.parseCanonical(to) ?? 0, prefixLength: 0 });
  const set = new SpanSet([span('10.2.0.0', '10.2.255.255'), span('10.0.0.0', '10.0.255.255'), span('10.2.1.0', '10.2.1.255'), span('10.1.0.0', '10.1.0.255')]);
  const has = (text: string) => set.has(ipv4.parseCanonical(text) ?? -1);
  assert.deepEqual(['9.255.255.255', '10.0.0.0', '10.0.255.255', '10.1.0.255', '10.1.1.0', '10.2.1.7', '10.3.0.0'].map(has),
    [false, true, true, true, false, true, false]);
});

// Properties: whatever a record says, an output that differs from its input is in a usable pair's target (rewritten)
// or is a base in a space Liqo reflects for the hub (an FCC source naming the leaf, the leaf's view of the hub's pods
// or external CIDR), never the leaf's own pods or external CIDR.
const pool = fc.constantFrom('10.61', '10.63', '10.60', '10.70', '10.71', '10.200', '10.72', '172.18', '10.64');
const address = fc.tuple(pool, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })).map(([net, a, b]) => `${net}.${a}.${b}`);
const forgedSlice = fc.record({
  addresses: fc.array(fc.array(address, { maxLength: 3 }), { maxLength: 4 }),
  entries: fc.array(fc.tuple(address, address), { maxLength: 6 }),
}).map(({ addresses, entries }) => sliceObject({ addresses, annotations: { [ORIGINALS]: JSON.stringify(Object.fromEntries(entries)) } }));
const views = fc.constantFrom(leaf(), leaf([fcc()]), leaf([fcc({ aPod: '10.64.0.0/16' })]));

function inside(text: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => text.startsWith(`${prefix}.`));
}

test('no record, however forged, makes the output carry an address outside the spaces the product may write or restore', () => {
  fc.assert(fc.property(forgedSlice, views, (slice, snapshot) => {
    const sources = snapshot.fccs.flatMap((f) => (f.sideA?.podCIDR === '10.64.0.0/16' ? ['10.64'] : ['10.63']));
    const traces: AddressTrace[] = [];
    assert.ok(!isSkip(rewriteEndpointSlice(slice, snapshot, {}, (trace) => traces.push(trace))));
    for (const trace of traces) {
      if (trace.output === trace.input) continue;
      const usableTarget = snapshot.forCluster('cluster2').pairs.length > 0 && trace.output.startsWith('10.61.') && trace.reason === 'rewritten';
      assert.ok(usableTarget || inside(trace.output, [...sources, '10.200', '10.71']), `${trace.input} became ${trace.output}`);
      assert.ok(!inside(trace.output, ['10.60', '10.70', '172.18']), `${trace.input} became the leaf's own ${trace.output}`);
    }
  }), { numRuns: 300 });
});
