// The answer's patch encoding: exactly the base64 of the operations' JSON, whatever text reaches it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodedPatch, patchFor } from '../../src/admission/patch.ts';
import { isSkip, readReflectedSlice } from '../../src/core/endpoint-slice.ts';
import type { SliceRewrite } from '../../src/core/rewrite.ts';
import { sliceObject } from '../support/builders.ts';

function rewriteWith(to: string, annotation: string): SliceRewrite {
  const slice = readReflectedSlice(sliceObject({ annotations: { keep: 'x' } }));
  assert.ok(!isSkip(slice));
  return {
    slice,
    edits: [{ endpoint: 0, address: 0, from: '10.63.0.151', to, kind: 'rewritten' }],
    annotations: [{ key: 'liqo.io/shortcut-addresses', value: annotation }],
    untouched: { 'not-canonical': 0, 'hub-external': 0, 'no-fcc': 0, 'not-hub-external': 0, 'no-pair': 0, 'no-hub-ip': 0, 'no-peer': 0, 'no-shortcut': 0, 'tunnel-down': 0, 'connection-stale': 0 },
    ignored: [],
  };
}

test('the encoded patch is the UTF-8 base64 of the operations, whatever characters they hold', () => {
  for (const annotation of ['', 'é', '😀', '\u00ff', '\u0100']) {
    const rewrite = rewriteWith('10.61.0.151', `10.61.0.151,${annotation}`);
    const json = JSON.stringify(patchFor(rewrite));
    assert.equal(encodedPatch(rewrite), Buffer.from(json, 'utf8').toString('base64'), annotation);
    assert.deepEqual(JSON.parse(Buffer.from(encodedPatch(rewrite), 'base64').toString('utf8')), patchFor(rewrite));
  }
});
