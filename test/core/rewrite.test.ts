import assert from 'node:assert/strict';
import { test } from 'node:test';
import { patchFor } from '../../src/admission/patch.ts';
import { isSkip, type SliceSkip } from '../../src/core/endpoint-slice.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { applyRewrite, rewriteEndpointSlice, UNTOUCHED_REASONS, type AddressTrace, type SliceRewrite, type UntouchedReason } from '../../src/core/rewrite.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { decodeConfiguration } from '../../src/core/leaf-views.ts';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { afterRemoval, configurationObject, fcc, sliceObject, snapshotOf, type SliceSpec } from '../support/builders.ts';

const FLAG = 'liqo.io/shortcut-addresses';
const ORIGINALS = 'liqo.io/shortcut-original-addresses';
const worked = snapshotOf([fcc()]);

function rewrite(object: Json, snapshot: Snapshot = worked, clusterId?: string): SliceRewrite {
  const result = rewriteEndpointSlice(object, snapshot, clusterId === undefined ? {} : { clusterId });
  assert.ok(!isSkip(result), `expected a rewrite, got ${JSON.stringify(result)}`);
  return result;
}

function skipOf(object: Json, snapshot: Snapshot = worked, clusterId?: string): SliceSkip {
  const result = rewriteEndpointSlice(object, snapshot, clusterId === undefined ? {} : { clusterId });
  assert.ok(isSkip(result), 'expected a skip');
  return result;
}

function output(spec: SliceSpec, snapshot: Snapshot = worked): JsonObject {
  return applyRewrite(rewrite(sliceObject(spec), snapshot));
}

function addressesOf(object: JsonObject): Json[] {
  const endpoints = object.endpoints;
  assert.ok(Array.isArray(endpoints));
  return endpoints.flatMap((endpoint: Json) => {
    assert.ok(endpoint !== null && typeof endpoint === 'object' && !Array.isArray(endpoint));
    const addresses = (endpoint as JsonObject).addresses;
    return Array.isArray(addresses) ? addresses : [];
  });
}

function annotationsOf(object: JsonObject): JsonObject | undefined {
  const metadata = object.metadata as JsonObject;
  return metadata.annotations as JsonObject | undefined;
}

// LIQO.md, "Worked examples": webhook on, input, output, flag.
const examples: readonly [string, string, string, Snapshot, string, string | undefined][] = [
  ['keeps the host part and swaps the prefix', 'cluster2', '10.63.0.151', worked, '10.61.0.151', '10.61.0.151'],
  ['rewrites on the B side of the same FCC', 'cluster3', '10.60.0.17', worked, '10.61.0.17', '10.61.0.17'],
  ['leaves a hub pod alone: it is in no source', 'cluster2', '10.200.0.196', worked, '10.200.0.196', undefined],
  ['keeps all 16 host bits', 'cluster2', '10.63.255.254', worked, '10.61.255.254', '10.61.255.254'],
  ['leaves an address just outside the /16 alone', 'cluster2', '10.64.0.1', worked, '10.64.0.1', undefined],
  ['uses only connected shortcuts', 'cluster2', '10.63.0.151', snapshotOf([fcc({ connected: false })]), '10.63.0.151', undefined],
  ['is idempotent on an address already rewritten, and flags it', 'cluster2', '10.61.0.151', worked, '10.61.0.151', '10.61.0.151'],
];
for (const [name, cluster, input, snapshot, expected, flag] of examples) {
  test(`worked example: ${name}`, () => {
    const out = output({ destination: cluster, addresses: [[input]] }, snapshot);
    assert.deepEqual(addressesOf(out), [expected]);
    assert.equal(annotationsOf(out)?.[FLAG], flag);
  });
}

