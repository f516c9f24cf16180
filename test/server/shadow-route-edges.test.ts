// Edges of Liqo's direct connections, as the API server stores a shadow through the served review: each test holds a
// behaviour that a hand-planted bug once broke while every other test passed (docs/testing.md, "The new code of the
// round: a bug planted for each").
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import jsonpatch from 'fast-json-patch';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { hubIpObject, reviewObject, shadowObject, type ShadowSpec } from '../support/builders.ts';
import { directWorldParts, leafToCluster3, leafToCluster4, leafToHub, type DirectWorld } from '../support/direct-world.ts';
import { post1 } from '../support/https-client.ts';
import { startHarness } from '../support/webhook-harness.ts';

const PATH = '/mutate/shadowendpointslices';
const DATA = 'liqo.io/direct-connections-data';

let harness: Awaited<ReturnType<typeof startHarness>>;
before(async () => { harness = await startHarness(); });
after(async () => { await harness.close(); });

function shadowReview(object: Json, version = 'v1beta1'): JsonObject {
  const review = reviewObject(object, {});
  return { ...review, request: { ...(review.request as JsonObject), kind: { group: 'offloading.liqo.io', version, kind: 'ShadowEndpointSlice' } } };
}

/** The shadow as the API server would store it after the served review, in this world. */
async function stored(world: DirectWorld, spec: ShadowSpec, version?: string): Promise<{ addresses: string[][]; annotations: Record<string, string>; patched: boolean }> {
  harness.store.publish(directWorldParts(world));
  const object = shadowObject(spec);
  const answer = await post1(harness.url, harness.certs.ca, JSON.stringify(shadowReview(object, version)), { path: PATH });
  assert.equal(answer.status, 200);
  const response = (JSON.parse(answer.body) as { response: { allowed: boolean; patch?: string } }).response;
  assert.equal(response.allowed, true);
  const patch = response.patch === undefined ? [] : JSON.parse(Buffer.from(response.patch, 'base64').toString()) as jsonpatch.Operation[];
  const result = jsonpatch.applyPatch(structuredClone(object), patch, true, false).newDocument as JsonObject;
  const template = (result.spec as { template: { endpoints: { addresses: string[] }[] } }).template;
  const annotations = (result.metadata as { annotations?: Record<string, string> }).annotations ?? {};
  return { addresses: template.endpoints.map((e) => e.addresses), annotations, patched: patch.length > 0 };
}

/** A second Liqo Configuration for the same peer as `configuration`, under another name. */
function again(configuration: JsonObject, name: string): JsonObject {
  return { ...configuration, metadata: { ...(configuration.metadata as JsonObject), name } };
}

type DirectConnectionsPage = { hub: { directConnections: { peer: string; state: string; reason: string | null }[] } };

const web0 = { endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }], data: '{"clusterAddresses":{"cluster3":["10.203.0.5"]}}' };

test('two Configurations of the leaf for the hub: Liqo cannot pick one, so a tunnel down leaves the shadow as the hub wrote it', async () => {
  const secondToHub = again(leafToHub, 'cluster1-again');
  const result = await stored({ tunnels: { cluster3: ['Error'] }, leaf: [leafToHub, secondToHub, leafToCluster3, leafToCluster4] }, web0);
  assert.equal(result.patched, false, JSON.stringify(result));
  assert.deepEqual(result.addresses, [['10.203.0.5']]);
  // With one, the same shadow takes the hub path: the test above is about the second Configuration alone.
  const one = await stored({ tunnels: { cluster3: ['Error'] } }, web0);
  assert.deepEqual(one.addresses, [['10.70.0.12']]);
  assert.equal(one.annotations[DATA], undefined);
});

test('the data annotation as the hub wrote it is recorded byte for byte (spaces, key case, field order), not as re-encoded', async () => {
  const data = '{ "future": 1,\n  "ClusterAddresses": { "cluster3": [ "10.203.0.5" ] } }';
  const result = await stored({}, { ...web0, data });
  assert.deepEqual(result.addresses, [['10.200.0.5']]);
  assert.equal(result.annotations['liqo.io/shortcut-original-direct-connections-data'], data);
  assert.deepEqual(JSON.parse(result.annotations[DATA] ?? ''), { future: 1, clusterAddresses: { cluster3: ['10.200.0.5'] } });
});

