// The repair of Liqo's own direct connections (docs/reference.md, "Liqo's own direct connections"): one vector per
// outcome and reason, in both families, in the world of test/support/direct-world.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import jsonpatch from 'fast-json-patch';
import { shadowPatchFor } from '../../src/admission/shadow-patch.ts';
import { repairShadowEndpointSlice, type ShadowAddress, type ShadowRepair } from '../../src/core/direct-connections.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { configurationObject, hubIpObject, shadowObject, type ShadowSpec } from '../support/builders.ts';
import {
  directWorld, emptyWorld, hubIps, hubToCluster2, hubToCluster4, hubToPeer, leafToCluster3, leafToCluster4, leafToHub, leafToPeer,
} from '../support/direct-world.ts';

const DATA = 'liqo.io/direct-connections-data';
const ORIGINALS = 'liqo.io/shortcut-shadow-original-addresses';
const ORIGINAL_DATA = 'liqo.io/shortcut-original-direct-connections-data';

/** The shadow of web: a hub pod (10.200.0.9), web-0 on cluster3 (10.203.0.5), web-1 on cluster4 (10.204.0.6). */
const webShadow: ShadowSpec = {
  endpoints: [
    { addresses: ['10.200.0.9'], pod: 'web-h' },
    { addresses: ['10.203.0.5'], pod: 'web-0' },
    { addresses: ['10.204.0.6'], pod: 'web-1' },
  ],
  data: '{"clusterAddresses":{"cluster3":["10.203.0.5"],"cluster4":["10.204.0.6"]}}',
};

function repair(object: Json, snapshot: Snapshot, clusterId?: string): ShadowRepair {
  const result = repairShadowEndpointSlice(object, snapshot, { clusterId });
  if (result.kind === 'changed') {
    // Every vector also checks the patch against the object it was made for.
    const patched = jsonpatch.applyPatch(structuredClone(object), jsonpatch.deepClone(shadowPatchFor(result)), true, false).newDocument;
    assert.deepEqual(patched, result.object);
  }
  return result;
}

function resultOf(result: ShadowRepair): JsonObject {
  assert.notEqual(result.kind, 'skip');
  return result.kind === 'changed' ? result.object : result.kind === 'unchanged' ? result.shadow.object : {};
}

function addressesOf(result: ShadowRepair): string[][] {
  const template = (resultOf(result).spec as { template: { endpoints: { addresses: string[] }[] } }).template;
  return template.endpoints.map((e) => e.addresses);
}

function annotationsOf(result: ShadowRepair): Record<string, string> {
  return ((resultOf(result).metadata as { annotations?: Record<string, string> }).annotations) ?? {};
}

function outcome(result: ShadowRepair, input: string): ShadowAddress {
  assert.ok(result.kind !== 'skip', 'not a skip');
  const found = result.addresses.find((a) => a.input === input);
  assert.ok(found, `an outcome for ${input}`);
  return found;
}

test('an address the hub remapped is moved back into its cluster\'s own pod CIDR, in the endpoints and in the list', () => {
  const result = repair(shadowObject(webShadow), directWorld());
  assert.equal(result.kind, 'changed');
  assert.deepEqual(addressesOf(result), [['10.200.0.9'], ['10.200.0.5'], ['10.200.0.6']]);
  const a = annotationsOf(result);
  assert.deepEqual(JSON.parse(a[DATA] ?? ''), { clusterAddresses: { cluster3: ['10.200.0.5'], cluster4: ['10.200.0.6'] } });
  assert.deepEqual(JSON.parse(a[ORIGINALS] ?? ''), { '10.200.0.5': '10.203.0.5', '10.200.0.6': '10.204.0.6' });
  assert.equal(a[ORIGINAL_DATA], webShadow.data, 'the data annotation as the hub wrote it, verbatim');
  assert.equal(outcome(result, '10.203.0.5').outcome, 'repaired');
  assert.equal(outcome(result, '10.203.0.5').cluster, 'cluster3');
  assert.equal(outcome(result, '10.204.0.6').outcome, 'repaired');
});

