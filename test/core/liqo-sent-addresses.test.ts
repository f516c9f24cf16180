// A write of Liqo's own writer carries only addresses Liqo sent: none is an output of ours, so the originals annotation
// is not read for it. The case that needs it: a slice resolved by the stock path through our controller, whose
// Service then gains `liqo.io/use-direct-connections`. Liqo's writer now sends the direct address itself, equal to
// our output, while our controller's originals annotation survives its server-side apply; read, that stale entry
// would turn Liqo's address back into the old hub address (or, reallocated, another pod's) on the next pass.
// Topology as hub-resolution.test.ts: hub cluster1, leaf cluster2, peer cluster3 (pods 10.60/16, seen by the hub at
// 10.63/16, by the leaf at 10.61/16); the hub's external CIDR 10.70/16 is seen by the leaf at 10.71/16.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview } from '../../src/admission/review.ts';
import { LIQO_WRITER_MANAGER } from '../../src/core/endpoint-slice.ts';
import { decodeHubIp, indexHubIps } from '../../src/core/hub-ipam.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { decodeConfiguration, tunnelStates } from '../../src/core/leaf-views.ts';
import { applyRewrite, rewriteEndpointSlice, type SliceRewrite } from '../../src/core/rewrite.ts';
import { buildSnapshot, type Snapshot } from '../../src/core/snapshot.ts';
import { configurationObject, connectionObject, fcc, hubIpObject, sliceObject, snapshotOf } from '../support/builders.ts';

const SHORTCUT = 'liqo.io/shortcut-addresses';
const ORIGINAL = 'liqo.io/shortcut-original-addresses';

function world(options: { tunnel?: string; ips?: readonly JsonObject[] } = {}): Snapshot {
  const ips = options.ips ?? [hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' })];
  return buildSnapshot({
    version: 1,
    fccs: [],
    tunnels: tunnelStates([connectionObject('cluster3', options.tunnel ?? 'Connected')]),
    configurations: [configurationObject({ peer: 'cluster1' }), configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16' })]
      .map((c) => decodeConfiguration(c)),
    hub: {
      known: true,
      ips: indexHubIps(ips.flatMap((object) => decodeHubIp(object) ?? [])),
      configurations: [configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16' })].map((c) => decodeConfiguration(c)),
    },
  });
}

function rewrite(object: JsonObject, snapshot: Snapshot, addressesAsSent = false): SliceRewrite {
  const result = rewriteEndpointSlice(object, snapshot, { addressesAsSent });
  assert.ok(!('skip' in result), 'skip' in result ? result.detail : '');
  return result;
}

const addressesOf = (object: JsonObject): unknown => (object.endpoints as { addresses: string[] }[]).map((e) => e.addresses);
const annotationsOf = (object: JsonObject): unknown => (object.metadata as { annotations?: unknown }).annotations;

/** What our controller stored: web-0 resolved, with its originals annotation. */
function storedByOurController(): JsonObject {
  const stored = applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), world()));
  assert.deepEqual(addressesOf(stored), [['10.61.0.151']]);
  assert.deepEqual(annotationsOf(stored), { [SHORTCUT]: '10.61.0.151', [ORIGINAL]: '{"10.61.0.151":"10.71.0.12"}' });
  return stored;
}

test('Liqo\'s writer sending the direct address itself: the stale originals entry is dropped, and later passes keep Liqo\'s address', () => {
  // Liqo's apply: its own address (the same text as our output), our controller's annotation still on the object.
  const liqoWrite = storedByOurController();
  const admitted = applyRewrite(rewrite(liqoWrite, world(), true));
  assert.deepEqual(addressesOf(admitted), [['10.61.0.151']]);
  assert.equal(annotationsOf(admitted), undefined, 'not ours: neither flagged nor recorded');
  // The direct network lost, then the IP reallocated to another pod: our controller's passes leave Liqo's address.
  for (const later of [world({ tunnel: 'Error' }), world({ ips: [hubIpObject({ pod: 'web-1', ip: '10.63.0.9', allocated: '10.70.0.12' })] })]) {
    assert.deepEqual(addressesOf(applyRewrite(rewrite(admitted, later))), [['10.61.0.151']]);
  }
});

test('without Liqo\'s write the originals still restore: our controller\'s pass after a lost direct network gives the hub address back', () => {
  assert.deepEqual(addressesOf(applyRewrite(rewrite(storedByOurController(), world({ tunnel: 'Error' })))), [['10.71.0.12']]);
});

test('Liqo\'s writer sending the hub address, as without the Service annotation: resolved and recorded as before', () => {
  const liqoWrite: JsonObject = { ...storedByOurController(), endpoints: sliceObject({ addresses: [['10.71.0.12']] }).endpoints ?? null };
  const admitted = applyRewrite(rewrite(liqoWrite, world(), true));
  assert.deepEqual(addressesOf(admitted), [['10.61.0.151']]);
  assert.deepEqual(annotationsOf(admitted), { [SHORTCUT]: '10.61.0.151', [ORIGINAL]: '{"10.61.0.151":"10.71.0.12"}' });
});

test('the admission route reads Liqo\'s writer from the review\'s field manager, and only Liqo\'s', () => {
  const review = (fieldManager: string | undefined) => {
    const decoded = decodeReview({
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: {
        uid: 'u1', operation: 'UPDATE', kind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' }, object: storedByOurController(),
        // Stored as our controller left it: the record in the write is the one already stored.
        oldObject: storedByOurController(),
        ...(fieldManager === undefined ? {} : { options: { apiVersion: 'meta.k8s.io/v1', kind: 'PatchOptions', fieldManager, force: true } }),
      },
    });
    assert.ok(decoded.ok);
    return decoded.value;
  };
  assert.equal(review(LIQO_WRITER_MANAGER).fieldManager, 'shadow-endpointslice-controller');
  // In a world where the stored address no longer resolves, only a review of Liqo's writer keeps it.
  const outcome = (fieldManager: string | undefined) => reviewEndpointSlice(review(fieldManager), world({ tunnel: 'Error' }));
  const after = (fieldManager: string | undefined) => {
    const answer = outcome(fieldManager);
    assert.ok(answer.kind === 'patched', answer.kind);
    return applyRewrite(answer.rewrite);
  };
  const liqo = after(LIQO_WRITER_MANAGER);
  assert.deepEqual([addressesOf(liqo), annotationsOf(liqo)], [[['10.61.0.151']], undefined], 'Liqo\'s address kept, the stale annotations gone');
  assert.deepEqual(addressesOf(after('shortcut-webhook')), [['10.71.0.12']], 'our own controller\'s write restores');
  assert.deepEqual(addressesOf(after(undefined)), [['10.71.0.12']]);
});

test('the FCC path\'s entries are read on Liqo\'s writes as ever: a call made again after another webhook keeps the record', () => {
  // LIQO.md's worked example: cluster2 reaches cluster3's pods (10.63/16 through the hub) at 10.61/16.
  const snapshot = snapshotOf([fcc()]);
  const ours = applyRewrite(rewrite(sliceObject({ addresses: [['10.63.0.151']] }), snapshot, true));
  assert.deepEqual(addressesOf(ours), [['10.61.0.151']]);
  const again = rewrite(ours, snapshot, true);
  assert.deepEqual([again.edits, again.annotations], [[], []], 'unchanged, the originals annotation kept');
});