test('the size bound counts bytes as Go does: two-byte letters that fit in UTF-16 units leave the shadow as the hub wrote it', async () => {
  // 131,000 letters of two bytes each: 262,000 bytes, with the repair's annotations past 262,144; as UTF-16 units, half.
  const tooLarge = await stored({}, { ...web0, annotations: { note: 'é'.repeat(131_000) } });
  assert.equal(tooLarge.patched, false);
  assert.deepEqual(tooLarge.addresses, [['10.203.0.5']]);
  const fits = await stored({}, { ...web0, annotations: { note: 'e'.repeat(131_000) } });
  assert.deepEqual(fits.addresses, [['10.200.0.5']]);
});

test('a null list in a later spelling of clusterAddresses empties the cluster, as Go merges them: its address is not listed, not repaired', async () => {
  // Go's encoding/json decodes both keys into one map, and a null list sets the cluster's list to nil: Liqo then maps
  // 10.203.0.5 with the hub's Configuration, so a repair would send another address through the hub.
  const data = '{"clusterAddresses":{"cluster3":["10.203.0.5"]},"CLUSTERADDRESSES":{"cluster3":null}}';
  const result = await stored({}, { ...web0, data });
  assert.equal(result.patched, false, JSON.stringify(result));
  assert.deepEqual(result.addresses, [['10.203.0.5']]);
});

test('one address carried by two endpoints of two pods, each with a hub IP at it: no hub path (either pod\'s IP would misroute the other)', async () => {
  const ips = [hubIpObject({ pod: 'web-0', ip: '10.203.0.5', allocated: '10.70.0.12' }), hubIpObject({ pod: 'db-0', ip: '10.203.0.5', allocated: '10.70.0.14' })];
  const spec = { endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }, { addresses: ['10.203.0.5'], pod: 'db-0' }], data: web0.data };
  const result = await stored({ tunnels: { cluster3: ['Error'] }, ips }, spec);
  assert.equal(result.patched, false, JSON.stringify(result));
  assert.deepEqual(result.addresses, [['10.203.0.5'], ['10.203.0.5']]);
});

test('/debug/pairs agrees with the repair: two leaf Configurations for the hub give no hub path for a peer whose tunnel is down', async () => {
  const secondToHub = again(leafToHub, 'cluster1-again');
  harness.store.publish(directWorldParts({ tunnels: { cluster3: ['Error'] }, leaf: [leafToHub, secondToHub, leafToCluster3, leafToCluster4] }));
  const body = await (await fetch(`${harness.opsUrl}/debug/pairs`)).json() as DirectConnectionsPage;
  const cluster3 = body.hub.directConnections.find((entry) => entry.peer === 'cluster3');
  assert.deepEqual([cluster3?.state, cluster3?.reason], ['unresolved', 'no-hub-network']);
});

test('/debug/pairs agrees with the repair: two leaf Configurations for one peer send its addresses the hub path, and the page says so', async () => {
  // Liqo's controller finds a peer's Configuration with GetConfigurationByClusterID, which fails on more than one: no
  // direct network to cluster3, however Connected its tunnel. cluster4, with one, is still repaired.
  const world = { leaf: [leafToHub, leafToCluster3, again(leafToCluster3, 'cluster3-again'), leafToCluster4] };
  const web1 = { endpoints: [{ addresses: ['10.204.0.6'], pod: 'web-1' }], data: '{"clusterAddresses":{"cluster4":["10.204.0.6"]}}' };
  assert.deepEqual((await stored(world, web0)).addresses, [['10.70.0.12']], 'cluster3\'s address through the hub');
  assert.deepEqual((await stored(world, web1)).addresses, [['10.200.0.6']], 'cluster4\'s address repaired');
  const body = await (await fetch(`${harness.opsUrl}/debug/pairs`)).json() as DirectConnectionsPage;
  // The harness runs without --cluster-id: the hub's Configuration for the leaf itself (cluster2) is listed too.
  const peers = body.hub.directConnections.filter(({ peer }) => peer !== 'cluster2');
  assert.deepEqual(peers.map(({ peer, state, reason }) => ({ peer, state, reason })), [
    { peer: 'cluster3', state: 'hub-path', reason: 'no-shortcut' },
    { peer: 'cluster4', state: 'repaired', reason: null },
  ]);
});

test('a review of a ShadowEndpointSlice of another API version is left alone: its fields are not v1beta1\'s', async () => {
  const result = await stored({}, web0, 'v1alpha1');
  assert.equal(result.patched, false);
  assert.deepEqual((await stored({}, web0)).addresses, [['10.200.0.5']], 'the same shadow as v1beta1 is repaired');
});
