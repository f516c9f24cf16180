// The stock-Liqo path: addresses the hub's IPAM allocated, resolved through its IPs and Configurations to the pod and
// moved into the leaf's direct network to the pod's cluster. Topology: hub cluster1, leaf cluster2, peer cluster3.
// cluster3's pods are 10.60/16 (as the leaf's own), the hub sees them at 10.63/16, the leaf at 10.61/16; the hub's
// external CIDR 10.70/16 is seen by the leaf at 10.71/16.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { patchFor } from '../../src/admission/patch.ts';
import { decodeHubIp, indexHubIps, type HubIp } from '../../src/core/hub-ipam.ts';
import type { HubIpam } from '../../src/core/hub-resolution.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { decodeConfiguration, tunnelStates } from '../../src/core/leaf-views.ts';
import { applyRewrite, rewriteEndpointSlice, type AddressTrace, type SliceRewrite } from '../../src/core/rewrite.ts';
import { buildSnapshot, type Snapshot } from '../../src/core/snapshot.ts';
import { configurationObject, connectionObject, fcc, hubIpObject, sliceObject } from '../support/builders.ts';

const SHORTCUT = 'liqo.io/shortcut-addresses';
const ORIGINAL = 'liqo.io/shortcut-original-addresses';

interface World {
  /** The leaf's Connection states to cluster3; none when undefined. */
  readonly tunnel?: readonly string[] | undefined;
  /** The leaf's Configuration for cluster3; false for none. */
  readonly leafToPeer?: JsonObject | false;
  readonly ips?: readonly JsonObject[];
  readonly hubConfigurations?: readonly JsonObject[];
  readonly hubKnown?: boolean;
}

const leafToHub = configurationObject({ peer: 'cluster1' });
const defaultLeafToPeer = configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' });
/** The hub's Configurations: cluster3's pods 10.60/16 seen at 10.63/16, cluster2's 10.60/16 at 10.62/16. */
const hubToPeer = configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16' });
const hubToLeaf = configurationObject({ peer: 'cluster2', remotePod: '10.60.0.0/16', remotePodView: '10.62.0.0/16' });
const web0 = hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' });

function hubIps(objects: readonly JsonObject[]): HubIp[] {
  return objects.flatMap((object) => decodeHubIp(object) ?? []);
}

function world(spec: World = {}): Snapshot {
  const leafToPeer = spec.leafToPeer === undefined ? defaultLeafToPeer : spec.leafToPeer;
  const hub: HubIpam = spec.hubKnown === false ? { known: false, why: 'not given' } : {
    known: true,
    ips: indexHubIps(hubIps(spec.ips ?? [web0])),
    configurations: (spec.hubConfigurations ?? [hubToPeer, hubToLeaf]).map((c) => decodeConfiguration(c)),
  };
  const tunnel = spec.tunnel === undefined ? ['Connected'] : spec.tunnel;
  return buildSnapshot({
    version: 1,
    fccs: [],
    tunnels: tunnelStates(tunnel.map((value, i) => connectionObject('cluster3', value, `gw-${i}`))),
    configurations: [leafToHub, ...(leafToPeer === false ? [] : [leafToPeer])].map((c) => decodeConfiguration(c)),
    hub,
  });
}

function rewrite(object: Json, snapshot: Snapshot): SliceRewrite {
  const result = rewriteEndpointSlice(object, snapshot);
  assert.ok(!('skip' in result), 'skip' in result ? result.detail : '');
  return result;
}

function traces(object: Json, snapshot: Snapshot): AddressTrace[] {
  const seen: AddressTrace[] = [];
  rewriteEndpointSlice(object, snapshot, {}, (trace) => seen.push(trace));
  return seen;
}

const addressesOf = (object: JsonObject): unknown => (object.endpoints as { addresses: string[] }[]).map((e) => e.addresses);

test('an address the hub allocated is resolved to the pod and moved into the leaf\'s view of its cluster, and flagged', () => {
  const result = applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), world()));
  assert.deepEqual(addressesOf(result), [['10.61.0.151']]);
  const annotations = (result.metadata as JsonObject).annotations as JsonObject;
  assert.equal(annotations[SHORTCUT], '10.61.0.151');
  assert.equal(annotations[ORIGINAL], '{"10.61.0.151":"10.71.0.12"}');
});

