// parseReviewJson must read every body as JSON.parse does, except that request.oldObject may be left unbuilt and
// request.object's endpoints reduced to what the rewrite reads of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { OLD_OBJECT_NOT_PARSED, parseReviewJson } from '../../src/server/review-json.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { reviewObject, sliceObject } from '../support/builders.ts';
import { thinEndpoints } from '../support/thin-endpoints.ts';

const RUNS = 400;

/** JSON.parse's reading, with oldObject as parseReviewJson says it was left, and the endpoints as it read them. */
function expected(text: string, oldObjectParsed: boolean, endpointsParsed = true): unknown {
  const value: unknown = JSON.parse(text);
  if (oldObjectParsed && endpointsParsed) return value;
  const copy = structuredClone(value) as { request: Record<string, unknown> };
  if (!oldObjectParsed) copy.request.oldObject = OLD_OBJECT_NOT_PARSED;
  const object = copy.request.object;
  if (!endpointsParsed && typeof object === 'object' && object !== null) {
    const slice = object as Record<string, unknown>;
    slice.endpoints = thinEndpoints(slice.endpoints);
  }
  return copy;
}

function read(text: string): { value: unknown; cut: boolean } {
  const value = parseReviewJson(Buffer.from(text));
  const request = typeof value === 'object' && value !== null && 'request' in value ? value.request : undefined;
  const cut = typeof request === 'object' && request !== null && 'oldObject' in request && request.oldObject === OLD_OBJECT_NOT_PARSED;
  return { value, cut };
}

/** Whether the reading took the endpoints' cut: they differ from JSON.parse's and match the rewrite's reading. */
function endpointsCut(value: unknown, text: string, cut: boolean): boolean {
  const plain = expected(text, !cut);
  return !isDeepStrictEqual(value, plain);
}

function assertReadAsJsonParse(text: string): boolean {
  const { value, cut } = read(text);
  assert.deepEqual(value, expected(text, !cut, !endpointsCut(value, text, cut)));
  return cut;
}

/** An UPDATE review in the API server's field order; `extra` overrides fields of request, in place. */
function update(object: Json, oldObject: Json, extra: Record<string, Json> = {}): JsonObject {
  const review = reviewObject(object, { operation: 'UPDATE', oldObject });
  return { ...review, request: { ...(review.request as JsonObject), ...extra } };
}

test('an UPDATE from the API server: everything but oldObject is read, oldObject is not built', () => {
  const slice = sliceObject({ addresses: [['10.63.0.1'], ['10.200.0.2']] });
  const text = JSON.stringify(update(slice, sliceObject({ addresses: [['10.63.0.1']] })));
  const { value, cut } = read(text);
  assert.equal(cut, true);
  assert.deepEqual(value, expected(text, false, false));
  assert.deepEqual((value as { request: { object: unknown } }).request.object, { ...slice, endpoints: thinEndpoints(slice.endpoints) });
});

