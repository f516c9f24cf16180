// Edges the main tests pass by: blocks that touch, null labels and annotations, and the trace's reasons and flags
// for every kind of address (what `explain` prints).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { overlaps, parseCidr, type Cidr } from '../../src/core/cidr.ts';
import { isSkip, readReflectedSlice } from '../../src/core/endpoint-slice.ts';
import { rewriteEndpointSlice, type AddressTrace } from '../../src/core/rewrite.ts';
import { afterRemoval, fcc, sliceObject, snapshotOf } from '../support/builders.ts';

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  assert.ok(parsed, text);
  return parsed;
}

test('blocks that share exactly one address overlap, blocks that only touch do not', () => {
  assert.equal(overlaps(cidr('10.0.0.255/32'), cidr('10.0.0.0/24')), true, 'the last address');
  assert.equal(overlaps(cidr('10.0.0.0/24'), cidr('10.0.0.255/32')), true, 'either way round');
  assert.equal(overlaps(cidr('10.0.0.0/32'), cidr('10.0.0.0/24')), true, 'the first address');
  assert.equal(overlaps(cidr('10.0.0.0/24'), cidr('10.0.1.0/24')), false);
  assert.equal(overlaps(cidr('10.0.1.0/24'), cidr('10.0.0.0/24')), false);
  assert.equal(overlaps(cidr('::/0'), cidr('0.0.0.0/0')), false, 'no address is in both families');
});

test('a CIDR needs exactly one slash, not at the start', () => {
  assert.equal(parseCidr('/16'), undefined);
  assert.equal(parseCidr('10.0.0.0'), undefined);
  assert.equal(parseCidr('10.0.0.0//16'), undefined);
  assert.equal(parseCidr('1/0/0'), undefined);
});

test('null labels or annotations are absent ones, not malformed', () => {
  const nullLabels = readReflectedSlice({ ...sliceObject(), metadata: { name: 'x', labels: null } });
  assert.ok(isSkip(nullLabels) && nullLabels.skip === 'not-reflected');
  const nullAnnotations = readReflectedSlice(sliceObject({ annotations: null, extra: {} }));
  assert.ok(!isSkip(nullAnnotations) && nullAnnotations.annotations === undefined);
  const listLabels = readReflectedSlice({ ...sliceObject(), metadata: { name: 'x', labels: ['a'] } });
  assert.ok(isSkip(listLabels) && listLabels.skip === 'malformed');
});

test('the trace gives each address its base, pair, reason and flag', () => {
  const snapshot = snapshotOf([fcc(), fcc({ name: 'rome', b: 'rome', aPod: '10.80.0.0/16', aRemapped: '10.80.0.0/16' })]);
  const rewritten = sliceObject({ addresses: [['10.61.0.9']], annotations: { 'liqo.io/shortcut-original-addresses': '{"10.61.0.9":"10.63.0.9"}' } });
  const traces: AddressTrace[] = [];
  const object = sliceObject({ addresses: [['10.63.0.1', '10.80.0.4', '10.61.0.2', '10.200.0.1', '10.63.0.0151']] });
  assert.ok(!isSkip(rewriteEndpointSlice(object, snapshot, {}, (t) => traces.push(t))));
  assert.ok(!isSkip(rewriteEndpointSlice(rewritten, afterRemoval([fcc()]), {}, (t) => traces.push(t))));
  assert.deepEqual(traces.map((t) => [t.input, t.base, t.output, t.reason, t.flagged, t.pair?.fcc ?? null, t.endpoint, t.address]), [
    ['10.63.0.1', '10.63.0.1', '10.61.0.1', 'rewritten', true, 'liqo/cluster2-cluster3', 0, 0],
    ['10.80.0.4', '10.80.0.4', '10.80.0.4', 'identity', true, 'liqo/rome', 0, 1],
    ['10.61.0.2', '10.61.0.2', '10.61.0.2', 'through-shortcut', true, null, 0, 2],
    ['10.200.0.1', '10.200.0.1', '10.200.0.1', 'no-pair', false, null, 0, 3],
    ['10.63.0.0151', '10.63.0.0151', '10.63.0.0151', 'not-canonical', false, null, 0, 4],
    ['10.61.0.9', '10.63.0.9', '10.63.0.9', 'restored', false, null, 0, 0],
  ]);
});