test('an address already in its cluster\'s declared pod CIDR stays: Liqo maps it (direct)', () => {
  // cluster3 declares 10.203/16 and the hub did not remap it: the hub's view is cluster3's own.
  const snapshot = directWorld({
    leaf: [leafToHub, leafToPeer('cluster3', ['10.213.0.0/16'], ['10.203.0.0/16']), leafToCluster4],
    hubConfigurations: [hubToCluster2, hubToPeer('cluster3', ['10.203.0.0/16'], ['10.203.0.0/16']), hubToCluster4],
  });
  const result = repair(shadowObject(webShadow), snapshot);
  assert.equal(outcome(result, '10.203.0.5').outcome, 'direct');
  assert.equal(outcome(result, '10.203.0.5').output, '10.203.0.5');
  assert.deepEqual(addressesOf(result)[1], ['10.203.0.5']);
  assert.equal(outcome(result, '10.204.0.6').outcome, 'repaired', 'the other cluster of the annotation is still repaired');
  assert.deepEqual(JSON.parse(annotationsOf(result)[DATA] ?? ''), { clusterAddresses: { cluster3: ['10.203.0.5'], cluster4: ['10.200.0.6'] } });
});

test('a tunnel down sends the cluster\'s addresses through the hub: replaced by the hub IP\'s status.ip and unlisted (hub-path, tunnel-down)', () => {
  const result = repair(shadowObject(webShadow), directWorld({ tunnels: { cluster3: ['Connected', 'Error'], cluster4: ['Connected'] } }));
  const web0 = outcome(result, '10.203.0.5');
  assert.equal(web0.outcome, 'hub-path');
  assert.ok(web0.outcome === 'hub-path' && web0.via === 'tunnel-down' && web0.hubIp === 'demo/web-0');
  assert.equal(web0.output, '10.70.0.12');
  assert.deepEqual(addressesOf(result), [['10.200.0.9'], ['10.70.0.12'], ['10.200.0.6']]);
  const a = annotationsOf(result);
  assert.deepEqual(JSON.parse(a[DATA] ?? ''), { clusterAddresses: { cluster4: ['10.200.0.6'] } }, 'a list left empty removes its cluster');
  assert.deepEqual(JSON.parse(a[ORIGINALS] ?? ''), { '10.70.0.12': '10.203.0.5', '10.200.0.6': '10.204.0.6' });
});

test('no Configuration or no Connection for the cluster is the hub path too (hub-path, no-shortcut); the map left empty removes the annotation', () => {
  for (const snapshot of [
    directWorld({ leaf: [leafToHub, leafToCluster4] }),
    directWorld({ tunnels: { cluster4: ['Connected'] } }),
    directWorld({ leaf: [leafToHub, leafToCluster3, leafToPeer('cluster3', ['10.223.0.0/16']), leafToCluster4] }),
  ]) {
    const shadow = shadowObject({ endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }], data: { clusterAddresses: { cluster3: ['10.203.0.5'] } } });
    const result = repair(shadow, snapshot);
    const web0 = outcome(result, '10.203.0.5');
    assert.ok(web0.outcome === 'hub-path' && web0.via === 'no-shortcut', JSON.stringify(web0));
    assert.deepEqual(addressesOf(result), [['10.70.0.12']]);
    const a = annotationsOf(result);
    assert.equal(a[DATA], undefined);
    assert.equal(a[ORIGINAL_DATA], '{"clusterAddresses":{"cluster3":["10.203.0.5"]}}');
  }
});

test('the hub path keeps the annotation\'s other top-level fields, and an empty map then stays as {}', () => {
  const shadow = shadowObject({ endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }], data: '{"future":[1,2],"clusterAddresses":{"cluster3":["10.203.0.5"]}}' });
  const result = repair(shadow, directWorld({ tunnels: { cluster3: ['Error'] } }));
  assert.deepEqual(JSON.parse(annotationsOf(result)[DATA] ?? ''), { future: [1, 2], clusterAddresses: {} });
});

