// The end of a JSON container: the SIMD kernel must give the byte loop's answer on every input, and the byte loop
// must find the end JSON.stringify wrote.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { endOfContainer, endOfContainerScalar, MAX_DEPTH, usesKernel } from '../../src/server/container-end.ts';

const RUNS = 2000;

function both(text: string | Uint8Array, start = 0): number {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const scalar = endOfContainerScalar(bytes, start);
  assert.equal(endOfContainer(bytes, start), scalar, `kernel and byte loop differ on ${JSON.stringify(Buffer.from(bytes).toString())}`);
  return scalar;
}

test('the SIMD kernel is in use on this Node, so the comparisons below compare two implementations', () => {
  assert.equal(usesKernel(), true);
});

test('a container written by JSON.stringify ends where it was written, whatever follows', () => {
  const containers = fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()));
  fc.assert(fc.property(containers, fc.string(), fc.nat(200), (value, after, pad) => {
    const text = JSON.stringify(value);
    const prefix = 'x'.repeat(pad);
    assert.equal(both(`${prefix}${text}${after}`, pad), pad + Buffer.byteLength(text));
  }), { numRuns: RUNS });
});

test('strings full of quotes, backslashes and brackets, across every 64-byte boundary', () => {
  const nasty = fc.string({ unit: fc.constantFrom('"', '\\', '{', '}', '[', ']', 'a', 'é', '\u2028') });
  fc.assert(fc.property(fc.array(nasty, { maxLength: 12 }), fc.nat(130), (strings, pad) => {
    const text = JSON.stringify({ [strings.join('')]: strings });
    assert.equal(both(`${' '.repeat(pad)}${text}]`, pad), pad + Buffer.byteLength(text));
  }), { numRuns: RUNS });
  // An escaped quote with its backslash as the last byte of one block and the quote as the first of the next.
  for (let at = 0; at < 200; at++) {
    const text = `{"${'a'.repeat(at)}\\"}":1}`;
    assert.equal(both(text), text.length, `backslash at ${at + 2}`);
    const runs = `{"${'a'.repeat(at)}${'\\\\'.repeat(3)}":[1]}`;
    assert.equal(both(runs), runs.length, `three escaped backslashes at ${at + 2}`);
    const odd = `{"${'a'.repeat(at)}\\\\\\"}":1}`;
    assert.equal(both(odd), odd.length, `a run of three backslashes escaping a quote at ${at + 2}`);
  }
});

test('any bytes at all: the kernel and the byte loop agree, ended or not', () => {
  // Mostly plain bytes, so that inputs get past their first 64-byte block before something stops the scan.
  const unit = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(0x61, 0x20, 0x3a, 0x2c, 0xc3, 0xa9) },
    { weight: 1, arbitrary: fc.constantFrom(0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x5c, 0x0a, 0x01) },
  );
  fc.assert(fc.property(fc.constantFrom(0x7b, 0x5b), fc.array(unit, { maxLength: 400 }), (first, rest) => {
    both(Uint8Array.from([first, ...rest]));
  }), { numRuns: RUNS * 5 });
});

test('one bad byte in valid JSON, in any block: both stop there if it comes before the end, and only then', () => {
  const containers = fc.oneof(fc.array(fc.jsonValue(), { minLength: 1 }), fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }));
  fc.assert(fc.property(containers, fc.nat(), fc.constantFrom(0x01, 0x0a, 0x1f, 0x5c), (value, position, bad) => {
    const text = Buffer.from(`${JSON.stringify(value)},"after":"${'x'.repeat(70)}"}`);
    const at = 1 + (position % (text.length - 1));
    both(Buffer.concat([text.subarray(0, at), Uint8Array.of(bad), text.subarray(at + 1)]));
  }), { numRuns: RUNS * 5 });
  // Bad bytes at every position around the first block boundaries, the container ending in a later block.
  for (let at = 40; at < 200; at++) {
    assert.equal(both(`{"a":"${'x'.repeat(at)}\u0001"}`), -1, `a control character in a string at ${at + 6}`);
    assert.equal(both(`{"a":${' '.repeat(at)}\\"b"}`), -1, `a backslash outside a string at ${at + 5}`);
  }
});

test('what JSON never has ends the scan with -1, but only when it comes before the end', () => {
  assert.equal(both('{"a":"b\u0001c"}'), -1, 'a raw control character in a string');
  assert.equal(both('{"a":"b\\\u000ac"}'), -1, 'a raw control character escaped');
  assert.equal(both('{"a":\\"b"}'), -1, 'a backslash outside a string');
  assert.equal(both('{"a":[1}]'), -1, 'brackets of the wrong kind');
  assert.equal(both('{"a":"b"'), -1, 'not ended');
  assert.equal(both('{"a":"b}'), -1, 'a string not ended');
  assert.equal(both('{"a":\n1}\u0001\\"'), 8, 'whitespace outside strings is fine, and what follows the end is not read');
  assert.equal(both('{"a":"é\u2028"}'), Buffer.byteLength('{"a":"é\u2028"}'));
});

test(`nesting deeper than ${MAX_DEPTH} levels is given up on, as deep as that is read`, () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  assert.equal(both(nested(MAX_DEPTH)), 2 * MAX_DEPTH);
  assert.equal(both(nested(MAX_DEPTH + 1)), -1);
});

test('a body larger than the kernel memory has so far grows it, and smaller ones after it still read right', () => {
  const large = JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ name: `item-${i}`, note: 'a "quoted" \\ note' })) });
  assert.ok(large.length > 4 * 65_536);
  assert.equal(both(`${large},"after":{}`), large.length);
  assert.equal(both('{"small":[]}'), 12);
});