test('explain names the hub IP, the peer and the leaf Configuration used', () => {
  const [trace] = traces(sliceObject({ addresses: [['10.71.0.12']] }), world());
  assert.deepEqual(trace?.hub, { ip: 'demo/web-0', peer: 'cluster3', configuration: 'liqo-tenant-cluster3/cluster3' });
  assert.equal(trace?.reason, 'rewritten');
  assert.equal(trace?.pair, undefined);
});

test('a second pass over the resolved slice changes nothing', () => {
  const snapshot = world();
  const once = applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), snapshot));
  const twice = rewrite(once, snapshot);
  assert.deepEqual(twice.edits, []);
  assert.deepEqual(twice.annotations, []);
});

const untouchedBy = (snapshot: Snapshot, object: Json = sliceObject({ addresses: [['10.71.0.12']] })) => {
  const result = rewrite(object, snapshot);
  assert.deepEqual(result.edits, []);
  return { untouched: Object.entries(result.untouched).filter(([, n]) => n > 0), trace: traces(object, snapshot)[0] };
};

test('with no hub IP allocated at the address the address stays: no-hub-ip', () => {
  const { untouched, trace } = untouchedBy(world({ ips: [hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.13' })] }));
  assert.deepEqual(untouched, [['no-hub-ip', 1]]);
  assert.match(trace?.stock?.detail ?? '', /no IP of cluster1 is allocated at 10\.70\.0\.12/);
});

test('an IP not allocated yet (no status.ip) is not indexed: no-hub-ip', () => {
  assert.deepEqual(untouchedBy(world({ ips: [hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: null })] })).untouched, [['no-hub-ip', 1]]);
});

test('a hub address reallocated to another pod never resolves to it: the endpoint\'s targetRef must name the IP\'s pod', () => {
  // The leaf still holds web-0's old translation; the hub has since given 10.70.0.12 to web-9.
  const reallocated = world({ ips: [hubIpObject({ pod: 'web-9', ip: '10.63.0.99', allocated: '10.70.0.12' })] });
  const { untouched, trace } = untouchedBy(reallocated);
  assert.deepEqual(untouched, [['no-hub-ip', 1]]);
  assert.match(trace?.stock?.detail ?? '', /demo\/web-9, not the endpoint's pod demo\/web-0/);
  // Same pod name in another namespace: still not the pod.
  assert.deepEqual(untouchedBy(world({ ips: [hubIpObject({ pod: 'web-0', namespace: 'other', ip: '10.63.0.151' })] })).untouched, [['no-hub-ip', 1]]);
});

test('of two IPs at one address (a stale one not yet deleted), the one naming the endpoint\'s pod is used', () => {
  const snapshot = world({ ips: [hubIpObject({ pod: 'old', ip: '10.63.0.7', allocated: '10.70.0.12' }), web0] });
  assert.deepEqual(addressesOf(applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), snapshot))), [['10.61.0.151']]);
});

test('an endpoint without a targetRef takes the IP at the address', () => {
  const object = sliceObject({ addresses: [['10.71.0.12']] });
  const endpoints = (object.endpoints as JsonObject[]).map(({ targetRef: _, ...rest }) => rest);
  assert.deepEqual(addressesOf(applyRewrite(rewrite({ ...object, endpoints }, world()))), [['10.61.0.151']]);
});

const withTargetRef = (targetRef: JsonObject | undefined): JsonObject => {
  const object = sliceObject({ addresses: [['10.71.0.12']] });
  const endpoints = (object.endpoints as JsonObject[]).map(({ targetRef: _, ...rest }) => (targetRef === undefined ? rest : { ...rest, targetRef }));
  return { ...object, endpoints };
};

test('two IPs at one address and no targetRef to choose between them: the address stays (no-hub-ip), never the first found', () => {
  const twice = world({ ips: [hubIpObject({ pod: 'old', ip: '10.63.0.7', allocated: '10.70.0.12' }), web0] });
  const { untouched, trace } = untouchedBy(twice, withTargetRef(undefined));
  assert.deepEqual(untouched, [['no-hub-ip', 1]]);
  assert.match(trace?.stock?.detail ?? '', /cluster1 has 2 IPs at 10\.70\.0\.12 \(demo\/old, demo\/web-0\) and the endpoint names no pod/);
});