/** Untouched counts with every reason the rewrite counts, the stock path's at zero unless given. */
function counts(some: Partial<Record<UntouchedReason, number>>): Record<UntouchedReason, number> {
  return { 'not-canonical': 0, 'no-fcc': 0, 'not-hub-external': 0, 'no-pair': 0, 'hub-external': 0, 'no-hub-ip': 0, 'no-peer': 0, 'no-shortcut': 0, 'tunnel-down': 0, 'connection-stale': 0, ...some };
}

test('worked example: the first row writes both annotations', () => {
  const out = output({ addresses: [['10.63.0.151']] });
  assert.deepEqual(annotationsOf(out), { [FLAG]: '10.61.0.151', [ORIGINALS]: '{"10.61.0.151":"10.63.0.151"}' });
});

test('Rome and Milan: an identity pair changes no address but flags Milan\'s pods, never the hub\'s external CIDR', () => {
  const rome = snapshotOf([fcc({ a: 'rome', b: 'milan', aPod: '10.203.0.0/16', aRemapped: '10.203.0.0/16',
    bPod: '10.202.0.0/16', bRemapped: '10.202.0.0/16' })]);
  const out = output({ destination: 'rome', addresses: [['10.203.0.9'], ['10.201.0.4'], ['10.200.1.1']] }, rome);
  assert.deepEqual(addressesOf(out), ['10.203.0.9', '10.201.0.4', '10.200.1.1']);
  assert.deepEqual(annotationsOf(out), { [FLAG]: '10.203.0.9' });
});

test('restores the hub address when the shortcut disconnects, and removes both annotations', () => {
  const rewritten = output({ addresses: [['10.63.0.151', '10.200.0.1']] });
  const restored = applyRewrite(rewrite(rewritten, snapshotOf([fcc({ connected: false })])));
  assert.deepEqual(addressesOf(restored), ['10.63.0.151', '10.200.0.1']);
  assert.equal(Object.hasOwn(restored.metadata as JsonObject, 'annotations'), false, 'the map goes with its last key');
  assert.deepEqual(patchFor(rewrite(rewritten, snapshotOf([fcc({ connected: false })]))).slice(-1), [{ op: 'remove', path: '/metadata/annotations' }]);
});

test('a restore keeps the annotations map, and its place, when other annotations remain', () => {
  const rewritten = output({ addresses: [['10.63.0.151']] });
  const { annotations, ...rest } = rewritten.metadata as JsonObject;
  // The map first: a copy that moved it to the end would show in the order of the keys.
  const annotated: JsonObject = { ...rewritten, metadata: { annotations: { keep: 'me', ...(annotations as JsonObject) }, ...rest } };
  const restored = applyRewrite(rewrite(annotated, snapshotOf([fcc({ connected: false })])));
  assert.deepEqual(restored.metadata, { ...(annotated.metadata as JsonObject), annotations: { keep: 'me' } });
  assert.deepEqual(Object.keys(restored.metadata as JsonObject), Object.keys(annotated.metadata as JsonObject));
});

test('restores the hub address when the FCC is deleted', () => {
  const rewritten = output({ addresses: [['10.63.0.151']] });
  const result = rewrite(rewritten, afterRemoval([fcc()]));
  assert.deepEqual(result.edits.map((e) => [e.from, e.to, e.kind]), [['10.61.0.151', '10.63.0.151', 'restored']]);
});

test('follows a CIDR change: the recorded hub address is remapped into the new target', () => {
  const rewritten = output({ addresses: [['10.63.0.151']] });
  // A view that held the FCC before the change remembers its former target, where the record's address lies.
  const moved = buildSnapshot({ version: 1, fccs: [fcc({ aRemapped: '10.71.0.0/16' })], formerFccs: [fcc()] });
  const out = applyRewrite(rewrite(rewritten, moved));
  assert.deepEqual(addressesOf(out), ['10.71.0.151']);
  assert.deepEqual(annotationsOf(out), { [FLAG]: '10.71.0.151', [ORIGINALS]: '{"10.71.0.151":"10.63.0.151"}' });
});