test('unresolved, hub-unknown: the hub\'s Configurations are not known (with a direct network, or for the hub path)', () => {
  for (const tunnels of [{ cluster3: ['Connected'] }, { cluster3: ['Error'] }]) {
    const result = repair(shadowObject(webShadow), directWorld({ hubKnown: false, tunnels }));
    const web0 = outcome(result, '10.203.0.5');
    assert.ok(web0.outcome === 'unresolved' && web0.reason === 'hub-unknown', JSON.stringify(web0));
    assert.equal(result.kind, 'unchanged');
  }
});

test('unresolved, not-in-hub-view: the address is in no status.remote.cidr.pod of the hub\'s Configuration for its cluster', () => {
  const snapshot = directWorld({ hubConfigurations: [hubToCluster2, hubToPeer('cluster3', ['10.233.0.0/16']), hubToCluster4] });
  const web0 = outcome(repair(shadowObject(webShadow), snapshot), '10.203.0.5');
  assert.ok(web0.outcome === 'unresolved' && web0.reason === 'not-in-hub-view', JSON.stringify(web0));
});

test('the hub\'s Configuration for another cluster does not repair this one\'s address', () => {
  // 10.203/16 is where the hub sees cluster3; listed under cluster4, it is in no view of the hub's for cluster4.
  const shadow = shadowObject({ endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }], data: { clusterAddresses: { cluster4: ['10.203.0.5'] } } });
  const result = repair(shadow, directWorld());
  const entry = outcome(result, '10.203.0.5');
  assert.ok(entry.outcome === 'unresolved' && entry.reason === 'not-in-hub-view');
});

test('unresolved, outside-declared: moved back, the address is outside what the leaf declares for the cluster', () => {
  const snapshot = directWorld({ leaf: [leafToHub, leafToPeer('cluster3', ['10.213.0.0/16'], ['10.100.0.0/16']), leafToCluster4] });
  const result = repair(shadowObject(webShadow), snapshot);
  const web0 = outcome(result, '10.203.0.5');
  assert.ok(web0.outcome === 'unresolved' && web0.reason === 'outside-declared', JSON.stringify(web0));
  assert.deepEqual(addressesOf(result)[1], ['10.203.0.5']);
});

test('unresolved, no-hub-ip: no hub IP at spec.ip, or only one of another pod (the targetRef decides)', () => {
  const tunnels = { cluster3: ['Error'] };
  const none = outcome(repair(shadowObject(webShadow), directWorld({ tunnels, ips: [] })), '10.203.0.5');
  assert.ok(none.outcome === 'unresolved' && none.reason === 'no-hub-ip', JSON.stringify(none));
  const shadow = shadowObject({ ...webShadow, endpoints: [{ addresses: ['10.203.0.5'], pod: 'db-0' }] });
  const other = outcome(repair(shadow, directWorld({ tunnels })), '10.203.0.5');
  assert.ok(other.outcome === 'unresolved' && other.reason === 'no-hub-ip', JSON.stringify(other));
});

test('the targetRef picks one of two hub IPs at one spec.ip; without a targetRef two are ambiguous', () => {
  const ips = [...hubIps, hubIpObject({ pod: 'stale-0', ip: '10.203.0.5', allocated: '10.70.0.99' })];
  const tunnels = { cluster3: ['Error'] };
  const picked = outcome(repair(shadowObject(webShadow), directWorld({ tunnels, ips })), '10.203.0.5');
  assert.ok(picked.outcome === 'hub-path' && picked.output === '10.70.0.12', JSON.stringify(picked));
  const shadow = shadowObject({ ...webShadow, endpoints: [{ addresses: ['10.203.0.5'], pod: null }] });
  const neither = outcome(repair(shadow, directWorld({ tunnels, ips })), '10.203.0.5');
  assert.ok(neither.outcome === 'unresolved' && neither.reason === 'no-hub-ip', JSON.stringify(neither));
});

