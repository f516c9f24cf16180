// The fold behind `status`: per object the decisions explain makes, per peer and per Service the counters, and the
// out-of-step test the controller's plans make.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planShadow } from '../../src/controller/shadow-plan.ts';
import { planSlice } from '../../src/controller/plan.ts';
import { repairShadowEndpointSlice } from '../../src/core/direct-connections.ts';
import type { JsonObject } from '../../src/core/json.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { connectionRecord, objectStatus, pathOf, StatusFold } from '../../src/offline/status.ts';
import { fcc, shadowObject, sliceObject, snapshotOf, tunnelValues } from '../support/builders.ts';
import { directWorld } from '../support/direct-world.ts';

/** A list item: what the API server hands over in a list, without apiVersion and kind. */
function item(object: JsonObject): JsonObject {
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return rest;
}

const webShadow = { endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }, { addresses: ['10.204.0.6'], pod: 'web-1' }],
  data: { clusterAddresses: { cluster3: ['10.203.0.5'], cluster4: ['10.204.0.6'] } } };

test('an object is out of step exactly when the controller\'s plan for it is a write', () => {
  const worlds: [string, Snapshot][] = [
    ['a connected FCC', snapshotOf([fcc()])],
    ['a disconnected FCC', snapshotOf([fcc({ connected: false })])],
    ['a tunnel down', snapshotOf([fcc()], tunnelValues([['cluster3', 'Error']]))],
    ['no FCC', snapshotOf([])],
  ];
  const slices = [
    sliceObject({ addresses: [['10.63.0.151']] }),
    sliceObject({ addresses: [['10.61.0.151']], annotations: { 'liqo.io/shortcut-addresses': '10.61.0.151', 'liqo.io/shortcut-original-addresses': '{"10.61.0.151":"10.63.0.151"}' } }),
    sliceObject({ addresses: [['10.200.0.9'], ['10.63.0.7']] }),
  ];
  let writes = 0;
  for (const [world, snapshot] of worlds) {
    for (const [i, slice] of slices.entries()) {
      const plan = planSlice(item(slice), snapshot, {});
      const status = objectStatus('EndpointSlice', item(slice), snapshot, {});
      assert.equal(status?.outOfStep, plan.kind === 'write', `${world}, slice ${i}`);
      if (plan.kind === 'write') writes++;
    }
  }
  const shadowWorlds: [string, Snapshot][] = [
    ['both peers up', directWorld()],
    ['cluster4 down', directWorld({ tunnels: { cluster3: ['Connected'], cluster4: ['Error'] } })],
    ['the hub unknown', directWorld({ hubKnown: false })],
  ];
  const shadows = [shadowObject(webShadow)];
  const repaired = repairShadowEndpointSlice(shadowObject(webShadow), directWorld(), {});
  if (repaired.kind === 'changed') shadows.push(repaired.object);
  assert.equal(shadows.length, 2, 'the shadow as the webhook stores it');
  for (const [world, snapshot] of shadowWorlds) {
    for (const [i, shadow] of shadows.entries()) {
      const plan = planShadow(item(shadow), snapshot, {});
      assert.equal(objectStatus('ShadowEndpointSlice', item(shadow), snapshot, {})?.outOfStep, plan.kind === 'write', `${world}, shadow ${i}`);
      if (plan.kind === 'write') writes++;
    }
  }
  assert.ok(writes >= 4, `both answers occur (${writes} writes)`);
});

test('a shadow\'s listed addresses take the path of their outcome: repaired and direct go direct, hub-path the hub, unresolved nowhere', () => {
  const snapshot = directWorld({ tunnels: { cluster3: ['Connected'], cluster4: ['Error'] } });
  const status = objectStatus('ShadowEndpointSlice', item(shadowObject(webShadow)), snapshot, {});
  assert.deepEqual(status?.addresses.map((a) => [a.peer, a.input, a.output, a.path, a.reason]), [
    ['cluster3', '10.203.0.5', '10.200.0.5', 'direct', 'repaired'],
    ['cluster4', '10.204.0.6', '10.70.0.13', 'hub', 'tunnel-down'],
  ]);
  const unknown = objectStatus('ShadowEndpointSlice', item(shadowObject(webShadow)), directWorld({ hubKnown: false }), {});
  assert.deepEqual(unknown?.addresses.map((a) => [a.path, a.reason]), [['none', 'hub-unknown'], ['none', 'hub-unknown']]);
});