test('a targetRef with a name and no namespace still names the pod: another pod\'s IP is never taken', () => {
  const byName = { kind: 'RemotePod', name: 'web-0' };
  assert.deepEqual(addressesOf(applyRewrite(rewrite(withTargetRef(byName), world()))), [['10.61.0.151']]);
  const reallocated = world({ ips: [hubIpObject({ pod: 'web-9', ip: '10.63.0.99', allocated: '10.70.0.12' })] });
  const { untouched, trace } = untouchedBy(reallocated, withTargetRef(byName));
  assert.deepEqual(untouched, [['no-hub-ip', 1]]);
  assert.match(trace?.stock?.detail ?? '', /demo\/web-9, not the endpoint's pod web-0$/);
  // The name alone matching in two namespaces: either could be meant.
  const twoNamespaces = world({ ips: [hubIpObject({ pod: 'web-0', namespace: 'other', ip: '10.63.0.7' }), web0] });
  assert.deepEqual(untouchedBy(twoNamespaces, withTargetRef(byName)).untouched, [['no-hub-ip', 1]]);
});

test('a pod the hub sees in no peer\'s pod CIDR (a hub pod) stays: no-peer', () => {
  const { untouched, trace } = untouchedBy(world({ ips: [hubIpObject({ pod: 'web-0', ip: '10.200.0.5' })] }));
  assert.deepEqual(untouched, [['no-peer', 1]]);
  assert.match(trace?.stock?.detail ?? '', /in no peer's pod CIDR/);
});

test('a pod of the leaf itself stays: no-peer', () => {
  const { untouched, trace } = untouchedBy(world({ ips: [hubIpObject({ pod: 'web-0', ip: '10.62.0.5' })] }));
  assert.deepEqual(untouched, [['no-peer', 1]]);
  assert.match(trace?.stock?.detail ?? '', /a pod of cluster2 itself/);
});

test('without a Connection to the pod\'s cluster there is no direct network: no-shortcut', () => {
  assert.deepEqual(untouchedBy(world({ tunnel: [] })).untouched, [['no-shortcut', 1]]);
});

test('without a Configuration for the pod\'s cluster there is no direct network: no-shortcut', () => {
  const { untouched, trace } = untouchedBy(world({ leafToPeer: false }));
  assert.deepEqual(untouched, [['no-shortcut', 1]]);
  assert.match(trace?.stock?.detail ?? '', /this leaf has no Liqo Configuration for cluster3/);
});

test('with Connections of which one is not Connected the address stays: tunnel-down', () => {
  assert.deepEqual(untouchedBy(world({ tunnel: ['Connected', 'Connecting'] })).untouched, [['tunnel-down', 1]]);
  assert.deepEqual(untouchedBy(world({ tunnel: ['Error'] })).untouched, [['tunnel-down', 1]]);
  // Connections that are down say more than a Configuration not there (yet): tunnel-down either way.
  assert.deepEqual(untouchedBy(world({ tunnel: ['Connecting'], leafToPeer: false })).untouched, [['tunnel-down', 1]]);
});

test('a pod address the leaf\'s Configuration for the peer does not map stays: no-shortcut', () => {
  const leafToPeer = configurationObject({ peer: 'cluster3', remotePod: '10.59.0.0/16', remotePodView: '10.61.0.0/16' });
  assert.deepEqual(untouchedBy(world({ leafToPeer })).untouched, [['no-shortcut', 1]]);
});

test('without the hub\'s IPAM objects an address of its external space is hub-external, as before', () => {
  assert.deepEqual(untouchedBy(world({ hubKnown: false })).untouched, [['hub-external', 1]]);
});

test('a lost direct network restores the hub address on the next pass', () => {
  const resolved = applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), world()));
  const restored = applyRewrite(rewrite(resolved, world({ tunnel: ['Error'] })));
  assert.deepEqual(addressesOf(restored), [['10.71.0.12']]);
  assert.equal(Object.hasOwn(restored.metadata as JsonObject, 'annotations'), false, 'the map goes with its last key');
  const [trace] = traces(resolved, world({ tunnel: ['Error'] }));
  assert.equal(trace?.reason, 'restored');
  assert.equal(trace?.stock?.reason, 'tunnel-down');
});

