// The route notes what it answered for the healing watch: the stored copy of a patched review, written as
// kube-apiserver writes it, is passed over on the view it was answered on; a dry run, a replica that does not lead
// and a view that moved note nothing the watch could pass over.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import jsonpatch, { type Operation } from 'fast-json-patch';
import type { JsonObject } from '../../src/core/json.ts';
import { AnsweredVersions } from '../../src/util/answered-versions.ts';
import { fcc, reviewObject, sliceObject } from '../support/builders.ts';
import { post1 } from '../support/https-client.ts';
import { startHarness } from '../support/webhook-harness.ts';

/** A map as Go writes it: keys sorted. */
function sorted(map: unknown): unknown {
  return map === undefined ? undefined : Object.fromEntries(Object.entries(map as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The watch line kube-apiserver sends for `object` once stored with the patch the answer carried. */
function storedLine(object: JsonObject, answerBody: string): string {
  const { response } = JSON.parse(answerBody) as { response: { patch?: string } };
  const patch = response.patch === undefined ? [] : JSON.parse(Buffer.from(response.patch, 'base64').toString()) as Operation[];
  const after = jsonpatch.applyPatch(structuredClone(object), patch, true, false).newDocument as JsonObject & { metadata: Record<string, unknown> };
  const { labels, annotations, ...rest } = after.metadata;
  const metadata = { ...rest, uid: 'u-1', resourceVersion: '77', labels: sorted(labels), ...(annotations === undefined ? {} : { annotations: sorted(annotations) }) };
  return JSON.stringify({ type: 'MODIFIED', object: { kind: after.kind, apiVersion: after.apiVersion, metadata, addressType: after.addressType, endpoints: after.endpoints, ports: after.ports } });
}

test('a patched review\'s stored copy is passed over on the view it was answered on; a dry run\'s and a moved view\'s are not', async () => {
  const answered = new AnsweredVersions();
  const harness = await startHarness({ fccs: [fcc()], answered });
  try {
    const slice = sliceObject({ name: 'web', addresses: [['10.63.0.7'], ['10.200.0.1']] });
    const dry = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(slice, { uid: 'dry', dryRun: true })));
    const version = harness.store.current().version;
    assert.equal(answered.passOver('endpointslices', storedLine(slice, dry.body), version), undefined, 'a dry run stores nothing: nothing noted');
    const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(slice, { uid: 'real' })));
    assert.match(answer.body, /"patch"/);
    assert.equal(answered.passOver('endpointslices', storedLine(slice, answer.body), version + 1), undefined, 'a view that moved since: planned');
    assert.deepEqual(answered.passOver('endpointslices', storedLine(slice, answer.body), version), { resourceVersion: '77' });
  } finally {
    await harness.close();
  }
});

test('a replica that does not lead notes nothing: its answers cost the review no copy', async () => {
  const answered = new AnsweredVersions({ wanted: () => false });
  const harness = await startHarness({ fccs: [fcc()], answered });
  try {
    const slice = sliceObject({ name: 'web', addresses: [['10.63.0.7']] });
    const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(reviewObject(slice, { uid: 'real' })));
    assert.equal(answered.passOver('endpointslices', storedLine(slice, answer.body), harness.store.current().version), undefined);
  } finally {
    await harness.close();
  }
});