test('bodies without an object or array oldObject are parsed whole', () => {
  for (const body of [
    reviewObject(sliceObject(), { operation: 'CREATE' }),
    update(sliceObject(), null),
    update(sliceObject(), 'text'),
    { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
  ]) assert.equal(assertReadAsJsonParse(JSON.stringify(body)), false);
  assert.equal(assertReadAsJsonParse('[1,2]'), false);
  assert.equal(assertReadAsJsonParse('{"oldObject":{"request":{}}}'), false);
});

test('spacing around the key, as other clients write it, is fine', () => {
  const body = update(sliceObject(), sliceObject());
  assert.equal(assertReadAsJsonParse(JSON.stringify(body, null, 2)), true);
  assert.equal(assertReadAsJsonParse(JSON.stringify(body, null, '\t')), true);
  // Space before the colon is not looked for: parsed whole.
  assert.equal(assertReadAsJsonParse(JSON.stringify(body).replace('"oldObject":', '"oldObject" :')), false);
});

test('a key "oldObject" inside the object, before the real one, falls back to the whole parse and changes nothing', () => {
  for (const object of [
    sliceObject({ extra: { oldObject: { kind: 'EndpointSlice', spec: [1, 2] } } }),
    sliceObject({ annotations: { oldObject: '{"not":"it"}' } }),
  ]) {
    const text = JSON.stringify(update(object, sliceObject()));
    assert.equal(assertReadAsJsonParse(text), false);
    const read_ = (read(text).value as { request: { object: { endpoints: unknown } } }).request.object;
    assert.deepEqual({ ...read_, endpoints: undefined }, { ...object, endpoints: undefined });
  }
});

test('the key is found however many capital Os come before it', () => {
  for (const count of [0, 1, 63, 64, 65, 500]) {
    const object = sliceObject({ annotations: { note: 'O'.repeat(count), oldObjectx: 'O' } });
    assert.equal(assertReadAsJsonParse(JSON.stringify(update(object, sliceObject()))), true, `${count} Os`);
  }
  assert.equal(assertReadAsJsonParse('O{"request":{"oldObject":{}}}'.slice(1)), true);
  assert.throws(() => parseReviewJson(Buffer.from('OOO')), SyntaxError);
});

test('a quote-escaped key ending in oldObject is not the real one', () => {
  const object = sliceObject({ extra: { 'x"oldObject': { a: 1 } } });
  assertReadAsJsonParse(JSON.stringify(update(object, sliceObject())));
});

test('keys repeated after oldObject win, exactly as with JSON.parse', () => {
  const first = JSON.stringify(update(sliceObject({ name: 'first' }), sliceObject()));
  const text = `${first.slice(0, -2)},"object":${JSON.stringify(sliceObject({ name: 'second' }))},"oldObject":{"again":true}}}`;
  assert.equal(assertReadAsJsonParse(text), false);
  // The first object's endpoints were cut, but the second object wins: its placeholder is missing, so the whole
  // body is parsed.
  const duplicateObject = `${first.slice(0, -2)},"object":${JSON.stringify(sliceObject({ name: 'second', addresses: [['10.63.9.9']] }))}}}`;
  assert.equal(assertReadAsJsonParse(duplicateObject), false);
  const object = (read(duplicateObject).value as { request: { object: { metadata: { name: string }; endpoints: unknown } } }).request.object;
  assert.equal(object.metadata.name, 'second');
  assert.deepEqual(object.endpoints, sliceObject({ addresses: [['10.63.9.9']] }).endpoints);
});

test('strings inside oldObject may hold brackets, quotes, backslashes and any character', () => {
  const tricky = ['}', ']', '{[', '\\', '\\"', '"}', '\\\\"', 'é', '😀', '\u2028', '\u0001', '"oldObject":{'];
  const old = sliceObject({ annotations: Object.fromEntries(tricky.map((text, i) => [`k${i}${text}`, text])) });
  assert.equal(assertReadAsJsonParse(JSON.stringify(update(sliceObject(), old))), true);
});

test('malformed bodies throw as JSON.parse does', () => {
  const good = JSON.stringify(update(sliceObject(), sliceObject()));
  const cutAt = good.indexOf('"oldObject":') + 30;
  for (const bad of [
    good.slice(0, -1), // the envelope is not closed
    good.slice(0, cutAt), // truncated inside oldObject
    `${good}x`, // trailing garbage
    good.replace('"uid":', '"uid"'), // broken before oldObject
    good.replace(',"dryRun":', ',"dryRun" '), // broken after it
    good.replace('"oldObject":{', '"oldObject":{]'), // brackets that do not match
    good.replace('"oldObject":{"apiVersion":"', '"oldObject":{"apiVersion":"\n'), // raw control character in a string
    '', 'null x', '{',
  ]) {
    assert.throws(() => parseReviewJson(Buffer.from(bad)), SyntaxError, bad.slice(0, 60));
  }
});

test('the one difference: a body malformed only inside oldObject\'s balanced brackets is read, oldObject unbuilt', () => {
  const good = JSON.stringify(update(sliceObject(), sliceObject()));
  const bad = good.replace('"oldObject":{"apiVersion":"discovery.k8s.io/v1"', '"oldObject":{"apiVersion" "discovery.k8s.io/v1" tru');
  assert.throws(() => JSON.parse(bad), SyntaxError);
  assert.equal(read(bad).cut, true);
});

test('nesting deeper than any Kubernetes object is left to JSON.parse', () => {
  const depth = 1000;
  const text = JSON.stringify(update(sliceObject(), null)).replace('"oldObject":null', `"oldObject":${'['.repeat(depth)}${']'.repeat(depth)}`);
  assert.equal(assertReadAsJsonParse(text), false);
});

// Any object and oldObject, in the API server's field order, compact or indented.
const anyJson = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });
const container = fc.oneof(fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), anyJson, { maxKeys: 5 }), fc.array(anyJson, { maxLength: 5 }));

