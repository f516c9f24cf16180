// Which stored ShadowEndpointSlices the controller writes: the pure plan, without an API server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fastJsonPatch from 'fast-json-patch';
import { planShadow, type ShadowPlan } from '../../src/controller/shadow-plan.ts';
import { repairShadowEndpointSlice } from '../../src/core/direct-connections.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { asShadowEndpointSlice } from '../../src/core/shadow-endpoint-slice.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { shadowObject } from '../support/builders.ts';
import { directWorld } from '../support/direct-world.ts';

/** web-0 on cluster3 (the hub sees it at 10.203.0.5), web-1 on cluster4 (10.204.0.6), a hub pod at 10.200.0.9. */
const stored = shadowObject({
  endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }, { addresses: ['10.204.0.6'], pod: 'web-1' }, { addresses: ['10.200.0.9'], pod: 'hub-0' }],
  data: { clusterAddresses: { cluster3: ['10.203.0.5'], cluster4: ['10.204.0.6'] } },
});

/** The repaired object, as the webhook's repair gives it for the same view. */
function written(object: JsonObject, world: Snapshot): JsonObject {
  const repair = repairShadowEndpointSlice(asShadowEndpointSlice(object), world, {});
  assert.equal(repair.kind, 'changed');
  return repair.object;
}

/** The stored object after the planned patch, as the API server applies it (the `test` included). */
function applied(object: JsonObject, plan: ShadowPlan): JsonObject {
  assert.equal(plan.kind, 'write');
  return fastJsonPatch.applyPatch(structuredClone(object), [...plan.write.patch] as fastJsonPatch.Operation[], true, false).newDocument;
}

function addresses(object: JsonObject): string[][] {
  const spec = object.spec as { template: { endpoints: { addresses: string[] }[] } };
  return spec.template.endpoints.map((endpoint) => endpoint.addresses);
}

test('a stored shadow listing addresses of peers the hub remapped is planned for a write, guarded by its resourceVersion', () => {
  const plan = planShadow(stored, directWorld(), {});
  assert.equal(plan.kind, 'write');
  assert.deepEqual(plan.write.patch[0], { op: 'test', path: '/metadata/resourceVersion', value: '42' });
  assert.deepEqual([plan.write.namespace, plan.write.name, plan.write.resourceVersion], ['demo', 'web-abcde', '42']);
  assert.deepEqual(addresses(applied(stored, plan)), [['10.200.0.5'], ['10.200.0.6'], ['10.200.0.9']]);
});

test('applying the planned patch to the stored shadow gives exactly the repaired object', () => {
  for (const world of [directWorld(), directWorld({ tunnels: { cluster3: ['Error'], cluster4: ['Connected'] } })]) {
    const plan = planShadow(stored, world, {});
    assert.deepEqual(applied(stored, plan), written(stored, world));
  }
});

test('a stored shadow already repaired for the current view is in step: the controller writes nothing twice', () => {
  const world = directWorld();
  const repaired = applied(stored, planShadow(stored, world, {}));
  assert.deepEqual(planShadow(repaired, world, {}), { kind: 'in-step' });
});

test('a tunnel that goes moves a repaired shadow\'s peer to the hub path, and one that comes back moves it back', () => {
  const up = directWorld();
  const down = directWorld({ tunnels: { cluster3: ['Error'], cluster4: ['Connected'] } });
  const repaired = applied(stored, planShadow(stored, up, {}));
  const onHubPath = applied(repaired, planShadow(repaired, down, {}));
  // cluster3's pod takes its hub IP's allocated address (10.70.0.12); cluster4 stays repaired.
  assert.deepEqual(addresses(onHubPath), [['10.70.0.12'], ['10.200.0.6'], ['10.200.0.9']]);
  assert.deepEqual(applied(onHubPath, planShadow(onHubPath, up, {})), repaired);
});

test('with nothing left to repair with a repaired shadow is planned back to exactly what the hub wrote, annotations verbatim', () => {
  const repaired = applied(stored, planShadow(stored, directWorld(), {}));
  const restored = applied(repaired, planShadow(repaired, directWorld({ hubKnown: false }), {}));
  assert.deepEqual(restored, stored);
});

test('a listed item without apiVersion and kind (as a list returns it) is planned like the object', () => {
  const { apiVersion: _version, kind: _kind, ...item } = stored;
  const world: Snapshot = directWorld();
  const plan = planShadow(item, world, {});
  assert.equal(plan.kind, 'write');
  assert.deepEqual(plan.write.patch, (planShadow(stored, world, {}) as Extract<ShadowPlan, { kind: 'write' }>).write.patch);
});

test('shadows that are not Liqo\'s reflections, and a stored one without a resourceVersion, are never written', () => {
  const world = directWorld();
  const metadata = stored.metadata as JsonObject;
  const cases: [string, unknown][] = [
    ['no origin label', shadowObject({ origin: null, data: { clusterAddresses: { cluster3: ['10.203.0.5'] } }, endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }] })],
    ['Liqo\'s indirect companion', { ...stored, metadata: { ...metadata, labels: { ...(metadata.labels as JsonObject), 'liqo.io/indirect-endpointslice': 'true' } } }],
    ['an EndpointSlice', { ...stored, apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' }],
    ['no resourceVersion', { ...stored, metadata: { ...metadata, resourceVersion: undefined } }],
    ['not an object', 'shadow'],
  ];
  for (const [what, item] of cases) assert.equal(planShadow(item, world, {}).kind, 'not-ours', what);
});