test('leaves non-canonical addresses exactly as they are and never flags them', () => {
  const odd = ['010.63.0.151', '10.63', '10.63.0.151 ', 'fe80::1%eth0', '10.63.0.0151', ''];
  const out = output({ addresses: [odd, ['10.63.0.1']] });
  assert.deepEqual(addressesOf(out), [...odd, '10.61.0.1']);
  assert.equal(annotationsOf(out)?.[FLAG], '10.61.0.1');
});

test('non-string addresses and non-object endpoints are left in place', () => {
  const object = sliceObject({ extra: { endpoints: [null, 7, { addresses: [5, null, '10.63.0.2'] }, { addresses: 'x' }] } });
  const out = applyRewrite(rewrite(object));
  assert.deepEqual(out.endpoints, [null, 7, { addresses: [5, null, '10.61.0.2'] }, { addresses: 'x' }]);
});

test('flags in order of first appearance, without duplicates', () => {
  const out = output({ addresses: [['10.63.0.2', '10.63.0.1'], ['10.63.0.2'], ['10.61.0.3']] });
  assert.equal(annotationsOf(out)?.[FLAG], '10.61.0.2,10.61.0.1,10.61.0.3');
});

test('never adds, drops or reorders endpoints or addresses', () => {
  const input = sliceObject({ addresses: [['10.63.0.2', '10.200.0.1', '10.63.0.1'], [], ['10.63.0.2']] });
  const out = applyRewrite(rewrite(input));
  assert.deepEqual(addressesOf(out), ['10.61.0.2', '10.200.0.1', '10.61.0.1', '10.61.0.2']);
  assert.equal((out.endpoints as Json[]).length, 3);
});

test('keeps other annotations and unknown fields untouched', () => {
  const input = sliceObject({ annotations: { keep: 'me', [FLAG]: 'stale' }, extra: { futureField: { x: [1, 2] } } });
  const out = applyRewrite(rewrite(input));
  assert.equal(annotationsOf(out)?.keep, 'me');
  assert.deepEqual(out.futureField, { x: [1, 2] });
  assert.deepEqual(out.ports, input.ports);
  assert.deepEqual((out.metadata as JsonObject).labels, (input.metadata as JsonObject).labels);
});

test('a stale flag on a slice that needs none is removed', () => {
  const result = rewrite(sliceObject({ addresses: [['10.200.0.1']], annotations: { [FLAG]: '10.61.0.9' } }));
  assert.deepEqual(result.annotations, [{ key: FLAG, value: undefined }]);
});

test('never mutates its input', () => {
  const input = sliceObject({ addresses: [['10.63.0.151']], annotations: { [ORIGINALS]: '{}' } });
  const before = structuredClone(input);
  applyRewrite(rewrite(input));
  assert.deepEqual(input, before);
});

const malformedOriginals: readonly [string, string][] = [
  ['not JSON', '{"10.61.0.151":'],
  ['a JSON array', '["10.63.0.151"]'],
  ['a number value', '{"10.61.0.151":7}'],
  ['a non-canonical value', '{"10.61.0.151":"010.63.0.151"}'],
  ['an IPv6 value on an IPv4 slice', '{"10.61.0.151":"fd00::1"}'],
  ['a prototype key', '{"__proto__":{"10.61.0.151":"10.63.0.1"}}'],
];
for (const [name, text] of malformedOriginals) {
  test(`ignores an original-addresses annotation entry that is ${name}`, () => {
    const out = output({ addresses: [['10.61.0.151', 'constructor']], annotations: { [ORIGINALS]: text } });
    assert.deepEqual(addressesOf(out), ['10.61.0.151', 'constructor']);
    assert.equal(annotationsOf(out)?.[ORIGINALS], undefined);
    assert.equal(annotationsOf(out)?.[FLAG], '10.61.0.151');
  });
}

