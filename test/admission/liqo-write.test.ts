// A write by Liqo's own EndpointSlice writer on the FCC path: hub addresses it sends are rewritten as before, and a write
// that carries back what we wrote is restored as before. (The stock path's entries on Liqo's writes, which Liqo may
// send itself once a Service flips to its direct connections: test/core/liqo-sent-addresses.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyRewrite } from '../../src/core/rewrite.ts';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview } from '../../src/admission/review.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { indexHubIps } from '../../src/core/hub-ipam.ts';
import { decodeConfiguration, tunnelStates } from '../../src/core/leaf-views.ts';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { afterRemoval, configurationObject, connectionObject, fcc, reviewObject, sliceObject, snapshotOf } from '../support/builders.ts';

/** Stored rewritten: 10.63.0.151 (the hub's view) moved into the shortcut's 10.61.0.151, the original recorded. */
const stored = sliceObject({
  addresses: [['10.61.0.151']],
  annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' },
});

/** The slice as the reviewed write leaves it; `manager` is the write's field manager (UpdateOptions, as a patch's). */
function reviewed(object: Json, snapshot: Snapshot, manager: string | undefined): { addresses: unknown; annotations: unknown } {
  const body = reviewObject(object, { operation: 'UPDATE', oldObject: stored });
  const options = { apiVersion: 'meta.k8s.io/v1', kind: 'UpdateOptions', ...(manager === undefined ? {} : { fieldManager: manager }) };
  const decoded = decodeReview({ ...body, request: { ...(body.request as JsonObject), options } });
  assert.ok(decoded.ok);
  const outcome = reviewEndpointSlice(decoded.value, snapshot);
  const result = outcome.kind === 'patched' ? applyRewrite(outcome.rewrite) : (object as JsonObject);
  const metadata = result.metadata as JsonObject;
  return { addresses: (result.endpoints as { addresses: string[] }[]).map((e) => e.addresses), annotations: metadata.annotations ?? {} };
}

test('a hub address Liqo\'s writer sends is rewritten as before', () => {
  const fresh: JsonObject = { ...stored, endpoints: sliceObject().endpoints ?? [] };
  assert.deepEqual(reviewed(fresh, snapshotOf([fcc()]), 'shadow-endpointslice-controller'), {
    addresses: [['10.61.0.151']],
    annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' },
  });
});

test('a write that carries back what we wrote (our controller, another client, no manager said) is restored as before', () => {
  for (const manager of ['shortcut-webhook', 'kubectl-edit', undefined]) {
    assert.deepEqual(reviewed(stored, afterRemoval([fcc()]), manager), { addresses: [['10.63.0.151']], annotations: {} }, String(manager));
  }
});

/** The same leaf behind a hub whose IPAM is known: the stock path is active, and 10.63.0.151 is still the FCC path's. */
function withHubKnown(fccs: readonly ReturnType<typeof fcc>[], formerFccs: readonly ReturnType<typeof fcc>[] = []): Snapshot {
  return buildSnapshot({
    version: 1, fccs, formerFccs,
    tunnels: tunnelStates([connectionObject('cluster3', 'Connected')]),
    configurations: [configurationObject({ peer: 'cluster1' })].map((c) => decodeConfiguration(c)),
    hub: { known: true, ips: indexHubIps([]), configurations: [] },
  });
}

test('Liqo\'s writer carrying back what we wrote on the FCC path (a reinvoked review) keeps the record, also behind a hub whose IPAM is known', () => {
  const manager = 'shadow-endpointslice-controller';
  for (const known of [false, true]) {
    const view = (fccs: readonly ReturnType<typeof fcc>[]) => (known ? withHubKnown(fccs) : snapshotOf(fccs));
    assert.deepEqual(reviewed(stored, view([fcc()]), manager), {
      addresses: [['10.61.0.151']],
      annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' },
    }, `hub known: ${known}`);
    // The shortcut gone: restored to the hub's address, not left on a shortcut that no longer exists.
    const gone = known ? withHubKnown([], [fcc()]) : afterRemoval([fcc()]);
    assert.deepEqual(reviewed(stored, gone, manager), { addresses: [['10.63.0.151']], annotations: {} }, `hub known: ${known}`);
  }
});