test('unresolved, no-hub-network: no Configuration for the hub, or the allocated address outside its external CIDR', () => {
  const tunnels = { cluster3: ['Error'] };
  const noConfig = outcome(repair(shadowObject(webShadow), directWorld({ tunnels, leaf: [leafToCluster3, leafToCluster4] })), '10.203.0.5');
  assert.ok(noConfig.outcome === 'unresolved' && noConfig.reason === 'no-hub-network', JSON.stringify(noConfig));
  const ips = [hubIpObject({ pod: 'web-0', ip: '10.203.0.5', allocated: '10.99.0.12' })];
  const outside = outcome(repair(shadowObject(webShadow), directWorld({ tunnels, ips })), '10.203.0.5');
  assert.ok(outside.outcome === 'unresolved' && outside.reason === 'no-hub-network', JSON.stringify(outside));
  // Liqo's controller finds the hub's Configuration by cluster ID and fails on two.
  const secondToHub = { ...leafToHub, metadata: { ...(leafToHub.metadata as JsonObject), name: 'cluster1-b' } };
  const two = outcome(repair(shadowObject(webShadow), directWorld({ tunnels, leaf: [leafToHub, secondToHub, leafToCluster3, leafToCluster4] })), '10.203.0.5');
  assert.ok(two.outcome === 'unresolved' && two.reason === 'no-hub-network' && two.detail.includes('it has 2'), JSON.stringify(two));
});

test('unresolved, too-large: annotations that would reach 262,144 bytes leave the shadow as the hub wrote it', () => {
  const data = webShadow.data as string;
  // Exactly at the bound with our two keys and the repaired data added: nothing is changed.
  const ours = (JSON.stringify({ '10.200.0.5': '10.203.0.5', '10.200.0.6': '10.204.0.6' }).length + ORIGINALS.length)
    + (data.length + ORIGINAL_DATA.length) + (DATA.length + '{"clusterAddresses":{"cluster3":["10.200.0.5"],"cluster4":["10.200.0.6"]}}'.length);
  const filler = 262_144 - ours - 'filler'.length;
  const big = repair(shadowObject({ ...webShadow, annotations: { filler: 'x'.repeat(filler) } }), directWorld());
  assert.equal(big.kind, 'unchanged');
  const web0 = outcome(big, '10.203.0.5');
  assert.ok(web0.outcome === 'unresolved' && web0.reason === 'too-large', JSON.stringify(web0));
  const fits = repair(shadowObject({ ...webShadow, annotations: { filler: 'x'.repeat(filler - 1) } }), directWorld());
  assert.equal(outcome(fits, '10.203.0.5').outcome, 'repaired', 'one byte below the bound is repaired');
});

test('unresolved, ambiguous: an address listed under two clusters stays (Liqo would pick one at random)', () => {
  const shadow = shadowObject({ ...webShadow, data: { clusterAddresses: { cluster3: ['10.203.0.5'], cluster4: ['10.203.0.5', '10.204.0.6'] } } });
  const result = repair(shadow, directWorld());
  const both = result.kind === 'skip' ? [] : result.addresses.filter((a) => a.input === '10.203.0.5');
  assert.equal(both.length, 2);
  for (const entry of both) assert.ok(entry.outcome === 'unresolved' && entry.reason === 'ambiguous');
  assert.equal(outcome(result, '10.204.0.6').outcome, 'repaired');
  assert.deepEqual(addressesOf(result), [['10.200.0.9'], ['10.203.0.5'], ['10.200.0.6']]);
});

