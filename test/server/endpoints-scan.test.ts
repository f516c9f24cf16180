// The endpoints scan: the SIMD kernel must give the scalar scan's answer on every input, and whatever the scan
// accepts JSON.parse must accept too, with the same elements and addresses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_DEPTH } from '../../src/server/container-end.ts';
import {
  endpointsFrom, MAX_ENDPOINTS, scanEndpoints, scanEndpointsScalar, usesKernel, type EndpointsScan,
} from '../../src/server/endpoints-scan.ts';
import { sliceObject } from '../support/builders.ts';
import { thinEndpoints } from '../support/thin-endpoints.ts';

const RUNS = 1500;

function copied(scan: EndpointsScan | undefined): unknown {
  return scan === undefined ? undefined : { start: scan.start, end: scan.end, count: scan.count, spans: [...scan.spans.subarray(0, 2 * scan.count)] };
}

/** The scalar scan of `text` placed at `offset` in a body, after checking the kernel agrees. */
function scan(text: string, offset = 0): EndpointsScan | undefined {
  const body = Buffer.concat([Buffer.alloc(offset, 0x20), Buffer.from(text)]);
  const kernel = copied(scanEndpoints(body, offset));
  const scalar = scanEndpointsScalar(body, offset);
  assert.deepEqual(kernel, copied(scalar), `kernel and scalar scan differ on ${JSON.stringify(text.slice(0, 200))}`);
  return scalar;
}

/** Accepted, ending where the text ends, and read as JSON.parse reads it. */
function assertReadAsJsonParse(text: string, offset = 0): void {
  const body = Buffer.concat([Buffer.alloc(offset, 0x20), Buffer.from(text)]);
  const result = scan(text, offset);
  assert.ok(result !== undefined, `refused ${JSON.stringify(text.slice(0, 200))}`);
  assert.equal(result.end, body.length);
  assert.deepEqual(endpointsFrom(body, result), thinEndpoints(JSON.parse(body.toString())));
}

/** JSON values whose object keys need no escape in JSON text: the scan reads any of those. */
const plainKey = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz-_./ 0123456789é'), maxLength: 10 });
const plainJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.string({ unit: 'binary' }),
    fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(plainKey, tie('value'), { maxKeys: 4 })),
})).value;
const address = fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ unit: 'binary', maxLength: 6 }), plainJson);
const endpoint = fc.oneof(
  fc.record({ addresses: fc.array(address, { maxLength: 3 }), conditions: plainJson, nodeName: fc.string() }, { requiredKeys: [] }),
  fc.dictionary(plainKey, plainJson, { maxKeys: 3 }),
  plainJson,
);
const endpointsText = fc.tuple(fc.array(endpoint, { maxLength: 8 }), fc.constantFrom(undefined, 1, '\t', '\r\n')).map(([endpoints, indent]) =>
  JSON.stringify(endpoints, null, indent as string | number | undefined));

test('the SIMD kernel is in use on this Node, so the comparisons below compare two implementations', () => {
  assert.equal(usesKernel(), true);
});

test('the bench\'s kind of slice reads as JSON.parse reads it, compact or indented', () => {
  const { endpoints } = sliceObject({ addresses: Array.from({ length: 100 }, (_, i) => [`10.63.${i}.10`]) });
  assertReadAsJsonParse(JSON.stringify(endpoints));
  assertReadAsJsonParse(JSON.stringify(endpoints, null, 2), 17);
  assertReadAsJsonParse('[]');
  assertReadAsJsonParse(' [ ] '.trim());
  assertReadAsJsonParse('[ {"addresses" : [ "10.0.0.1" , "10.0.0.2" ] } , {} ]');
});

test('property: any endpoints array with plain keys reads as JSON.parse reads it', () => {
  fc.assert(fc.property(endpointsText, fc.nat(40), (text, offset) => assertReadAsJsonParse(text, offset)), { numRuns: RUNS });
});

test('property: whatever the scan accepts, JSON.parse accepts, wherever the text is broken', () => {
  let refused = 0;
  fc.assert(fc.property(endpointsText, fc.nat(), fc.nat({ max: 3 }), fc.string({ unit: 'binary', maxLength: 3 }), (text, at, drop, insert) => {
    const position = at % (text.length + 1);
    const broken = text.slice(0, position) + insert + text.slice(position + drop);
    const result = scan(broken);
    if (result === undefined) {
      refused++;
      return;
    }
    // The scan vouches for the array up to its end only; what follows is for the caller's JSON.parse. The bytes are
    // what the server reads, so JSON.parse gets them decoded as the server decodes them.
    const array = Buffer.from(broken).subarray(0, result.end).toString();
    let parsed: unknown;
    assert.doesNotThrow(() => { parsed = JSON.parse(array); }, `accepted ${JSON.stringify(array)}`);
    assert.deepEqual(endpointsFrom(Buffer.from(broken), result), thinEndpoints(parsed));
  }), { numRuns: RUNS * 4 });
  assert.ok(refused > RUNS, `only ${refused} broken texts were refused`);
});