test('uses good entries of an annotation whose other entries are bad', () => {
  const text = '{"10.61.0.1":"10.63.0.1","10.61.0.2":5,"10.61.0.3":"nope"}';
  const out = applyRewrite(rewrite(sliceObject({ addresses: [['10.61.0.1', '10.61.0.2']], annotations: { [ORIGINALS]: text } }), afterRemoval([fcc()])));
  assert.deepEqual(addressesOf(out), ['10.63.0.1', '10.61.0.2']);
});

test('on an IPv6 slice, an original or an address that is not RFC 5952 text is not trusted or touched', () => {
  const v6 = snapshotOf([fcc({ aPod: 'fd00:63::/32', aRemapped: 'fd00:61::/32' })]);
  const restored = applyRewrite(rewrite(sliceObject({ addressType: 'IPv6', addresses: [['fd00:61::97', 'fd00:61::98']],
    annotations: { [ORIGINALS]: '{"fd00:61::97":"FD00:63::97","fd00:61::98":"fd00:63::98"}' } }), afterRemoval([fcc({ aPod: 'fd00:63::/32', aRemapped: 'fd00:61::/32' })])));
  assert.deepEqual(addressesOf(restored), ['fd00:61::97', 'fd00:63::98'], 'the upper-case original is dropped, the other restores');
  const left = applyRewrite(rewrite(sliceObject({ addressType: 'IPv6', addresses: [['fd00:63::0097', 'FD00:63::97', 'fd00:63::97']] }), v6));
  assert.deepEqual(addressesOf(left), ['fd00:63::0097', 'FD00:63::97', 'fd00:61::97']);
  assert.equal(annotationsOf(left)?.[FLAG], 'fd00:61::97');
});

test('an annotation of a non-string type is replaced or removed, not trusted', () => {
  const result = rewrite(sliceObject({ addresses: [['10.200.0.1']], annotations: { [ORIGINALS]: { a: 1 }, [FLAG]: 3 } }));
  assert.deepEqual(result.annotations.map((a) => [a.key, a.value]), [[FLAG, undefined], [ORIGINALS, undefined]]);
});

test('the destination label decides the cluster, else --cluster-id, else the slice is left alone', () => {
  assert.deepEqual(addressesOf(applyRewrite(rewrite(sliceObject({ destination: null }), worked, 'cluster2'))), ['10.61.0.151']);
  assert.deepEqual(addressesOf(applyRewrite(rewrite(sliceObject({ destination: 'cluster3' }), worked, 'cluster2'))), ['10.63.0.151']);
  assert.equal(skipOf(sliceObject({ destination: null })).skip, 'unknown-cluster');
});

/** A `<name>-indirect` slice as liqotech/liqo PR #3323 forges it: the reflection labels plus its own marker. */
function indirectSlice(value: string): Json {
  const object = sliceObject({ name: 'web-abcde-indirect' });
  const metadata = object.metadata as JsonObject;
  return { ...object, metadata: { ...metadata, labels: { ...(metadata.labels as JsonObject), 'liqo.io/indirect-endpointslice': value } } };
}

test('a slice whose indirect label is not "true" is rewritten as any other', () => {
  assert.deepEqual(addressesOf(applyRewrite(rewrite(indirectSlice('false')))), ['10.61.0.151']);
});