test('a repair that would give the text of another pod\'s address takes the hub path instead (hub-path, ambiguous)', () => {
  // The hub's own pod 10.200.0.5 and cluster3's pod 10.200.0.5 (seen by the hub at 10.203.0.5): Liqo looks
  // addresses up by text, so a repaired 10.200.0.5 would map the hub's pod with cluster3's Configuration.
  const shadow = shadowObject({ ...webShadow, endpoints: [{ addresses: ['10.200.0.5'], pod: 'web-h' }, ...(webShadow.endpoints ?? []).slice(1)] });
  const result = repair(shadow, directWorld());
  const web0 = outcome(result, '10.203.0.5');
  assert.ok(web0.outcome === 'hub-path' && web0.via === 'ambiguous', JSON.stringify(web0));
  assert.deepEqual(addressesOf(result), [['10.200.0.5'], ['10.70.0.12'], ['10.200.0.6']]);
  // Without a hub path, it stays.
  const stays = outcome(repair(shadow, directWorld({ ips: [] })), '10.203.0.5');
  assert.ok(stays.outcome === 'unresolved' && stays.reason === 'ambiguous', JSON.stringify(stays));
});

test('two clusters whose repairs give one text both take the hub path', () => {
  // cluster3's 10.203.0.5 and cluster4's 10.204.0.5 are both 10.200.0.5 in their own clusters.
  const ips = [...hubIps, hubIpObject({ pod: 'web-1', ip: '10.204.0.5', allocated: '10.70.0.13' })];
  const shadow = shadowObject({
    endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }, { addresses: ['10.204.0.5'], pod: 'web-1' }],
    data: { clusterAddresses: { cluster3: ['10.203.0.5'], cluster4: ['10.204.0.5'] } },
  });
  const result = repair(shadow, directWorld({ ips }));
  assert.deepEqual(addressesOf(result), [['10.70.0.12'], ['10.70.0.13']]);
});

test('unresolved, not-canonical: a listed address not written as the family\'s canonical text stays', () => {
  const shadow = shadowObject({ endpoints: [{ addresses: ['010.203.0.5'], pod: 'web-0' }], data: { clusterAddresses: { cluster3: ['010.203.0.5', 'fd00:203::5'] } } });
  const result = repair(shadow, directWorld());
  assert.equal(result.kind, 'unchanged');
  for (const input of ['010.203.0.5', 'fd00:203::5']) {
    const entry = outcome(result, input);
    assert.ok(entry.outcome === 'unresolved' && entry.reason === 'not-canonical');
  }
});

test('IPv6: repaired, direct through the hub path, each as in IPv4', () => {
  const shadow = shadowObject({
    addressType: 'IPv6',
    endpoints: [{ addresses: ['fd00:200::9'], pod: 'web-h' }, { addresses: ['fd00:203::5'], pod: 'web6-0' }],
    data: { clusterAddresses: { cluster3: ['fd00:203::5'] } },
  });
  const repaired = repair(shadow, directWorld());
  assert.equal(outcome(repaired, 'fd00:203::5').outcome, 'repaired');
  assert.deepEqual(addressesOf(repaired), [['fd00:200::9'], ['fd00:200::5']]);
  const hubPath = repair(shadow, directWorld({ tunnels: { cluster3: ['Connecting'] } }));
  assert.equal(outcome(hubPath, 'fd00:203::5').output, 'fd00:70::12');
  assert.deepEqual(addressesOf(hubPath), [['fd00:200::9'], ['fd00:70::12']]);
  const direct = repair(shadow, directWorld({
    leaf: [leafToHub, leafToPeer('cluster3', ['fd00:213::/64'], ['fd00:203::/64'])],
  }));
  assert.equal(outcome(direct, 'fd00:203::5').outcome, 'direct');
});

test('an endpoint with two addresses, an address in two endpoints and listed twice: each occurrence replaced, positions kept', () => {
  const shadow = shadowObject({
    endpoints: [
      { addresses: ['10.203.0.5', '10.200.0.9'], pod: 'web-0' },
      { addresses: ['10.200.0.8', '10.203.0.5'], pod: 'web-0' },
    ],
    data: { clusterAddresses: { cluster3: ['10.203.0.5', '10.203.0.5'] } },
  });
  const result = repair(shadow, directWorld());
  assert.deepEqual(addressesOf(result), [['10.200.0.5', '10.200.0.9'], ['10.200.0.8', '10.200.0.5']]);
  assert.deepEqual(JSON.parse(annotationsOf(result)[DATA] ?? ''), { clusterAddresses: { cluster3: ['10.200.0.5', '10.200.0.5'] } });
  assert.equal(result.kind === 'skip' ? 0 : result.addresses.length, 1, 'one outcome per distinct listed address');
  const hubPath = repair(shadow, directWorld({ tunnels: { cluster3: ['Error'] } }));
  assert.deepEqual(addressesOf(hubPath), [['10.70.0.12', '10.200.0.9'], ['10.200.0.8', '10.70.0.12']]);
});

