// Properties of SPEC §3 over generated slices and views, not only the worked examples.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { patchFor } from '../../src/admission/patch.ts';
import { isSkip } from '../../src/core/endpoint-slice.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { applyRewrite, rewriteEndpointSlice } from '../../src/core/rewrite.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { afterRemoval, fcc, isCanonicalAddress, sliceObject, snapshotOf } from '../support/builders.ts';

const RUNS = 300;

// Small prefixes on few /8s, so generated addresses often fall inside sources and targets, overlaps and chains included.
const octet = fc.integer({ min: 0, max: 255 });
const firstOctet = fc.constantFrom(10, 11, 12);
const ipv4 = fc.tuple(firstOctet, fc.integer({ min: 0, max: 3 }), octet, octet).map((p) => p.join('.'));
const prefixLength = fc.constantFrom(8, 14, 16, 24);
const cidrText = fc.tuple(firstOctet, fc.integer({ min: 0, max: 3 }), prefixLength).map(([a, b, len]) => `${a}.${b}.0.0/${len}`);
const weird = fc.constantFrom('010.0.0.1', '10.1', '10.0.0.1 ', 'fe80::1%eth0', '', 'x');
const address = fc.oneof({ weight: 8, arbitrary: ipv4 }, { weight: 1, arbitrary: weird });

const fccArbitrary = fc.record({
  b: fc.constantFrom('cluster3', 'cluster4', 'cluster5'),
  connected: fc.boolean(),
  aPod: cidrText,
  aRemapped: fc.oneof({ weight: 6, arbitrary: cidrText }, { weight: 1, arbitrary: fc.constant('fd00::/16') }),
  name: fc.string({ minLength: 1, maxLength: 6 }),
}).map((spec) => fcc(spec));

const snapshotArbitrary = fc.array(fccArbitrary, { maxLength: 6 }).map((fccs) => snapshotOf(fccs));

const sliceArbitrary = fc.record({
  addresses: fc.array(fc.array(address, { maxLength: 4 }), { maxLength: 6 }),
  annotations: fc.option(fc.dictionary(fc.constantFrom('keep', 'liqo.io/shortcut-addresses', 'liqo.io/shortcut-original-addresses'),
    fc.oneof(fc.string(), fc.json())), { nil: null }),
  extra: fc.option(fc.dictionary(fc.constantFrom('unknownField', 'x-future'), fc.jsonValue())
    .map((extra): JsonObject => JSON.parse(JSON.stringify(extra))), { nil: undefined }),
}).map(({ addresses, annotations, extra }) => sliceObject({ addresses, annotations, ...(extra === undefined ? {} : { extra }) }))
  // Through the wire and back, as the API server would send it (no null-prototype objects, no undefined).
  .map((slice): JsonObject => JSON.parse(JSON.stringify(slice)));

function f(object: Json, snapshot: Snapshot): JsonObject {
  const result = rewriteEndpointSlice(object, snapshot);
  assert.ok(!isSkip(result));
  return applyRewrite(result);
}

test('rewriting twice gives the same slice as rewriting once', () => {
  fc.assert(fc.property(sliceArbitrary, snapshotArbitrary, (slice, snapshot) => {
    const once = f(slice, snapshot);
    assert.deepEqual(f(once, snapshot), once);
  }), { numRuns: RUNS });
});

// IPv6 as well: its canonical text has letters and colons, and the originals annotation maps them.
const hextet = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
const ipv6 = fc.tuple(fc.constantFrom('fd00:1', 'fd00:2', 'fd00:3'), hextet, hextet).map(([net, a, b]) => `${net}::${a}:${b}`);
const ipv6Slice = fc.record({
  addresses: fc.array(fc.array(fc.oneof(ipv6, weird), { maxLength: 3 }), { maxLength: 6 }),
  annotations: fc.option(fc.dictionary(fc.constantFrom('keep', 'liqo.io/shortcut-original-addresses'), fc.oneof(fc.string(), fc.json())), { nil: null }),
}).map((spec): JsonObject => JSON.parse(JSON.stringify(sliceObject({ ...spec, addressType: 'IPv6' }))));
const ipv6Snapshot = fc.subarray(['fd00:1::/32', 'fd00:2::/32', 'fd00:3::/32'], { minLength: 2, maxLength: 2 })
  .map(([source = '', target = '']) => snapshotOf([fcc({ aPod: source, aRemapped: target })]));

function patchYieldsRewrite(slice: JsonObject, snapshot: Snapshot): void {
  const result = rewriteEndpointSlice(slice, snapshot);
  assert.ok(!isSkip(result));
  const patched = jsonpatch.applyPatch(structuredClone(slice), patchFor(result).map((op) => ({ ...op })), true, false).newDocument;
  assert.deepEqual(patched, applyRewrite(result));
}

test('applying the emitted patch to the received object yields exactly the rewritten slice', () => {
  fc.assert(fc.property(sliceArbitrary, snapshotArbitrary, patchYieldsRewrite), { numRuns: RUNS });
});

