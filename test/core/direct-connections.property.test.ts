// Properties of the ShadowEndpointSlice repair over generated shadows and views: idempotent, the patch gives the
// result, a view with nothing to repair with gives back the hub's shadow verbatim, no address ever becomes another
// pod's, and no forged record is restored outside the spaces Liqo maps for another cluster.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { shadowPatchFor } from '../../src/admission/shadow-patch.ts';
import { repairShadowEndpointSlice } from '../../src/core/direct-connections.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { HUB_NOT_READ } from '../../src/core/hub-resolution.ts';
import { buildSnapshot, type Snapshot } from '../../src/core/snapshot.ts';
import { hubIpObject, shadowObject } from '../support/builders.ts';
import {
  directWorld, emptyWorld, hubToCluster2, hubToPeer, leafToHub, leafToPeer,
} from '../support/direct-world.ts';

const RUNS = 300;
const PEERS = ['cluster3', 'cluster4'] as const;
const host = fc.integer({ min: 0, max: 5 });

/** Small pools, so that addresses, pods and IPs meet often: hub pods, and each peer's pods as the hub sees them. */
const addressArbitrary = fc.oneof(
  host.map((h) => `10.200.0.${h}`),
  host.map((h) => `10.203.0.${h}`),
  host.map((h) => `10.204.0.${h}`),
  fc.constantFrom('010.203.0.1', '', 'fd00:203::1', '192.0.2.1'),
);
const podArbitrary = fc.option(fc.constantFrom('web-0', 'web-1', 'web-2', 'db-0'), { nil: null });

const worldArbitrary = fc.record({
  // Biased towards a world where repairs happen, so that their clashes with other addresses are tried often.
  tunnels: fc.record({
    cluster3: fc.constantFrom(['Connected'], ['Connected'], ['Error'], ['Connected', 'Error'], []),
    cluster4: fc.constantFrom(['Connected'], ['Connected'], ['Error'], []),
  }),
  leafPeers: fc.oneof({ weight: 3, arbitrary: fc.constant([...PEERS]) }, { weight: 2, arbitrary: fc.subarray([...PEERS]) })
    .map((peers): (typeof PEERS)[number][] => [...peers]),
  leafHub: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  remapped: fc.record({ cluster3: fc.boolean(), cluster4: fc.boolean() }),
  hubKnown: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  ips: fc.array(fc.record({ pod: fc.constantFrom('web-0', 'web-1', 'web-2', 'db-0'), ip: addressArbitrary, allocated: host.map((h) => `10.70.0.${h}`) }), { maxLength: 6 }),
}).map((spec): Snapshot => {
  const view = (peer: string) => (peer === 'cluster3' ? '10.203.0.0/16' : '10.204.0.0/16');
  return directWorld({
    tunnels: spec.tunnels,
    leaf: [
      ...(spec.leafHub ? [leafToHub] : []),
      ...spec.leafPeers.map((peer) => leafToPeer(peer, [peer === 'cluster3' ? '10.213.0.0/16' : '10.214.0.0/16'], [spec.remapped[peer] ? '10.200.0.0/16' : view(peer)])),
    ],
    hubConfigurations: [hubToCluster2, ...PEERS.map((peer) => hubToPeer(peer, [view(peer)], [spec.remapped[peer] ? '10.200.0.0/16' : view(peer)]))],
    hubKnown: spec.hubKnown,
    ips: spec.ips.map((ip) => hubIpObject({ ...ip, pod: ip.pod })),
  });
});

/** A shadow as the hub's virtual kubelet writes it: none of the repair's own annotations. */
const hubShadowArbitrary = fc.record({
  endpoints: fc.array(fc.record({ addresses: fc.array(addressArbitrary, { maxLength: 3 }), pod: podArbitrary }), { maxLength: 5 }),
  lists: fc.record({
    cluster3: fc.array(fc.oneof({ weight: 4, arbitrary: host.map((h) => `10.203.0.${h}`) }, { weight: 1, arbitrary: addressArbitrary }), { maxLength: 4 }),
    cluster4: fc.array(fc.oneof({ weight: 4, arbitrary: host.map((h) => `10.204.0.${h}`) }, { weight: 1, arbitrary: addressArbitrary }), { maxLength: 4 }),
    cluster5: fc.array(addressArbitrary, { maxLength: 2 }),
  }, { requiredKeys: [] }),
  other: fc.option(fc.constantFrom('kept', 'x'.repeat(40)), { nil: undefined }),
  addressType: fc.constantFrom('IPv4', 'IPv4', 'IPv4', 'IPv6'),
}).map(({ endpoints, lists, other, addressType }) => shadowObject({
  addressType,
  endpoints,
  data: { clusterAddresses: lists },
  ...(other === undefined ? {} : { annotations: { other } }),
})).map((shadow): JsonObject => JSON.parse(JSON.stringify(shadow)));