test('several CIDRs per field are paired by index at every move', () => {
  const leafToHubTwo = configurationObject({ peer: 'cluster1', remoteExternal: ['10.80.0.0/16', '10.70.0.0/16'], remoteExternalView: ['10.81.0.0/16', '10.71.0.0/16'] });
  const hubToPeerTwo = configurationObject({ peer: 'cluster3', remotePod: ['10.90.0.0/16', '10.60.0.0/16'], remotePodView: ['10.91.0.0/16', '10.63.0.0/16'] });
  const leafToPeerTwo = configurationObject({ peer: 'cluster3', remotePod: ['10.50.0.0/16', '10.60.0.0/16'], remotePodView: ['10.51.0.0/16', '10.61.0.0/16'] });
  const snapshot = buildSnapshot({
    version: 1, fccs: [],
    tunnels: tunnelStates([connectionObject('cluster3', 'Connected')]),
    configurations: [leafToHubTwo, leafToPeerTwo].map((c) => decodeConfiguration(c)),
    hub: { known: true, ips: indexHubIps(hubIps([web0])), configurations: [decodeConfiguration(hubToPeerTwo)] },
  });
  assert.deepEqual(addressesOf(applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), snapshot))), [['10.61.0.151']]);
});

test('host bits are kept under each target\'s prefix length, as Liqo\'s RemapMask does', () => {
  // The leaf sees cluster3's 10.60.0.0/16 in a /10 at 40.0.0.0: a /10 keeps the low 22 bits of 10.60.0.151.
  const leafToPeer = configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '40.0.0.0/10' });
  assert.deepEqual(addressesOf(applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), world({ leafToPeer })))), [['40.60.0.151']]);
});

test('IPv6: the same four moves', () => {
  const leafToHub6 = configurationObject({ peer: 'cluster1', remoteExternal: 'fd70::/64', remoteExternalView: 'fd71::/64' });
  const leafToPeer6 = configurationObject({ peer: 'cluster3', remotePod: 'fd60::/64', remotePodView: 'fd61::/64' });
  const hubToPeer6 = configurationObject({ peer: 'cluster3', remotePod: 'fd60::/64', remotePodView: 'fd63::/64' });
  const ip = hubIpObject({ pod: 'web-0', ip: 'fd63::97', allocated: 'fd70::c' });
  const snapshot = buildSnapshot({
    version: 1, fccs: [], tunnels: tunnelStates([connectionObject('cluster3', 'Connected')]),
    configurations: [leafToHub6, leafToPeer6].map((c) => decodeConfiguration(c)),
    hub: { known: true, ips: indexHubIps(hubIps([ip])), configurations: [decodeConfiguration(hubToPeer6)] },
  });
  const result = applyRewrite(rewrite(sliceObject({ addressType: 'IPv6', addresses: [['fd71::c']] }), snapshot));
  assert.deepEqual(addressesOf(result), [['fd61::97']]);
});

test('addresses outside the hub\'s external space take the FCC path, which the stock path leaves alone', () => {
  const snapshot = buildSnapshot({
    version: 1,
    fccs: [fcc({ aPod: '10.64.0.0/16', aRemapped: '10.61.0.0/16' })],
    tunnels: tunnelStates([connectionObject('cluster3', 'Connected')]),
    configurations: [leafToHub, defaultLeafToPeer].map((c) => decodeConfiguration(c)),
    hub: { known: true, ips: indexHubIps(hubIps([web0])), configurations: [decodeConfiguration(hubToPeer)] },
  });
  assert.deepEqual(addressesOf(applyRewrite(rewrite(sliceObject({ addresses: [['10.64.0.1', '10.71.0.12']] }), snapshot))), [['10.61.0.1', '10.61.0.151']]);
});

