// Which stored slices the controller writes: the pure plan, without an API server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planSlice } from '../../src/controller/plan.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { fcc, sliceObject, snapshotOf } from '../support/builders.ts';

test('a stored slice with a hub address in a usable pair is planned for a write', () => {
  assert.equal(planSlice(sliceObject(), snapshotOf([fcc()]), {}).kind, 'write');
});

test('Liqo\'s indirect companion slice is never written, whatever its addresses', () => {
  const slice = sliceObject({ name: 'web-abcde-indirect' });
  const metadata = slice.metadata as JsonObject;
  const indirect = { ...slice, metadata: { ...metadata, labels: { ...(metadata.labels as JsonObject), 'liqo.io/indirect-endpointslice': 'true' } } };
  assert.equal(planSlice(indirect, snapshotOf([fcc()]), {}).kind, 'not-ours');
});