test('property: any review reads as JSON.parse reads it, oldObject aside', () => {
  let cuts = 0;
  fc.assert(fc.property(anyJson, fc.oneof(container, anyJson), fc.constantFrom(undefined, 1, '\t'), fc.boolean(), (object, oldObject, indent, trailing) => {
    const body = update(object as Json, oldObject as Json, trailing ? { dryRun: true, options: { kind: 'UpdateOptions', oldObject: [] } } : {});
    if (assertReadAsJsonParse(JSON.stringify(body, null, indent))) cuts++;
  }), { numRuns: RUNS });
  // Not vacuous: most generated bodies do take the cut.
  assert.ok(cuts > RUNS / 3, `${cuts} of ${RUNS} bodies were cut`);
});

test('property: a cut never changes what is read, wherever the text is broken or spliced', () => {
  const base = JSON.stringify(update(sliceObject({ annotations: { a: '}"]' } }), sliceObject({ annotations: { b: '{["' } })));
  fc.assert(fc.property(fc.nat({ max: base.length }), fc.nat({ max: 40 }), fc.string({ unit: 'binary', maxLength: 12 }), (at, drop, insert) => {
    const text = base.slice(0, at) + insert + base.slice(at + drop);
    try {
      JSON.parse(text);
    } catch {
      // JSON.parse refuses it: the cut must refuse it too, unless the damage lies inside oldObject alone.
      try {
        const { cut } = read(text);
        assert.ok(cut, 'accepted a malformed body without cutting oldObject');
      } catch (error) {
        assert.ok(error instanceof SyntaxError);
      }
      return;
    }
    const { value, cut } = read(text);
    assert.deepEqual(value, expected(text, !cut, !endpointsCut(value, text, cut)));
  }), { numRuns: RUNS * 5 });
});

test('a body malformed anywhere in the object\'s endpoints is refused as JSON.parse refuses it', () => {
  const object = sliceObject({ addresses: [['10.63.0.1', '10.63.0.2'], [], ['10.200.0.3']], annotations: { a: '[' } });
  const base = JSON.stringify(update(object, sliceObject()));
  const from = base.indexOf('"endpoints":');
  const to = base.indexOf('"oldObject":');
  let refused = 0;
  fc.assert(fc.property(fc.integer({ min: from, max: to }), fc.nat({ max: 6 }), fc.string({ unit: 'binary', maxLength: 4 }), (at, drop, insert) => {
    const text = base.slice(0, at) + insert + base.slice(at + drop);
    let valid = true;
    try {
      JSON.parse(text);
    } catch {
      valid = false;
    }
    if (valid) {
      assertReadAsJsonParse(text);
      return;
    }
    refused++;
    assert.throws(() => parseReviewJson(Buffer.from(text)), SyntaxError, text.slice(from, to));
  }), { numRuns: RUNS * 5 });
  assert.ok(refused > RUNS, `only ${refused} malformed bodies were tried`);
  for (const bad of ['[01]', '[1.]', '[-]', '[1e]', '[tru]', '[nul]', '[falsy]', '[1,]', '[,1]', '[1 2]', '[{"a" 1}]',
    '[{"a":1,}]', '[{1:2}]', '["\\x"]', '["\\u12G4"]', '["\u0001"]', '[[]', '[{"addresses":["1.2.3.4",]}]',
    '[{"addresses":["1.2.3.4"}]', '[{"addresses":"1.2.3.4"]}]', '[+1]', '[.5]', '[0x1]', '[Infinity]', '[\'a\']']) {
    const text = base.replace(/"endpoints":\[.*?\],"ports"/, `"endpoints":${bad},"ports"`);
    assert.notEqual(text, base);
    assert.throws(() => JSON.parse(text), SyntaxError, bad);
    assert.throws(() => parseReviewJson(Buffer.from(text)), SyntaxError, bad);
  }
});