test('every prefix of a valid array is refused: an array that does not close is not read', () => {
  const text = JSON.stringify(sliceObject({ addresses: [['10.63.0.1', '10.63.0.2'], []] }).endpoints).replace('"web-0"', '"w\\u0065b-0\\n"');
  for (let end = 0; end < text.length; end++) assert.equal(scan(text.slice(0, end)), undefined, text.slice(0, end));
});

test('the JSON grammar, token by token', () => {
  const valid = ['[0]', '[-0]', '[1.5e-3]', '[1E+10]', '[12e5]', '[-12.25]', '[true,false,null]', '["\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00"]',
    '["\u007f\u0080é😀"]', '[[[]],{}]', '[{"":1,"a":{"b":[]}}]', '[ 1 , 2 ]', '[\t1\n,\r2]'];
  for (const text of valid) assertReadAsJsonParse(text);
  const invalid = ['', '[', ']', '[01]', '[1.]', '[.5]', '[-]', '[+1]', '[1e]', '[1e+]', '[0x1]', '[Infinity]', '[NaN]', '[tru]',
    '[nul]', '[falsy]', '[True]', '[1,]', '[,1]', '[1 2]', '[{"a" 1}]', '[{"a":1,}]', '[{,}]', '[{1:2}]', '[{"a"}]', '["\\x"]',
    '["\\u12G4"]', '["\\u123"]', '["\u0001"]', '["\u001f"]', '["a\nb"]', '[[]', '[[}]', '[{]}', '[}', '["abc]', "['a']", '[\u00a01]',
    '[\ufeff1]', '[\u000b1]', '[\f1]', '[/**/1]', '[1]]'];
  for (const text of invalid) {
    if (text === '[1]]') {
      // The array ends at its own bracket: what follows is the caller's to read.
      assert.equal(scan(text)?.end, 3);
      continue;
    }
    assert.throws(() => JSON.parse(text), SyntaxError, text);
    assert.equal(scan(text), undefined, text);
  }
  // Valid JSON that is not an array is not an endpoints array.
  for (const text of ['{"a":1}', '"[]"', '1', 'null']) assert.equal(scan(text), undefined, text);
});

test('addresses: the last key wins, a non-array clears it, and only an element\'s own key counts', () => {
  const text = '[{"addresses":["10.0.0.1"],"addresses":["10.0.0.2"]},{"addresses":["10.0.0.1"],"addresses":null},'
    + '{"x":{"addresses":["10.0.0.3"]}},{"addresses":[["10.0.0.4"],"10.0.0.5"]},["10.0.0.6"],{"addressesx":[],"addresse":[]}]';
  assertReadAsJsonParse(text);
  const result = scan(text);
  assert.deepEqual(endpointsFrom(Buffer.from(text), result ?? assert.fail()), [
    { addresses: ['10.0.0.2'] }, null, null, { addresses: [null, '10.0.0.5'] }, null, null,
  ]);
});

test('what the scan leaves to JSON.parse: an escaped key in an element, more than MAX_ENDPOINTS, nesting past MAX_DEPTH', () => {
  assert.equal(scan('[{"addr\\u0065sses":["10.0.0.1"]}]'), undefined);
  assert.equal(scan('[{"a\\"":1}]'), undefined);
  // Deeper keys may be escaped: they are not an element's own.
  assertReadAsJsonParse('[{"x":{"a\\"b":1},"addresses":["10.0.0.1"]}]');
  assertReadAsJsonParse(JSON.stringify(Array.from({ length: MAX_ENDPOINTS }, () => ({ addresses: ['10.0.0.1'] }))));
  assert.equal(scan(JSON.stringify(Array.from({ length: MAX_ENDPOINTS + 1 }, () => 1))), undefined);
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  assertReadAsJsonParse(nested(MAX_DEPTH));
  assert.equal(scan(nested(MAX_DEPTH + 1)), undefined);
});

test('strings of any length, across 16-byte blocks, and a body larger than the kernel memory has so far', () => {
  for (let length = 0; length < 70; length++) {
    for (const filler of ['a', 'é', '\\n', '\\u0041']) {
      const text = `["${filler.repeat(length)}",{"addresses":["${filler.repeat(length)}"]}]`;
      assertReadAsJsonParse(text, length % 17);
    }
  }
  const big = JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ addresses: [`10.0.${i % 256}.1`], pad: 'x'.repeat(300) })));
  assert.ok(big.length > 256 * 1024);
  assertReadAsJsonParse(big);
  assertReadAsJsonParse('[{"addresses":["10.0.0.1"]}]');
});