/** Anything a writer could send, our own annotations (stale, foreign or junk) included. */
const anyShadowArbitrary = fc.tuple(hubShadowArbitrary, fc.dictionary(
  fc.constantFrom('liqo.io/shortcut-shadow-original-addresses', 'liqo.io/shortcut-original-direct-connections-data', 'liqo.io/direct-connections-data'),
  fc.oneof(fc.json(), fc.constant('{"10.200.0.1":"10.203.0.1"}'), fc.constant('{"clusterAddresses":{"cluster3":["10.203.0.1"]}}')),
  { maxKeys: 2 },
)).map(([shadow, extra]): JsonObject => {
  const metadata = shadow.metadata as JsonObject;
  return { ...shadow, metadata: { ...metadata, annotations: { ...(metadata.annotations as JsonObject | undefined), ...extra } } };
});

function f(object: Json, snapshot: Snapshot): JsonObject {
  const result = repairShadowEndpointSlice(object, snapshot, {});
  assert.notEqual(result.kind, 'skip');
  return result.kind === 'changed' ? result.object : result.kind === 'unchanged' ? result.shadow.object : {};
}

function endpointsOf(object: JsonObject): { addresses: string[]; targetRef?: { name: string } }[] {
  return (object.spec as { template: { endpoints: { addresses: string[]; targetRef?: { name: string } }[] } }).template.endpoints;
}

test('repairing twice gives the same shadow as repairing once', () => {
  fc.assert(fc.property(anyShadowArbitrary, worldArbitrary, (shadow, snapshot) => {
    const once = f(shadow, snapshot);
    assert.deepEqual(f(once, snapshot), once);
  }), { numRuns: RUNS });
});

test('the patch applied to the received shadow gives exactly the repaired one', () => {
  fc.assert(fc.property(anyShadowArbitrary, worldArbitrary, (shadow, snapshot) => {
    const result = repairShadowEndpointSlice(shadow, snapshot, {});
    const patch = shadowPatchFor(result);
    const applied = jsonpatch.applyPatch(structuredClone(shadow), jsonpatch.deepClone(patch), true, false).newDocument;
    assert.deepEqual(applied, result.kind === 'changed' ? result.object : shadow);
    assert.equal(patch.length === 0, result.kind !== 'changed');
  }), { numRuns: RUNS });
});

/** The same leaf once the hub's IPAM is no longer read: nothing to repair with, the leaf's views (the records' spaces) kept. */
function withoutHub(snapshot: Snapshot): Snapshot {
  return buildSnapshot({ version: snapshot.version + 1, fccs: [], tunnels: snapshot.tunnels, configurations: snapshot.views.configurations, hub: HUB_NOT_READ });
}

test('with nothing left to repair with, a repaired shadow goes back to exactly what the hub wrote, annotation verbatim', () => {
  fc.assert(fc.property(hubShadowArbitrary, worldArbitrary, (shadow, snapshot) => {
    assert.deepEqual(f(f(shadow, snapshot), withoutHub(snapshot)), shadow);
  }), { numRuns: RUNS });
});

test('with an empty view the leaf\'s spaces are unknown: no record is trusted, and the shadow is left as it came', () => {
  fc.assert(fc.property(hubShadowArbitrary, worldArbitrary, (shadow, snapshot) => {
    const repaired = f(shadow, snapshot);
    assert.deepEqual(endpointsOf(f(repaired, emptyWorld())), endpointsOf(repaired));
  }), { numRuns: RUNS });
});