test('the hub path needs every endpoint that carries the address to name the same pod', () => {
  const shadow = shadowObject({
    endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }, { addresses: ['10.203.0.5'], pod: 'db-0' }],
    data: { clusterAddresses: { cluster3: ['10.203.0.5'] } },
  });
  const entry = outcome(repair(shadow, directWorld({ tunnels: { cluster3: ['Error'] } })), '10.203.0.5');
  assert.ok(entry.outcome === 'unresolved' && entry.reason === 'no-hub-ip', JSON.stringify(entry));
});

test('several clusters in one annotation, each with its own outcome; unlisted addresses are never touched', () => {
  const shadow = shadowObject({
    endpoints: [
      { addresses: ['10.200.0.9'], pod: 'web-h' }, { addresses: ['10.203.0.5'], pod: 'web-0' },
      { addresses: ['10.204.0.6'], pod: 'web-1' }, { addresses: ['192.0.2.1'], pod: null },
    ],
    data: { clusterAddresses: { cluster3: ['10.203.0.5'], cluster4: ['10.204.0.6'], cluster5: ['10.205.0.1'] } },
  });
  const result = repair(shadow, directWorld({ tunnels: { cluster3: ['Connected'], cluster4: ['Error'] } }));
  assert.deepEqual(result.kind === 'skip' ? [] : result.addresses.map((a) => [a.cluster, a.outcome]), [
    ['cluster3', 'repaired'], ['cluster4', 'hub-path'], ['cluster5', 'unresolved'],
  ]);
  assert.deepEqual(addressesOf(result), [['10.200.0.9'], ['10.200.0.5'], ['10.70.0.13'], ['192.0.2.1']]);
  assert.deepEqual(JSON.parse(annotationsOf(result)[DATA] ?? ''), { clusterAddresses: { cluster3: ['10.200.0.5'], cluster5: ['10.205.0.1'] } });
});

test('a repaired shadow is restored first: the same view gives it unchanged, one with nothing to repair with gives back the hub\'s shadow verbatim', () => {
  const hubWrote = shadowObject({ ...webShadow, annotations: { 'other': 'kept' } });
  const once = repair(hubWrote, directWorld());
  assert.equal(once.kind, 'changed');
  const again = repair(resultOf(once), directWorld());
  assert.equal(again.kind, 'unchanged');
  // The hub's IPAM no longer read: the leaf's views, where the records lie, are still known.
  const restored = repair(resultOf(once), directWorld({ hubKnown: false }));
  assert.equal(restored.kind, 'changed');
  assert.deepEqual(resultOf(restored), hubWrote);
  // A flip to the hub path from the repaired shadow goes through the hub's addresses, not the repaired ones.
  const flipped = repair(resultOf(once), directWorld({ tunnels: { cluster3: ['Error'], cluster4: ['Connected'] } }));
  assert.deepEqual(addressesOf(flipped), [['10.200.0.9'], ['10.70.0.12'], ['10.200.0.6']]);
  assert.equal(annotationsOf(flipped)[ORIGINAL_DATA], webShadow.data);
});

