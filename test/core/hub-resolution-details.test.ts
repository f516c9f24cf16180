// The stock-Liqo path, what `explain` and `/debug/pairs` say of it (the detail of every reason, the direct network to
// each of the hub's peers), and worlds hub-resolution.test.ts does not build: a hub with many peers, dual-stack
// Configurations, a hub Configuration that names no peer, a leaf Configuration with a status position and no spec.
// Topology as there: hub cluster1, leaf cluster2, peer cluster3 (pods 10.60/16, seen by the hub at 10.63/16, by the
// leaf at 10.61/16); the hub's external CIDR 10.70/16 is seen by the leaf at 10.71/16.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeHubIp, indexHubIps, type HubIp } from '../../src/core/hub-ipam.ts';
import type { HubIpam, StockReason } from '../../src/core/hub-resolution.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { decodeConfiguration, tunnelStates } from '../../src/core/leaf-views.ts';
import { applyRewrite, rewriteEndpointSlice, type AddressTrace } from '../../src/core/rewrite.ts';
import { buildSnapshot, type Snapshot } from '../../src/core/snapshot.ts';
import { configurationObject, connectionObject, hubIpObject, sliceObject } from '../support/builders.ts';

const leafToHub = configurationObject({ peer: 'cluster1' });
const leafToPeer = configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16' });
const hubToPeer = configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16' });
const hubToLeaf = configurationObject({ peer: 'cluster2', remotePod: '10.60.0.0/16', remotePodView: '10.62.0.0/16' });
const web0 = hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' });

function hubOf(ips: readonly JsonObject[], configurations: readonly JsonObject[]): HubIpam {
  const decoded: HubIp[] = ips.flatMap((object) => decodeHubIp(object) ?? []);
  return { known: true, ips: indexHubIps(decoded), configurations: configurations.map((c) => decodeConfiguration(c)) };
}

function snapshotOf(options: {
  readonly hub?: HubIpam;
  readonly leaf?: readonly JsonObject[];
  readonly connections?: readonly JsonObject[];
}): Snapshot {
  return buildSnapshot({
    version: 1,
    fccs: [],
    tunnels: tunnelStates(options.connections ?? [connectionObject('cluster3', 'Connected')]),
    configurations: (options.leaf ?? [leafToHub, leafToPeer]).map((c) => decodeConfiguration(c)),
    ...(options.hub === undefined ? {} : { hub: options.hub }),
  });
}

const defaultHub = hubOf([web0], [hubToPeer, hubToLeaf]);

function traceOf(object: Json, snapshot: Snapshot): AddressTrace {
  const seen: AddressTrace[] = [];
  rewriteEndpointSlice(object, snapshot, {}, (trace) => seen.push(trace));
  const [trace] = seen;
  assert.ok(trace !== undefined && seen.length === 1, 'one address');
  return trace;
}

/** The address stays, for the reason and with the detail given. */
/** `peer`: the pod's cluster, which step 4's reasons name (status counts the address for it). */
function assertStays(snapshot: Snapshot, reason: StockReason, detail: string, object: JsonObject = sliceObject({ addresses: [['10.71.0.12']] }), peer?: string): void {
  const trace = traceOf(object, snapshot);
  assert.equal(trace.output, trace.input);
  assert.deepEqual(trace.stock, { reason, detail, ...(peer === undefined ? {} : { peer }) });
}

const addressesOf = (object: JsonObject): unknown => (object.endpoints as { addresses: string[] }[]).map((e) => e.addresses);
const rewritten = (object: JsonObject, snapshot: Snapshot): unknown => {
  const result = rewriteEndpointSlice(object, snapshot);
  assert.ok(!('skip' in result), 'skip' in result ? result.detail : '');
  return addressesOf(applyRewrite(result));
};

const withTargetRef = (targetRef: JsonObject | undefined, addresses: string[][] = [['10.71.0.12']]): JsonObject => {
  const object = sliceObject({ addresses });
  const endpoints = (object.endpoints as JsonObject[]).map(({ targetRef: _, ...rest }) => (targetRef === undefined ? rest : { ...rest, targetRef }));
  return { ...object, endpoints };
};

const unlabelled = (object: JsonObject): JsonObject => ({ ...object, metadata: { ...(object.metadata as JsonObject), labels: {} } });
const renamed = (object: JsonObject, name: string): JsonObject => ({ ...object, metadata: { ...(object.metadata as JsonObject), name } });

test('with no hub source at all, hub-external says how to give one', () => {
  assertStays(snapshotOf({}), 'hub-external',
    'allocated by cluster1\'s IPAM, whose IP objects are not known (no hub source: give --hub files, or --shortcuts-kubeconfig to read the hub)');
  assertStays(snapshotOf({ hub: { known: false, why: 'ips.ipam.liqo.io is forbidden' } }), 'hub-external',
    'allocated by cluster1\'s IPAM, whose IP objects are not known (ips.ipam.liqo.io is forbidden)');
});