test('the emitted patch yields the rewritten slice for IPv6 slices too', () => {
  fc.assert(fc.property(ipv6Slice, ipv6Snapshot, patchYieldsRewrite), { numRuns: RUNS });
  // The IPv6 case really rewrites something, so the property is not vacuous there.
  const slice: JsonObject = JSON.parse(JSON.stringify(sliceObject({ addressType: 'IPv6', addresses: [['fd00:1::a:b']] })));
  const result = rewriteEndpointSlice(slice, snapshotOf([fcc({ aPod: 'fd00:1::/32', aRemapped: 'fd00:2::/32' })]));
  assert.ok(!isSkip(result));
  assert.deepEqual(patchFor(result)[0], { op: 'replace', path: '/endpoints/0/addresses/0', value: 'fd00:2::a:b' });
});

test('once every shortcut is gone every rewritten address is restored to its hub address', () => {
  fc.assert(fc.property(sliceArbitrary, snapshotArbitrary, (slice, snapshot) => {
    // The view that held them remembers their spaces, which vouch for the records they left.
    const empty = afterRemoval(snapshot.fccs);
    const rewritten = f(slice, snapshot);
    const restored = f(rewritten, empty);
    const original = f(slice, empty);
    assert.deepEqual(restored.endpoints, original.endpoints);
    const annotations = (restored.metadata as JsonObject).annotations as JsonObject | undefined;
    assert.equal(annotations?.['liqo.io/shortcut-original-addresses'], undefined);
  }), { numRuns: RUNS });
});

test('a slice that carried no shortcut annotations is given back exactly as it was once every shortcut is gone', () => {
  const plain = fc.record({
    addresses: fc.array(fc.array(address, { maxLength: 4 }), { maxLength: 6 }),
    keep: fc.option(fc.string(), { nil: undefined }),
  }).map(({ addresses, keep }): JsonObject => JSON.parse(JSON.stringify(sliceObject({ addresses, ...(keep === undefined ? {} : { annotations: { keep } }) }))));
  fc.assert(fc.property(plain, snapshotArbitrary, (slice, snapshot) => {
    assert.deepEqual(f(f(slice, snapshot), afterRemoval(snapshot.fccs)), slice);
  }), { numRuns: RUNS });
});

test('the output keeps structure and every field but addresses and the two annotations', () => {
  fc.assert(fc.property(sliceArbitrary, snapshotArbitrary, (slice, snapshot) => {
    const out = f(slice, snapshot);
    const strip = (object: JsonObject): Json => {
      const copy = structuredClone(object) as { metadata: { annotations?: Record<string, Json> }; endpoints?: Json };
      if (copy.metadata.annotations === null) delete copy.metadata.annotations;
      if (copy.metadata.annotations) {
        delete copy.metadata.annotations['liqo.io/shortcut-addresses'];
        delete copy.metadata.annotations['liqo.io/shortcut-original-addresses'];
        if (Object.keys(copy.metadata.annotations).length === 0) delete copy.metadata.annotations;
      }
      const endpoints = Array.isArray(copy.endpoints) ? copy.endpoints : [];
      copy.endpoints = endpoints.map((endpoint) => {
        if (endpoint === null || typeof endpoint !== 'object' || Array.isArray(endpoint)) return endpoint;
        const addresses = (endpoint as JsonObject).addresses;
        return { ...endpoint, addresses: Array.isArray(addresses) ? addresses.map((a) => typeof a) : addresses ?? null };
      });
      return copy as unknown as Json;
    };
    assert.deepEqual(strip(out), strip(slice));
  }), { numRuns: RUNS });
});

test('the output is a valid EndpointSlice: addresses of the slice family, annotations strings', () => {
  fc.assert(fc.property(sliceArbitrary, snapshotArbitrary, (slice, snapshot) => {
    const out = f(slice, snapshot);
    const annotations = (out.metadata as JsonObject).annotations as JsonObject | null | undefined;
    for (const value of Object.values(annotations ?? {})) assert.equal(typeof value, 'string');
    // Every address is the one received or a canonical IPv4 address: the rewrite never writes anything else.
    const before = (slice.endpoints as { addresses: Json[] }[]).map((endpoint) => endpoint.addresses);
    (out.endpoints as { addresses: Json[] }[]).forEach((endpoint, e) => endpoint.addresses.forEach((address, a) => {
      if (address !== before[e]?.[a]) assert.ok(typeof address === 'string' && isCanonicalAddress(address, 'IPv4'), String(address));
    }));
    const flag = annotations?.['liqo.io/shortcut-addresses'];
    if (flag !== undefined) for (const a of String(flag).split(',')) assert.ok(isCanonicalAddress(a, 'IPv4'), a);
    const originals = annotations?.['liqo.io/shortcut-original-addresses'];
    if (originals !== undefined) {
      const map: unknown = JSON.parse(String(originals));
      assert.ok(typeof map === 'object' && map !== null && !Array.isArray(map), String(originals));
      for (const [shortcut, hub] of Object.entries(map)) {
        assert.ok(isCanonicalAddress(shortcut, 'IPv4') && typeof hub === 'string' && isCanonicalAddress(hub, 'IPv4'));
      }
    }
  }), { numRuns: RUNS });
});

test('never throws on arbitrary JSON, as a slice or inside one', () => {
  const snapshot = snapshotOf([fcc()]);
  fc.assert(fc.property(fc.jsonValue(), (value) => {
    rewriteEndpointSlice(value, snapshot);
    rewriteEndpointSlice(sliceObject({ extra: { endpoints: value as Json } }), snapshot);
    rewriteEndpointSlice(sliceObject({ annotations: { 'liqo.io/shortcut-original-addresses': JSON.stringify(value) } }), snapshot);
  }), { numRuns: RUNS * 3 });
});