test('an originals entry whose hub address is not listed is not undone: it could be another pod\'s', () => {
  const shadow = shadowObject({
    endpoints: [{ addresses: ['10.200.0.9'], pod: 'web-h' }],
    data: { clusterAddresses: { cluster3: ['10.203.0.5'] } },
    annotations: { [ORIGINALS]: '{"10.200.0.9":"10.200.0.77"}' },
  });
  const result = repair(shadow, emptyWorld());
  assert.deepEqual(addressesOf(result), [['10.200.0.9']]);
  assert.equal(annotationsOf(result)[ORIGINALS], undefined, 'the stray annotation is removed');
});

test('the data annotation is read as Go reads it: keys case-insensitively, null lists and maps empty', () => {
  const snapshot = directWorld();
  const endpoints = [{ addresses: ['10.203.0.5'], pod: 'web-0' }];
  for (const data of [
    '{"ClusterAddresses":{"cluster3":["10.203.0.5"]}}',
    '{"CLUSTERADDRESSES":{"cluster3":["10.203.0.5"]},"unknown":1}',
    '{"clusterAddreſſes":{"cluster3":["10.203.0.5"]}}',
    '{"clusterAddresses":{"cluster4":null,"cluster3":["10.203.0.5",null]}}',
  ]) {
    const result = repair(shadowObject({ endpoints, data }), snapshot);
    assert.equal(outcome(result, '10.203.0.5').outcome, 'repaired', data);
    assert.deepEqual(addressesOf(result), [['10.200.0.5']]);
  }
  for (const data of ['null', '{"clusterAddresses":null}', '{"clusterAddresses":{"cluster3":["10.203.0.5"]},"clusteraddresses":null}', '{"other":1}']) {
    const result = repair(shadowObject({ endpoints, data }), snapshot);
    assert.equal(result.kind, 'unchanged', data);
    assert.deepEqual(result.kind === 'unchanged' ? result.addresses : undefined, [], data);
  }
});

test('bad data is left as restored with a reason, never a crash', () => {
  const endpoints = [{ addresses: ['10.203.0.5'], pod: 'web-0' }];
  const bad = [
    'not json', '[]', '"x"', '{"clusterAddresses":[1,2]}', '{"clusterAddresses":{"cluster3":[1,2]}}',
    '{"clusterAddresses":{"cluster3":[{"nested":true}]}}', '{"clusterAddresses":{"cluster3":"10.203.0.5"}}',
    '{"clusterAddresses":{"cluster3":["10.203.0.5"]},"clusterAddresses":{"cluster4":["10.204.0.6"]}}',
  ];
  for (const data of bad) {
    const result = repair(shadowObject({ endpoints, data }), directWorld());
    assert.equal(result.kind, 'unchanged', data);
    assert.ok(result.kind === 'unchanged' && result.data.state === 'invalid' && result.data.detail.length > 0, data);
  }
  const notString = repair(shadowObject({ endpoints, annotations: { [DATA]: 5 } }), directWorld());
  assert.ok(notString.kind === 'unchanged' && notString.data.state === 'invalid');
});

test('100,000 listed addresses and a 10 KB cluster ID are read, decided and left within the size bound', () => {
  const many = Array.from({ length: 100_000 }, (_, i) => `10.203.${(i >> 8) & 255}.${i & 255}`);
  const longId = 'c'.repeat(10_000);
  const result = repair(shadowObject({ endpoints: [{ addresses: ['10.203.0.5'], pod: 'web-0' }], data: { clusterAddresses: { cluster3: many, [longId]: ['10.9.9.9'] } } }), directWorld());
  assert.equal(result.kind, 'unchanged', 'too large to repair: nothing changes');
  assert.ok(result.kind === 'unchanged' && result.addresses.some((a) => a.outcome === 'unresolved' && a.reason === 'too-large'));
});

