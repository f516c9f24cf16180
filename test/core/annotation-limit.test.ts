// The 256 KiB annotation limit, counted as the API server counts it: every key and value of the object's
// annotations, in UTF-8 bytes, with ours at the size they are about to have.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSkip } from '../../src/core/endpoint-slice.ts';
import type { Json } from '../../src/core/json.ts';
import { ANNOTATIONS_LIMIT_BYTES, rewriteEndpointSlice } from '../../src/core/rewrite.ts';
import { fcc, sliceObject, snapshotOf } from '../support/builders.ts';

const worked = snapshotOf([fcc()]);
const FLAG = 'liqo.io/shortcut-addresses';
const ORIGINALS = 'liqo.io/shortcut-original-addresses';
/** What the worked example writes: both keys and both values, all ASCII. */
const OURS = FLAG.length + '10.61.0.151'.length + ORIGINALS.length + '{"10.61.0.151":"10.63.0.151"}'.length;

function skipped(annotations: Record<string, Json>): boolean {
  return isSkip(rewriteEndpointSlice(sliceObject({ annotations }), worked));
}

/** `char` repeated to exactly `bytes` UTF-8 bytes (topped up with ASCII). */
function text(char: string, bytes: number): string {
  const size = Buffer.byteLength(char);
  return char.repeat(Math.floor(bytes / size)) + 'a'.repeat(bytes % size);
}

for (const [name, char] of [['ASCII', 'a'], ['two-byte', 'é'], ['three-byte', '€'], ['four-byte (a surrogate pair)', '😀']] as const) {
  test(`another annotation of ${name} characters counts by its UTF-8 bytes: exactly at the limit is fine, one byte over is not`, () => {
    const room = ANNOTATIONS_LIMIT_BYTES - OURS - 'k'.length;
    assert.equal(skipped({ k: text(char, room) }), false);
    assert.equal(skipped({ k: `${text(char, room)}a` }), true);
    assert.equal(skipped({ [char]: text(char, room - Buffer.byteLength(char) + 1) }), false, 'keys count too');
    assert.equal(skipped({ [char]: text(char, room - Buffer.byteLength(char) + 2) }), true);
  });
}

test('only string values count, and our own keys count at their new size, not their old one', () => {
  const room = ANNOTATIONS_LIMIT_BYTES - OURS - 'k'.length;
  assert.equal(skipped({ k: text('a', room), n: 12345 as Json }), false, 'a non-string value is not counted');
  assert.equal(skipped({ k: text('a', room), [FLAG]: 'x'.repeat(100_000) }), false, 'a stale flag is replaced, not added');
});
