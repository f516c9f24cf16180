// instantText prints what Date's toISOString prints, without reading a clock (the core may not).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { instantText } from '../../src/core/instant.ts';

test('instantText agrees with toISOString on leap days, year ends and the epoch', () => {
  for (const text of ['1970-01-01T00:00:00.000Z', '2000-02-29T23:59:59.999Z', '2024-12-31T12:00:00.001Z', '2100-03-01T00:00:00.000Z', '1969-12-31T23:59:59.000Z']) {
    assert.equal(instantText(Date.parse(text)), text);
  }
});

test('instantText agrees with toISOString over years 1900 to 2400', () => {
  fc.assert(fc.property(fc.integer({ min: Date.parse('1900-01-01T00:00:00Z'), max: Date.parse('2400-01-01T00:00:00Z') }), (ms) => {
    assert.equal(instantText(ms), new Date(ms).toISOString());
  }), { numRuns: 2000 });
});