test('a slice from a hub the leaf has no Configuration for is not resolved', () => {
  const object = sliceObject({ addresses: [['10.71.0.12']] });
  const labels = ((object.metadata as JsonObject).labels as JsonObject);
  const other = { ...object, metadata: { ...(object.metadata as JsonObject), labels: { ...labels, 'offloading.liqo.io/origin': 'cluster9' } } };
  assert.deepEqual(rewrite(other, world()).edits, []);
});

// Properties over generated worlds: host parts, tunnel states, which IPs exist and whom they name.
const host = fc.integer({ min: 1, max: 254 });
const worldArbitrary = fc.record({
  tunnel: fc.constantFrom<readonly string[]>(['Connected'], ['Connected', 'Connected'], ['Connecting'], []),
  ips: fc.array(fc.record({ pod: fc.constantFrom('web-0', 'web-1', 'web-9'), host, allocated: host, peerView: fc.constantFrom('10.63', '10.62', '10.200') }), { maxLength: 5 }),
  hubKnown: fc.boolean(),
  leafToPeer: fc.boolean(),
}).map(({ tunnel, ips, hubKnown, leafToPeer }) => world({
  tunnel, hubKnown, leafToPeer: leafToPeer ? defaultLeafToPeer : false,
  ips: ips.map((ip) => hubIpObject({ pod: ip.pod, ip: `${ip.peerView}.0.${ip.host}`, allocated: `10.70.0.${ip.allocated}` })),
}));
const sliceArbitrary = fc.array(fc.array(fc.oneof(host.map((h) => `10.71.0.${h}`), host.map((h) => `10.61.0.${h}`)), { maxLength: 3 }), { maxLength: 3 })
  .map((addresses) => sliceObject({ addresses }));

test('property: f(f(x)) = f(x) on the stock path', () => {
  fc.assert(fc.property(worldArbitrary, sliceArbitrary, (snapshot, slice) => {
    const once = applyRewrite(rewrite(slice, snapshot));
    assert.deepEqual(applyRewrite(rewrite(once, snapshot)), once);
  }), { numRuns: 300 });
});

test('property: the emitted patch applied to the received slice is f(x), through a change of world', () => {
  fc.assert(fc.property(worldArbitrary, worldArbitrary, sliceArbitrary, (before, after, slice) => {
    const stored = applyRewrite(rewrite(slice, before));
    const result = rewrite(stored, after);
    const patch = patchFor(result);
    const patched = jsonpatch.applyPatch(structuredClone(stored), [...(patch ?? [])], true, false).newDocument;
    assert.deepEqual(patched, applyRewrite(result));
  }), { numRuns: 300 });
});

test('property: with the hub\'s IPAM gone every resolved address is restored', () => {
  fc.assert(fc.property(worldArbitrary, sliceArbitrary, (snapshot, slice) => {
    const stored = applyRewrite(rewrite(slice, snapshot));
    const restored = applyRewrite(rewrite(stored, world({ hubKnown: false })));
    assert.deepEqual(addressesOf(restored), addressesOf(slice));
  }), { numRuns: 300 });
});

test('property: an output is always the leaf\'s view of the pod the endpoint names', () => {
  fc.assert(fc.property(worldArbitrary, sliceArbitrary, (snapshot, slice) => {
    const seen: AddressTrace[] = [];
    rewriteEndpointSlice(slice, snapshot, {}, (trace) => seen.push(trace));
    for (const trace of seen) {
      if (trace.hub === undefined) continue;
      // The resolved IP is named after the endpoint's pod (web-<endpoint index>), never another pod at that address.
      assert.equal(trace.hub.ip, `demo/web-${trace.endpoint}`);
    }
  }), { numRuns: 300 });
});

test('one snapshot answers each slice for its own cluster: the pod\'s own leaf gets no-peer after another leaf resolved it', () => {
  const snapshot = world();
  assert.deepEqual(addressesOf(applyRewrite(rewrite(sliceObject({ addresses: [['10.71.0.12']] }), snapshot))), [['10.61.0.151']]);
  const onPeer = sliceObject({ addresses: [['10.71.0.12']], destination: 'cluster3' });
  const [trace] = traces(onPeer, snapshot);
  assert.equal(trace?.stock?.reason, 'no-peer');
  assert.deepEqual(rewrite(onPeer, snapshot).edits, []);
});
