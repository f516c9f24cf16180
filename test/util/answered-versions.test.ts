// The healing watch passes over the stored copy of a version the webhook just answered: only where the view has not
// moved and the watch's line carries every member the answer left, verbatim. Lines built as kube-apiserver writes
// them (Go's encoding/json: fields in struct order, map keys sorted).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnsweredVersions, type AnsweredMember } from '../../src/util/answered-versions.ts';

const ENDPOINTS = [{ addresses: ['10.61.0.7'], conditions: { ready: true }, targetRef: { kind: 'Pod', namespace: 'demo', name: 'web-0' } }];
const LABELS = { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.liqo.io', 'liqo.io/managed-by': 'shadowendpointslice' };
const ANNOTATIONS = { 'liqo.io/shortcut-addresses': '10.61.0.7', 'liqo.io/shortcut-original-addresses': '{"10.61.0.7":"10.63.0.7"}' };

/** `annotations` null: the answer leaves the slice none. */
function members(endpoints: unknown = ENDPOINTS, annotations: Record<string, string> | null = ANNOTATIONS): AnsweredMember[] {
  return [
    { name: 'labels', text: JSON.stringify(LABELS) },
    { name: 'annotations', text: annotations === null ? undefined : JSON.stringify(annotations) },
    { name: 'addressType', text: '"IPv4"' },
    { name: 'endpoints', text: JSON.stringify(endpoints) },
  ];
}

/** A watch line as kube-apiserver writes it for the slice `demo/web`. */
function line(options: { type?: string; name?: string; endpoints?: unknown; annotations?: Record<string, string> | undefined; labels?: Record<string, string> } = {}): string {
  const annotations = 'annotations' in options ? options.annotations : ANNOTATIONS;
  const metadata = {
    name: options.name ?? 'web', namespace: 'demo', uid: 'u-1', resourceVersion: '4242', generation: 3, creationTimestamp: '2026-11-28T10:00:00Z',
    labels: options.labels ?? LABELS, ...(annotations === undefined ? {} : { annotations }),
    managedFields: [{ manager: 'shadow-endpointslice-controller', operation: 'Apply', fieldsV1: { 'f:endpoints': {}, 'f:metadata': { 'f:labels': {} } } }],
  };
  const object = { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata, addressType: 'IPv4', endpoints: options.endpoints ?? ENDPOINTS, ports: [{ name: 'http', port: 80 }] };
  return JSON.stringify({ type: options.type ?? 'MODIFIED', object });
}

test('the copy of the version answered on this view is passed over with its resourceVersion, once', () => {
  const answered = new AnsweredVersions();
  answered.note('endpointslices', 'demo', 'web', 7, members());
  assert.deepEqual(answered.passOver('endpointslices', line(), 7), { resourceVersion: '4242' });
  // The answer is used up: the same line again (another write storing the same object) is planned.
  assert.equal(answered.passOver('endpointslices', line(), 7), undefined);
});

test('anything else is planned: another view, another object or kind, a DELETED line, a member not as answered', () => {
  const cases: [string, (answered: AnsweredVersions) => unknown][] = [
    ['the view moved', (a) => a.passOver('endpointslices', line(), 8)],
    ['another object', (a) => a.passOver('endpointslices', line({ name: 'api' }), 7)],
    ['another kind', (a) => a.passOver('shadowendpointslices', line(), 7)],
    ['a deletion', (a) => a.passOver('endpointslices', line({ type: 'DELETED' }), 7)],
    ['stored unreviewed: the hub\'s address', (a) => a.passOver('endpointslices', line({ endpoints: [{ ...ENDPOINTS[0], addresses: ['10.63.0.7'] }] }), 7)],
    ['another pod behind the same address', (a) => a.passOver('endpointslices', line({ endpoints: [{ ...ENDPOINTS[0], targetRef: { kind: 'Pod', namespace: 'demo', name: 'web-1' } }] }), 7)],
    ['one more endpoint', (a) => a.passOver('endpointslices', line({ endpoints: [...ENDPOINTS, ...ENDPOINTS] }), 7)],
    ['a record forged in beside', (a) => a.passOver('endpointslices', line({ annotations: { ...ANNOTATIONS, 'liqo.io/shortcut-shadow-original-addresses': '{}' } }), 7)],
    ['the records gone', (a) => a.passOver('endpointslices', line({ annotations: undefined }), 7)],
    ['a label changed', (a) => a.passOver('endpointslices', line({ labels: { ...LABELS, 'offloading.liqo.io/origin': 'hub-2' } }), 7)],
    ['not a watch line', (a) => a.passOver('endpointslices', 'not json', 7)],
  ];
  for (const [what, attempt] of cases) {
    const answered = new AnsweredVersions();
    answered.note('endpointslices', 'demo', 'web', 7, members());
    assert.equal(attempt(answered), undefined, what);
    // And the answer still stands for its own copy.
    assert.ok(answered.passOver('endpointslices', line(), 7) !== undefined, `${what}: the answered copy still passes`);
  }
});

test('an answer without annotations matches only a copy without them; the newest answer of an object replaces the older', () => {
  const answered = new AnsweredVersions();
  answered.note('endpointslices', 'demo', 'web', 7, members(ENDPOINTS, null));
  assert.equal(answered.passOver('endpointslices', line(), 7), undefined, 'the stored copy has annotations the answer has not');
  assert.ok(answered.passOver('endpointslices', line({ annotations: undefined }), 7) !== undefined);
  const older = [{ ...ENDPOINTS[0], addresses: ['10.61.0.9'] }];
  answered.note('endpointslices', 'demo', 'web', 7, members(older));
  answered.note('endpointslices', 'demo', 'web', 7, members());
  assert.equal(answered.passOver('endpointslices', line({ endpoints: older }), 7), undefined, 'an older answer is gone');
  assert.ok(answered.passOver('endpointslices', line(), 7) !== undefined);
});

test('the answers kept are bounded: past the capacity the oldest is forgotten', () => {
  const answered = new AnsweredVersions({ capacity: 2 });
  for (const name of ['a', 'b', 'c']) answered.note('endpointslices', 'demo', name, 1, members());
  assert.equal(answered.passOver('endpointslices', line({ name: 'a' }), 1), undefined);
  assert.ok(answered.passOver('endpointslices', line({ name: 'b' }), 1) !== undefined);
  assert.ok(answered.passOver('endpointslices', line({ name: 'c' }), 1) !== undefined);
});