test('the endpoints are read down to their addresses, exactly as JSON.parse reads those', () => {
  const object = sliceObject({
    addresses: [['10.63.0.1'], [], ['10.200.0.3', 7, null, { a: 1 }, ['x']], ['\u0031\u0030.63.0.4', 'é', '10.63.0.\n']],
    extra: { ports: [] },
  });
  const text = JSON.stringify(update(object, sliceObject()), null, 1);
  const value = read(text).value as { request: { object: { endpoints: unknown } } };
  assert.deepEqual(value.request.object.endpoints, [
    { addresses: ['10.63.0.1'] }, { addresses: [] }, { addresses: ['10.200.0.3', null, null, null, null] },
    { addresses: ['\u0031\u0030.63.0.4', 'é', '10.63.0.\n'] },
  ]);
  // An element that is not an object, or has no addresses array, is read as null; the last addresses key wins.
  const elements = '[1,"x",null,{},{"addresses":"10.63.0.1"},{"addresses":["10.63.0.1"],"addresses":["10.63.0.2"]},{"addresses":["10.63.0.1"],"addresses":{}}]';
  const odd = JSON.stringify(update(sliceObject(), sliceObject())).replace(/"endpoints":\[.*?\],"ports"/, `"endpoints":${elements},"ports"`);
  assert.deepEqual((read(odd).value as typeof value).request.object.endpoints, [null, null, null, null, null, { addresses: ['10.63.0.2'] }, null]);
});

test('an "endpoints" key elsewhere first, or an escaped key in an endpoint, falls back to the whole parse', () => {
  const base = JSON.stringify(update(sliceObject(), sliceObject()));
  // A nested "endpoints" before the object's own: its placeholder lands in spec, not in the object, so the whole
  // body is parsed (oldObject too).
  const nested = base.replace('"metadata":', '"spec":{"endpoints":[{"addresses":["10.0.0.1"]}]},"metadata":');
  assert.deepEqual(read(nested), { value: JSON.parse(nested), cut: false });
  // Written escaped, the key is "addresses" to JSON.parse: the scan leaves the endpoints to it.
  for (const text of [
    base.replace('"addresses":', '"addr\\u0065sses":'),
    base.replace('"addresses":', '"addresses":["10.63.0.9"],"addr\\u0065sses":'),
  ]) {
    assert.notEqual(text, base);
    assert.deepEqual(read(text), { value: expected(text, false), cut: true });
  }
});

test('endpoints that are not an array (null, a string, an object, absent) are read by JSON.parse as they are', () => {
  const base = JSON.stringify(update(sliceObject(), sliceObject()));
  for (const value of ['null', '"x"', '{"addresses":["10.63.0.1"]}', '1']) {
    const text = base.replace(/"endpoints":\[.*?\],"ports"/, `"endpoints":${value},"ports"`);
    assert.notEqual(text, base);
    assert.deepEqual(read(text), { value: expected(text, false), cut: true });
  }
  const absent = base.replace(/"endpoints":\[.*?\],"ports"/, '"ports"');
  assert.deepEqual(read(absent), { value: expected(absent, false), cut: true });
});