/** A shadow carrying forged records (a hub tenant's annotations, copied down by Liqo): restore data and entries of any kind. */
const forgedPool = fc.constantFrom('10.200.0.1', '10.203.0.2', '10.204.0.3', '10.60.3.7', '172.18.0.2', '10.70.0.4', '10.213.0.5', 'fd00:203::2');
const forgedShadowArbitrary = fc.tuple(hubShadowArbitrary, fc.record({
  lists: fc.dictionary(fc.constantFrom('cluster1', 'cluster2', 'cluster3', 'cluster4'), fc.array(forgedPool, { maxLength: 3 }), { maxKeys: 4 }),
  entries: fc.array(fc.tuple(fc.oneof(addressArbitrary, forgedPool), forgedPool), { maxLength: 4 }),
})).map(([shadow, { lists, entries }]): JsonObject => {
  const metadata = shadow.metadata as JsonObject;
  const forged = {
    'liqo.io/shortcut-original-direct-connections-data': JSON.stringify({ clusterAddresses: lists }),
    'liqo.io/shortcut-shadow-original-addresses': JSON.stringify(Object.fromEntries(entries)),
  };
  return { ...shadow, metadata: { ...metadata, annotations: { ...(metadata.annotations as JsonObject | undefined), ...forged } } };
});

function listsOf(object: JsonObject): Record<string, string[]> {
  const text = ((object.metadata as JsonObject).annotations as Record<string, string> | undefined)?.['liqo.io/direct-connections-data'];
  return text === undefined ? {} : (JSON.parse(text) as { clusterAddresses?: Record<string, string[]> | null }).clusterAddresses ?? {};
}

test('no forged record makes the shadow carry an address Liqo would not map for another cluster, nor list one under the leaf or the hub', () => {
  fc.assert(fc.property(forgedShadowArbitrary, worldArbitrary, (shadow, snapshot) => {
    const before = endpointsOf(shadow);
    const out = f(shadow, snapshot);
    const lists = listsOf(out);
    const hubLists = listsOf(shadow);
    // Under the leaf and the hub, only what the hub's virtual kubelet listed itself.
    for (const own of ['cluster1', 'cluster2']) for (const address of lists[own] ?? []) assert.ok((hubLists[own] ?? []).includes(address), `${address} listed under ${own}`);
    const elsewhere = new Set(Object.entries(lists).flatMap(([cluster, list]) => (cluster === 'cluster1' || cluster === 'cluster2' ? [] : list)));
    endpointsOf(out).forEach((endpoint, e) => endpoint.addresses.forEach((output, a) => {
      if (output === before[e]?.addresses[a]) return;
      // Changed: listed under another cluster (Liqo maps it with that cluster's Configuration), or a hub IP in the hub's
      // external CIDR as the leaf declares it (the hub path, which Liqo maps through the hub).
      assert.ok(elsewhere.has(output) || /^10\.70\./.test(output) || /^fd00:70:/.test(output), `${before[e]?.addresses[a]} became ${output}`);
    }));
  }), { numRuns: RUNS });
});

test('no address ever becomes another pod\'s: a changed address is new to the shadow and belongs to one hub address only', () => {
  fc.assert(fc.property(hubShadowArbitrary, worldArbitrary, (shadow, snapshot) => {
    const before = endpointsOf(shadow);
    const after = endpointsOf(f(shadow, snapshot));
    const hubTexts = new Set(before.flatMap((e) => e.addresses));
    const lists = JSON.parse(String((shadow.metadata as JsonObject & { annotations: Record<string, string> }).annotations['liqo.io/direct-connections-data'])) as { clusterAddresses: Record<string, string[]> };
    const listed = new Set(Object.values(lists.clusterAddresses).flat());
    const sourceOf = new Map<string, string>();
    before.forEach((endpoint, e) => endpoint.addresses.forEach((input, a) => {
      const output = after[e]?.addresses[a];
      assert.ok(output !== undefined);
      if (output === input) return;
      assert.ok(listed.has(input), `only a listed address changes (${input})`);
      assert.ok(!hubTexts.has(output) && !listed.has(output), `${output} is not the text of another address of the shadow`);
      assert.equal(sourceOf.get(output) ?? input, input, `${output} replaces one hub address only`);
      sourceOf.set(output, input);
    }));
  }), { numRuns: RUNS });
});