const skips: readonly [string, Json, string][] = [
  ['an FQDN slice', sliceObject({ addressType: 'FQDN', addresses: [['web.example.com']] }), 'unsupported-address-type'],
  ['a slice of another manager', sliceObject({ managedBy: 'endpointslice-controller.k8s.io' }), 'not-reflected'],
  ['Liqo\'s indirect companion slice, even with addresses in a pair', indirectSlice('true'), 'indirect-slice'],
  ['another kind', { ...sliceObject(), kind: 'Endpoints' }, 'not-endpointslice'],
  ['another version', { ...sliceObject(), apiVersion: 'discovery.k8s.io/v1beta1' }, 'not-endpointslice'],
  ['a string', 'EndpointSlice', 'not-endpointslice'],
  ['null', null, 'not-endpointslice'],
  ['an array', [sliceObject()], 'not-endpointslice'],
  ['a slice without metadata', { ...sliceObject(), metadata: null }, 'malformed'],
  ['a slice whose annotations are a list', sliceObject({ annotations: null, extra: { metadata: { labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io', 'offloading.liqo.io/destination': 'cluster2' }, annotations: ['x'] } } }), 'malformed'],
  ['a slice whose endpoints are an object', sliceObject({ extra: { endpoints: { 0: {} } } }), 'malformed'],
];
for (const [name, object, reason] of skips) {
  test(`leaves ${name} alone (${reason})`, () => assert.equal(skipOf(object).skip, reason));
}

test('rewrites IPv6 slices with RFC 5952 output', () => {
  const v6 = snapshotOf([fcc({ aPod: 'fd00:63::/32', aRemapped: 'fd00:61::/32' })]);
  const out = output({ addressType: 'IPv6', addresses: [['fd00:63:0:1::5', 'FD00:63::1', '10.63.0.1']] }, v6);
  assert.deepEqual(addressesOf(out), ['fd00:61:0:1::5', 'FD00:63::1', '10.63.0.1']);
  assert.equal(annotationsOf(out)?.[ORIGINALS], '{"fd00:61:0:1::5":"fd00:63:0:1::5"}');
});

test('an IPv6 address already in a shortcut range is left as it is and flagged, as its IPv4 twin is', () => {
  const v6 = snapshotOf([fcc({ aPod: 'fd00:63::/32', aRemapped: 'fd00:61::/32' })]);
  const out = output({ addressType: 'IPv6', addresses: [['fd00:61::97', 'fd00:70::1']] }, v6);
  assert.deepEqual(addressesOf(out), ['fd00:61::97', 'fd00:70::1']);
  assert.deepEqual(annotationsOf(out), { [FLAG]: 'fd00:61::97' });
});

test('pairs whose targets overlap rewrite nothing: two hub addresses with the same host bits would become one', () => {
  const overlapping = snapshotOf([
    fcc({ name: 'to-3', b: 'cluster3', aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16' }),
    fcc({ name: 'to-4', b: 'cluster4', aPod: '10.64.0.0/16', aRemapped: '10.61.0.0/16' }),
  ]);
  const out = output({ addresses: [['10.63.0.5'], ['10.64.0.5']] }, overlapping);
  assert.deepEqual(addressesOf(out), ['10.63.0.5', '10.64.0.5']);
  assert.deepEqual(annotationsOf(out) ?? {}, {});
});

test('an IPv4 pair never touches an IPv6 slice', () => {
  const out = output({ addressType: 'IPv6', addresses: [['::a3f:97']] });
  assert.deepEqual(addressesOf(out), ['::a3f:97']);
});

test('a slice with no endpoints is fine, and loses stale annotations', () => {
  const result = rewrite(sliceObject({ extra: { endpoints: null }, annotations: { [FLAG]: '10.61.0.1' } }));
  assert.deepEqual(result.annotations, [{ key: FLAG, value: undefined }]);
});

test('the trace explains every address with its pair and reason', () => {
  const traces: AddressTrace[] = [];
  const object = sliceObject({ addresses: [['10.63.0.1', '10.200.0.1', '10.61.0.9', '010.1.1.1']] });
  const result = rewriteEndpointSlice(object, worked, {}, (trace) => traces.push(trace));
  assert.ok(!isSkip(result));
  assert.deepEqual(traces.map((t) => [t.input, t.output, t.reason, t.pair?.fcc]), [
    ['10.63.0.1', '10.61.0.1', 'rewritten', 'liqo/cluster2-cluster3'],
    ['10.200.0.1', '10.200.0.1', 'no-pair', undefined],
    ['10.61.0.9', '10.61.0.9', 'through-shortcut', undefined],
    ['010.1.1.1', '010.1.1.1', 'not-canonical', undefined],
  ]);
});

test('a shortcut address before its hub twin in one slice: both read as the same pod, and a second pass changes nothing', () => {
  const once = output({ addresses: [['10.61.0.5', '10.63.0.9', '10.63.0.5']] });
  assert.deepEqual(addressesOf(once), ['10.61.0.5', '10.61.0.9', '10.61.0.5']);
  assert.equal(annotationsOf(once)?.[ORIGINALS], '{"10.61.0.5":"10.63.0.5","10.61.0.9":"10.63.0.9"}');
  const again = rewrite(once);
  assert.deepEqual([again.edits, again.annotations], [[], []]);
});

test('the original-addresses annotation lists outputs in order of first appearance', () => {
  const out = output({ addresses: [['10.63.0.2', '10.63.0.1']] });
  assert.equal(annotationsOf(out)?.[ORIGINALS], '{"10.61.0.2":"10.63.0.2","10.61.0.1":"10.63.0.1"}');
});

test('a slice whose annotations would pass the API server\'s 256 KiB limit is left alone, not turned into a refused write', () => {
  const addresses = Array.from({ length: 100 }, (_, e) => Array.from({ length: 100 }, (_, a) => `10.63.${e}.${a}`));
  const result = rewriteEndpointSlice(sliceObject({ addresses }), worked);
  assert.ok(isSkip(result));
  assert.equal(result.skip, 'annotations-too-large');
  const fits = rewriteEndpointSlice(sliceObject({ addresses: addresses.slice(0, 10) }), worked);
  assert.ok(!isSkip(fits) && fits.edits.length === 1000);
});

/** cluster2 with the worked FCC and its Configuration for the hub cluster1 (external CIDR seen at 10.71/16). */
const withViews = buildSnapshot({ version: 1, fccs: [fcc()], configurations: [
  decodeConfiguration(configurationObject({ peer: 'cluster1', remoteExternalView: ['10.71.0.0/16', 'fd00:71::/32'] })),
] });

function reasonsOf(object: Json, snapshot: Snapshot): string[] {
  const traces: AddressTrace[] = [];
  rewriteEndpointSlice(object, snapshot, {}, (trace) => traces.push(trace));
  return traces.map((trace) => `${trace.input}:${trace.reason}`);
}

test('an address in the leaf\'s view of the hub\'s external CIDR is hub-external, others keep their reasons', () => {
  const slice = sliceObject({ addresses: [['10.71.0.9', '10.63.0.5', '10.61.0.7', '10.200.0.1', '10.1']] });
  assert.deepEqual(reasonsOf(slice, withViews), ['10.71.0.9:hub-external', '10.63.0.5:rewritten', '10.61.0.7:through-shortcut', '10.200.0.1:no-pair', '10.1:not-canonical']);
  assert.deepEqual(rewrite(slice, withViews).untouched, counts({ 'not-canonical': 1, 'hub-external': 1, 'no-fcc': 0, 'no-pair': 1 }));
});

test('hub-external is the hub\'s: a slice from another origin, or without one, is no-pair there', () => {
  const other = sliceObject({ addresses: [['10.71.0.9']] });
  const metadata = other.metadata as JsonObject;
  const fromCluster9 = { ...other, metadata: { ...metadata, labels: { ...(metadata.labels as JsonObject), 'offloading.liqo.io/origin': 'cluster9' } } };
  assert.deepEqual(reasonsOf(fromCluster9, withViews), ['10.71.0.9:no-pair']);
  const { 'offloading.liqo.io/origin': _origin, ...unlabelled } = metadata.labels as JsonObject;
  assert.deepEqual(reasonsOf({ ...other, metadata: { ...metadata, labels: unlabelled } }, withViews), ['10.71.0.9:no-pair']);
});

test('IPv6 slices read the IPv6 blocks of the hub\'s external view', () => {
  assert.deepEqual(reasonsOf(sliceObject({ addressType: 'IPv6', addresses: [['fd00:71::5', 'fd00:72::5']] }), withViews),
    ['fd00:71::5:hub-external', 'fd00:72::5:no-pair']);
});

test('a cluster no FCC names, on a leaf that sees the hub\'s external CIDR, leaves other addresses alone as not-hub-external, not no-fcc: the stock path needs no FCC', () => {
  const slice = sliceObject({ destination: 'cluster7', addresses: [['10.63.0.5', '10.71.0.1']] });
  assert.deepEqual(reasonsOf(slice, withViews), ['10.63.0.5:not-hub-external', '10.71.0.1:hub-external']);
  assert.deepEqual(rewrite(slice, withViews).untouched, counts({ 'hub-external': 1, 'not-hub-external': 1 }));
});

test('a cluster no FCC names, on a leaf that sees no external CIDR of the hub, leaves its addresses alone as no-fcc', () => {
  const slice = sliceObject({ destination: 'cluster7', addresses: [['10.63.0.5', '10.71.0.1']] });
  assert.deepEqual(reasonsOf(slice, worked), ['10.63.0.5:no-fcc', '10.71.0.1:no-fcc']);
});

test('restored and flagged addresses are not counted as untouched', () => {
  const slice = sliceObject({ addresses: [['10.61.0.5', '10.61.0.6']], annotations: { [ORIGINALS]: '{"10.61.0.5":"10.63.0.5"}' } });
  assert.deepEqual(rewrite(slice, afterRemoval([fcc()])).untouched, counts({ 'not-canonical': 0, 'hub-external': 0, 'no-fcc': 1, 'no-pair': 0 }));
  assert.deepEqual(rewrite(slice).untouched, counts({ 'not-canonical': 0, 'hub-external': 0, 'no-fcc': 0, 'no-pair': 0 }));
});

test('each edit says whether it rewrote an address or restored it, and a trace names the pair behind a rewrite', () => {
  const slice = sliceObject({ addresses: [['10.63.0.5', '10.61.0.6', '10.200.0.1']], annotations: { [ORIGINALS]: '{"10.61.0.6":"10.63.0.6"}' } });
  // Under the worked FCC the first is rewritten and the second kept; without it, the second goes back to its original.
  assert.deepEqual(rewrite(slice).edits.map((edit) => `${edit.from}>${edit.to}:${edit.kind}`), ['10.63.0.5>10.61.0.5:rewritten']);
  assert.deepEqual(rewrite(slice, afterRemoval([fcc()])).edits.map((edit) => `${edit.from}>${edit.to}:${edit.kind}`), ['10.61.0.6>10.63.0.6:restored']);
  const traces: AddressTrace[] = [];
  rewriteEndpointSlice(slice, worked, {}, (trace) => traces.push(trace));
  assert.deepEqual(traces.map((trace) => trace.pair?.fcc ?? '-'), ['liqo/cluster2-cluster3', 'liqo/cluster2-cluster3', '-']);
});

test('hub-external holds an address in any of the hub\'s external blocks, not only in all of them', () => {
  const twoBlocks = buildSnapshot({ version: 1, fccs: [fcc()], configurations: [
    decodeConfiguration(configurationObject({ peer: 'cluster1', remoteExternalView: ['10.71.0.0/16', '10.72.0.0/16'] })),
  ] });
  assert.deepEqual(reasonsOf(sliceObject({ addresses: [['10.71.0.9', '10.72.0.9', '10.73.0.9']] }), twoBlocks),
    ['10.71.0.9:hub-external', '10.72.0.9:hub-external', '10.73.0.9:no-pair']);
});

test('UNTOUCHED_REASONS lists exactly the reasons a rewrite counts, in their order', () => {
  assert.deepEqual(UNTOUCHED_REASONS, Object.keys(rewrite(sliceObject()).untouched));
  assert.deepEqual(UNTOUCHED_REASONS, ['not-canonical', 'no-fcc', 'not-hub-external', 'no-pair', 'hub-external', 'no-hub-ip', 'no-peer', 'no-shortcut', 'tunnel-down', 'connection-stale']);
});