test('shadows that are not Liqo\'s reflected ones are skipped with a reason', () => {
  const snapshot = directWorld();
  const cases: [Json, string][] = [
    [null, 'not-shadowendpointslice'],
    [{ ...shadowObject(webShadow), apiVersion: 'offloading.liqo.io/v1alpha1' }, 'not-shadowendpointslice'],
    [shadowObject({ ...webShadow, origin: null }), 'unknown-hub'],
    [shadowObject({ ...webShadow, destination: null }), 'unknown-cluster'],
    [shadowObject({ ...webShadow, addressType: 'FQDN' }), 'unsupported-address-type'],
    [{ ...shadowObject(webShadow), spec: [] }, 'malformed'],
    [{ ...shadowObject(webShadow), spec: { template: { addressType: 'IPv4', endpoints: {} } } }, 'malformed'],
  ];
  const unlabelled = shadowObject(webShadow);
  cases.push([{ ...unlabelled, metadata: { ...(unlabelled.metadata as JsonObject), labels: { 'liqo.io/indirect-endpointslice': 'true', 'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io' } } }, 'indirect-slice']);
  cases.push([{ ...unlabelled, metadata: { ...(unlabelled.metadata as JsonObject), labels: {} } }, 'not-reflected']);
  for (const [object, reason] of cases) {
    const result = repair(object, snapshot);
    assert.ok(result.kind === 'skip' && result.reason === reason, `${reason}: ${JSON.stringify(result).slice(0, 200)}`);
  }
  // With --cluster-id, a shadow without the destination label is the configured cluster's.
  assert.equal(repair(shadowObject({ ...webShadow, destination: null }), snapshot, 'cluster2').kind, 'changed');
});

test('a hub Configuration with CIDR lists of different lengths pairs the positions both have', () => {
  const mismatched = configurationObject({ peer: 'cluster3', remotePod: ['10.200.0.0/16', 'fd00:200::/64'], remotePodView: ['10.203.0.0/16'] });
  const result = repair(shadowObject(webShadow), directWorld({ hubConfigurations: [hubToCluster2, mismatched, hubToCluster4] }));
  assert.equal(outcome(result, '10.203.0.5').outcome, 'repaired');
  const shadow6 = shadowObject({ addressType: 'IPv6', endpoints: [{ addresses: ['fd00:203::5'], pod: 'web6-0' }], data: { clusterAddresses: { cluster3: ['fd00:203::5'] } } });
  const entry = outcome(repair(shadow6, directWorld({ hubConfigurations: [mismatched] })), 'fd00:203::5');
  assert.ok(entry.outcome === 'unresolved' && entry.reason === 'not-in-hub-view');
});

test('per peer, /debug/pairs says what the repair makes of its addresses: direct, repaired, hub-path or unresolved', async () => {
  const { peerDirectConnections } = await import('../../src/core/direct-connections.ts');
  const states = (snapshot: Snapshot) => peerDirectConnections(snapshot, 'cluster2').map((p) => [p.peer, p.state, p.reason]);
  assert.deepEqual(states(directWorld()), [['cluster3', 'repaired', null], ['cluster4', 'repaired', null]]);
  assert.deepEqual(states(directWorld({
    leaf: [leafToHub, leafToPeer('cluster3', ['10.213.0.0/16', 'fd00:213::/64'], ['10.203.0.0/16', 'fd00:203::/64']), leafToPeer('cluster4', ['10.214.0.0/16'], ['10.100.0.0/16'])],
    hubConfigurations: [hubToCluster2, hubToPeer('cluster3', ['10.203.0.0/16', 'fd00:203::/64'], ['10.203.0.0/16', 'fd00:203::/64']), hubToCluster4],
  })), [['cluster3', 'direct', null], ['cluster4', 'unresolved', 'outside-declared']]);
  assert.deepEqual(states(directWorld({ tunnels: { cluster3: ['Error'] } })), [['cluster3', 'hub-path', 'tunnel-down'], ['cluster4', 'hub-path', 'no-shortcut']]);
  assert.deepEqual(states(directWorld({ tunnels: { cluster3: ['Error'] }, leaf: [leafToCluster3, leafToCluster4] })), [['cluster3', 'unresolved', 'no-hub-network'], ['cluster4', 'unresolved', 'no-hub-network']]);
  assert.deepEqual(states(directWorld({ hubKnown: false })), [], 'the hub\'s peers are not known');
});