test('an address in a block of the leaf\'s view of the hub\'s external CIDR with no spec block at that position stays hub-external', () => {
  // Liqo fills status.remote.cidr.external; here the second position has no spec.remote.cidr.external to move into.
  const leafToHubHalf = configurationObject({ peer: 'cluster1', remoteExternal: ['10.70.0.0/16'], remoteExternalView: ['10.71.0.0/16', '10.73.0.0/16'] });
  const snapshot = snapshotOf({ hub: defaultHub, leaf: [leafToHubHalf, leafToPeer] });
  assertStays(snapshot, 'hub-external', 'in cluster1\'s external CIDR as this leaf sees it, at a position of its Configuration without spec.remote.cidr.external',
    sliceObject({ addresses: [['10.73.0.12']] }));
  assert.deepEqual(rewritten(sliceObject({ addresses: [['10.71.0.12']] }), snapshot), [['10.61.0.151']]);
});

test('an endpoint without a targetRef and no IP at its address stays: no-hub-ip', () => {
  const snapshot = snapshotOf({ hub: hubOf([hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.13' })], [hubToPeer]) });
  assertStays(snapshot, 'no-hub-ip', 'no IP of cluster1 is allocated at 10.70.0.12', withTargetRef(undefined));
  assertStays(snapshot, 'no-hub-ip', 'no IP of cluster1 is allocated at 10.70.0.12');
});

test('a targetRef whose name matches IPs in two namespaces: the detail names both', () => {
  const snapshot = snapshotOf({ hub: hubOf([hubIpObject({ pod: 'web-0', namespace: 'other', ip: '10.63.0.7' }), web0], [hubToPeer]) });
  assertStays(snapshot, 'no-hub-ip',
    'cluster1 has 2 IPs at 10.70.0.12 for a pod named web-0 (other/web-0, demo/web-0) and the endpoint names no namespace to choose between them',
    withTargetRef({ kind: 'RemotePod', name: 'web-0' }));
});

test('the detail of each reason of step 4 names the pod, the peer and what is missing', () => {
  const unmapped = configurationObject({ peer: 'cluster3', remotePod: '10.59.0.0/16', remotePodView: '10.61.0.0/16' });
  assertStays(snapshotOf({ hub: defaultHub, leaf: [leafToHub, unmapped] }), 'no-shortcut',
    'outside-declared: demo/web-0 runs on cluster3 at 10.60.0.151, in no spec.remote.cidr.pod (with a status entry) of this leaf\'s Configuration for cluster3', undefined, 'cluster3');
  // The pod's address in a declared CIDR whose position has no status entry: nothing to move it into either.
  const unseen = configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: [] });
  assertStays(snapshotOf({ hub: defaultHub, leaf: [leafToHub, unseen] }), 'no-shortcut',
    'outside-declared: demo/web-0 runs on cluster3 at 10.60.0.151, in no spec.remote.cidr.pod (with a status entry) of this leaf\'s Configuration for cluster3', undefined, 'cluster3');
  assertStays(snapshotOf({ hub: defaultHub, connections: [] }), 'no-shortcut', 'demo/web-0 runs on cluster3; this leaf has no Liqo Connection to cluster3', undefined, 'cluster3');
  assertStays(snapshotOf({ hub: defaultHub, connections: [connectionObject('cluster3', 'Connected', 'a'), connectionObject('cluster3', 'Connecting', 'b')] }),
    'tunnel-down', 'demo/web-0 runs on cluster3; the leaf\'s Liqo Connection to cluster3 is Connecting, not Connected', undefined, 'cluster3');
  // A Connection Liqo has not given a status yet is not Connected either.
  const { status: _, ...noStatus } = connectionObject('cluster3', 'Connected');
  assertStays(snapshotOf({ hub: defaultHub, connections: [noStatus] }), 'tunnel-down',
    'demo/web-0 runs on cluster3; the leaf\'s Liqo Connection to cluster3 is without status, not Connected', undefined, 'cluster3');
});

test('a hub Configuration that names no peer (no liqo.io/remote-cluster-id) resolves no pod: no-peer', () => {
  const detail = 'demo/web-0 (10.63.0.151) is in no peer\'s pod CIDR as cluster1 sees them';
  assertStays(snapshotOf({ hub: hubOf([web0], [unlabelled(hubToPeer)]) }), 'no-peer', detail);
  // Also among enough peers that the hub's blocks are looked up by table rather than scanned.
  const others = ['cluster4', 'cluster5'].map((peer, i) => configurationObject({ peer, remotePod: '10.60.0.0/16', remotePodView: `10.6${4 + i}.0.0/16` }));
  assertStays(snapshotOf({ hub: hubOf([web0], [unlabelled(hubToPeer), ...others, hubToLeaf]) }), 'no-peer', detail);
});

test('a hub with many peers at blocks of several sizes: each pod resolves to its own peer', () => {
  // The hub sees cluster3 at 10.63/16, cluster4 at 10.64.0/24 and cluster5 at 10.65.0/20; the leaf sees them at
  // 10.61/16, 10.81/16 and 10.91/16 (their own pods are all 10.60/16).
  const peers = [
    { peer: 'cluster3', hubView: '10.63.0.0/16', leafView: '10.61.0.0/16', pod: '10.63.0.151', own: '10.61.0.151' },
    { peer: 'cluster4', hubView: '10.64.0.0/24', leafView: '10.81.0.0/16', pod: '10.64.0.152', own: '10.81.0.152' },
    { peer: 'cluster5', hubView: '10.65.0.0/20', leafView: '10.91.0.0/16', pod: '10.65.3.153', own: '10.91.3.153' },
  ];
  const hubConfigurations = [...peers.map(({ peer, hubView }) => configurationObject({ peer, remotePod: '10.60.0.0/16', remotePodView: hubView })), hubToLeaf];
  const ips = peers.map(({ pod }, i) => hubIpObject({ pod: `web-${i}`, ip: pod, allocated: `10.70.0.${20 + i}` }));
  const snapshot = snapshotOf({
    hub: hubOf([...ips, hubIpObject({ pod: 'web-3', ip: '10.62.0.9', allocated: '10.70.0.23' })], hubConfigurations),
    leaf: [leafToHub, ...peers.map(({ peer, leafView }) => configurationObject({ peer, remotePod: '10.60.0.0/16', remotePodView: leafView }))],
    connections: peers.map(({ peer }) => connectionObject(peer, 'Connected')),
  });
  assert.deepEqual(rewritten(sliceObject({ addresses: [['10.71.0.20'], ['10.71.0.21'], ['10.71.0.22']] }), snapshot), peers.map(({ own }) => [own]));
  // The leaf's own pod, and an address in none of the hub's blocks, still name no peer.
  assertStays(snapshot, 'no-peer', 'demo/web-3 is a pod of cluster2 itself (liqo-tenant-cluster2/cluster2 on cluster1)',
    sliceObject({ addresses: [[], [], [], ['10.71.0.23']] }));
  const outside = snapshotOf({
    hub: hubOf([hubIpObject({ pod: 'web-0', ip: '10.66.0.1', allocated: '10.70.0.20' })], hubConfigurations),
    leaf: [leafToHub, leafToPeer], connections: [],
  });
  assertStays(outside, 'no-peer', 'demo/web-0 (10.66.0.1) is in no peer\'s pod CIDR as cluster1 sees them', sliceObject({ addresses: [['10.71.0.20']] }));
});

test('dual-stack Configurations: each family\'s addresses move through that family\'s positions only', () => {
  const leafToHub2 = configurationObject({ peer: 'cluster1', remoteExternal: ['fd70::/64', '10.70.0.0/16'], remoteExternalView: ['fd71::/64', '10.71.0.0/16'] });
  const leafToPeer2 = configurationObject({ peer: 'cluster3', remotePod: ['fd60::/64', '10.60.0.0/16'], remotePodView: ['fd61::/64', '10.61.0.0/16'] });
  const hubToPeer2 = configurationObject({ peer: 'cluster3', remotePod: ['fd60::/64', '10.60.0.0/16'], remotePodView: ['fd63::/64', '10.63.0.0/16'] });
  const snapshot = snapshotOf({
    hub: hubOf([web0, hubIpObject({ pod: 'web-0', ip: 'fd63::97', allocated: 'fd70::c' })], [hubToPeer2]),
    leaf: [leafToHub2, leafToPeer2],
  });
  assert.deepEqual(rewritten(sliceObject({ addresses: [['10.71.0.12']] }), snapshot), [['10.61.0.151']]);
  assert.deepEqual(rewritten(sliceObject({ addressType: 'IPv6', addresses: [['fd71::c']] }), snapshot), [['fd61::97']]);
});

test('the direct network to each of the hub\'s peers, in ID order, once per peer', () => {
  const leafToPeerB = renamed(leafToPeer, 'cluster3-b');
  const hubToPeerB = renamed(hubToPeer, 'cluster3-b');
  const hub = hubOf([web0], [hubToPeer, unlabelled(configurationObject({ peer: 'cluster9' })), hubToLeaf, hubToPeerB]);
  assert.deepEqual(snapshotOf({ hub, leaf: [leafToHub, leafToPeer, leafToPeerB] }).directNetworks, [
    { peer: 'cluster2', state: 'no-shortcut', detail: 'this leaf has no Liqo Configuration for cluster2' },
    { peer: 'cluster3', state: 'direct', detail: 'through liqo-tenant-cluster3/cluster3, liqo-tenant-cluster3/cluster3-b' },
  ]);
  assert.deepEqual(snapshotOf({ hub: { known: false, why: 'not given' } }).directNetworks, []);
  assert.deepEqual(snapshotOf({}).directNetworks, []);
});