test('objects the webhook leaves alone are not counted', () => {
  const fold = new StatusFold(snapshotOf([fcc()]), {});
  fold.add('EndpointSlice', item(sliceObject({ managedBy: 'endpointslice-controller.k8s.io' })));
  fold.add('EndpointSlice', item(sliceObject({ destination: null })));
  fold.add('EndpointSlice', 'not an object');
  fold.add('ShadowEndpointSlice', item(shadowObject({ ...webShadow, origin: null })));
  assert.deepEqual(fold.totals(), { endpointSlices: 0, shadowEndpointSlices: 0, services: 0, addresses: { direct: 0, hub: 0, none: 0 }, outOfStep: { endpointSlices: 0, shadowEndpointSlices: 0 } });
  assert.equal(fold.cluster(), undefined);
});

test('a peer\'s path is its addresses\' one, mixed when they differ, none when it has none on a path', () => {
  assert.equal(pathOf({ direct: 3, hub: 0, none: 0 }), 'direct');
  assert.equal(pathOf({ direct: 0, hub: 2, none: 5 }), 'hub');
  assert.equal(pathOf({ direct: 1, hub: 1, none: 0 }), 'mixed');
  assert.equal(pathOf({ direct: 0, hub: 0, none: 4 }), 'none');
  assert.equal(pathOf({ direct: 0, hub: 0, none: 0 }), 'none');
});

test('a Connection\'s since is its latest status write in managedFields, else its creation time', () => {
  const base = { metadata: { name: 'gw', namespace: 'liqo-tenant-cluster3', labels: { 'liqo.io/remote-cluster-id': 'cluster3' }, creationTimestamp: '2026-11-01T00:00:00Z' }, status: { value: 'Error' } };
  assert.deepEqual(connectionRecord({ ...base, metadata: { ...base.metadata, managedFields: [
    { manager: 'liqo-gateway', subresource: 'status', time: '2026-11-20T10:00:00Z' },
    { manager: 'liqo-gateway', subresource: 'status', time: '2026-11-21T09:00:00Z' },
    { manager: 'liqoctl', time: '2026-11-25T00:00:00Z' },
  ] } }), { name: 'liqo-tenant-cluster3/gw', peer: 'cluster3', state: 'Error', since: '2026-11-21T09:00:00Z' });
  assert.equal(connectionRecord(base)?.since, '2026-11-01T00:00:00Z');
  assert.equal(connectionRecord({ ...base, status: {} })?.state, '(no status)');
  assert.equal(connectionRecord({ metadata: { name: 'x' } }), undefined, 'no peer label');
  assert.equal(connectionRecord(null), undefined);
});

test('an EndpointSlice address Liqo put in the leaf\'s view of a peer\'s pods goes direct while that peer\'s tunnel is up, and nowhere when it is down', () => {
  // The slice Liqo's writer makes from a repaired shadow: cluster3's pod in the leaf's view of cluster3 (10.213/16).
  const slice = item(sliceObject({ addresses: [['10.213.0.5']] }));
  const up = objectStatus('EndpointSlice', slice, directWorld(), {});
  assert.deepEqual(up?.addresses.map((a) => [a.peer, a.path, a.reason]), [['cluster3', 'direct', 'not-hub-external']]);
  const down = objectStatus('EndpointSlice', slice, directWorld({ tunnels: { cluster3: ['Error'], cluster4: ['Connected'] } }), {});
  assert.deepEqual(down?.addresses.map((a) => [a.peer, a.path, a.reason]), [['cluster3', 'none', 'not-hub-external']]);
  // An address in no peer's view is the hub's own pod, on the hub path.
  const own = objectStatus('EndpointSlice', item(sliceObject({ addresses: [['10.99.0.5']] })), directWorld(), {});
  assert.deepEqual(own?.addresses.map((a) => [a.peer, a.path]), [['cluster1', 'hub']]);
});
