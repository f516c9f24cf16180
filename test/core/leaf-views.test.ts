// The leaf's Liqo Configurations and Connections, decoded from what the API serves, and what they forbid.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCidr, type Cidr } from '../../src/core/cidr.ts';
import {
  connectionHeartbeat, decodeConfiguration, isConfigurationObject, isConnectionObject, leafViews, localOverlap, sameConfigurations, targetMismatch, tunnelDown, tunnelStates, tunnelText, tunnelWord,
} from '../../src/core/leaf-views.ts';
import { configurationObject, connectionObject } from '../support/builders.ts';

function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  assert.ok(parsed);
  return parsed;
}

const texts = (cidrs: readonly Cidr[]) => cidrs.map((c) => c.text);

test('a Configuration gives the leaf\'s own pod CIDRs and its view of the peer\'s pod and external CIDRs', () => {
  const configuration = decodeConfiguration(configurationObject({ peer: 'cluster1', localPod: ['10.60.0.0/16', '10.160.0.0/16'] }));
  assert.equal(configuration.ref, 'liqo-tenant-cluster1/cluster1');
  assert.equal(configuration.remoteCluster, 'cluster1');
  assert.deepEqual(texts(configuration.localPod), ['10.60.0.0/16', '10.160.0.0/16']);
  assert.deepEqual(texts(configuration.remotePod), ['10.200.0.0/16']);
  assert.deepEqual(texts(configuration.remoteExternal), ['10.71.0.0/16']);
});

test('a CIDR given as a single string (pre-1.0 objects, hand-written files) is read as a list of one', () => {
  const object = configurationObject({ peer: 'cluster1' });
  const configuration = decodeConfiguration({ ...object, status: { remote: { cidr: { pod: '10.201.0.0/16', external: '10.72.0.0/16' } } } });
  assert.deepEqual(texts(configuration.remotePod), ['10.201.0.0/16']);
  assert.deepEqual(texts(configuration.remoteExternal), ['10.72.0.0/16']);
});

test('status positions Liqo has not remapped yet ("") and garbage are dropped, not fatal', () => {
  const configuration = decodeConfiguration(configurationObject({ peer: 'cluster1', remotePodView: ['', 'x', '10.200.0.0/16'], remoteExternalView: [] }));
  assert.deepEqual(texts(configuration.remotePod), ['10.200.0.0/16']);
  assert.deepEqual(configuration.remoteExternal, []);
  const bare = decodeConfiguration({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'Configuration', metadata: { name: 'c' } });
  assert.deepEqual([bare.remoteCluster, bare.localPod, bare.remotePod, bare.remoteExternal], [undefined, [], [], []]);
});

test('Configurations equal in what is read are the same, in any order; a moved view is not', () => {
  const a = decodeConfiguration(configurationObject({ peer: 'cluster1' }));
  const b = decodeConfiguration(configurationObject({ peer: 'cluster3', remotePodView: '10.61.0.0/16' }));
  assert.ok(sameConfigurations([a, b], [b, decodeConfiguration(configurationObject({ peer: 'cluster1' }))]));
  assert.ok(!sameConfigurations([a, b], [a, decodeConfiguration(configurationObject({ peer: 'cluster3', remotePodView: '10.62.0.0/16' }))]));
  assert.ok(!sameConfigurations([a], [a, b]));
});

test('a peer counts as up only while every one of its Connections is Connected', () => {
  const states = tunnelStates([
    connectionObject('cluster3', 'Connected'), connectionObject('cluster3', 'Error', 'gw-cluster3-b'),
    connectionObject('cluster4', 'Connected'), connectionObject('cluster4', 'Connected', 'gw-cluster4-b'),
    connectionObject('cluster5', 'Connecting'),
  ]);
  assert.deepEqual([...states].map(([peer, state]) => [peer, state.value]).sort(), [['cluster3', 'Error'], ['cluster4', 'Connected'], ['cluster5', 'Connecting']]);
});

test('with several down, the state is the first one\'s by namespace/name, whatever the order listed', () => {
  const x = connectionObject('cluster3', 'Connecting', 'gw-a');
  const y = connectionObject('cluster3', 'Error', 'gw-b');
  assert.equal(tunnelStates([x, y]).get('cluster3')?.value, 'Connecting');
  assert.equal(tunnelStates([y, x]).get('cluster3')?.value, 'Connecting');
});

test('a Connection without status counts as down; one without the peer label is not anyone\'s', () => {
  const { status: _status, ...noStatus } = connectionObject('cluster3', 'Connected');
  const unlabelled = { ...connectionObject('cluster4', 'Error'), metadata: { name: 'gw', namespace: 'liqo' } };
  assert.deepEqual([...tunnelStates([noStatus, unlabelled, 'junk', null])].map(([peer, state]) => [peer, state.up, state.value]), [['cluster3', false, '']]);
});

const views = leafViews([
  decodeConfiguration(configurationObject({ peer: 'cluster1' })),
  decodeConfiguration(configurationObject({ peer: 'cluster3', remotePod: '10.63.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' })),
]);

const overlaps: readonly [string, string, string, RegExp | undefined][] = [
  ['a source on the leaf\'s own pods', '10.60.0.0/16', 'cluster3', /own pod CIDR 10\.60\.0\.0\/16 \(liqo-tenant-cluster1\/cluster1 spec\.local\.cidr\.pod\)/],
  ['a source inside the leaf\'s own pods', '10.60.4.0/24', 'cluster3', /own pod CIDR/],
  ['a source on the leaf\'s view of the hub\'s pods', '10.200.0.0/16', 'cluster3', /where the leaf sees cluster1's pods \(liqo-tenant-cluster1\/cluster1 status\.remote\.cidr\.pod\)/],
  ['a source on the leaf\'s view of the peer\'s own external CIDR', '10.72.0.0/16', 'cluster3', /cluster3's external CIDR/],
  ['a source on the leaf\'s view of the hub\'s external CIDR', '10.71.0.0/16', 'cluster3', /cluster1's external CIDR/],
  ['a source on the leaf\'s view of the peer\'s pods (the identity pair)', '10.61.0.0/16', 'cluster3', undefined],
  ['the same source for a pair to another peer', '10.61.0.0/16', 'cluster4', /where the leaf sees cluster3's pods/],
  ['a source in no view', '10.63.0.0/16', 'cluster3', undefined],
  ['an IPv6 source next to IPv4 views', 'fd00:60::/32', 'cluster3', undefined],
];
for (const [name, source, peer, detail] of overlaps) {
  test(`local overlap: ${name}`, () => {
    const found = localOverlap(views, cidr(source), peer);
    if (detail === undefined) assert.equal(found, undefined);
    else assert.match(found ?? '', detail);
  });
}

const targets: readonly [string, string, string, RegExp | undefined][] = [
  ['a target inside the leaf\'s view of the peer', '10.61.0.0/16', 'cluster3', undefined],
  ['a target in a part of the leaf\'s view of the peer', '10.61.8.0/24', 'cluster3', undefined],
  ['a target on the leaf\'s own pods', '10.60.0.0/16', 'cluster3', /target 10\.60\.0\.0\/16 overlaps the leaf's own pod CIDR 10\.60\.0\.0\/16 \(liqo-tenant-cluster1\/cluster1 spec\.local\.cidr\.pod\)/],
  ['a target on the leaf\'s own external CIDR', '10.70.0.0/16', 'cluster3', /own external CIDR 10\.70\.0\.0\/16 \(liqo-tenant-cluster1\/cluster1 spec\.local\.cidr\.external\)/],
  ['a target on the leaf\'s view of the hub\'s pods', '10.200.0.0/16', 'cluster3', /where the leaf sees cluster1's pods/],
  ['a target on the leaf\'s view of the peer\'s external CIDR', '10.72.0.0/16', 'cluster3', /cluster3's external CIDR/],
  ['a target outside the leaf\'s view of the peer', '10.62.0.0/16', 'cluster3', /target 10\.62\.0\.0\/16 is outside the leaf's view of cluster3 \(10\.61\.0\.0\/16; liqo-tenant-cluster3\/cluster3 status\.remote\.cidr\.pod\)/],
  ['a target wider than the leaf\'s view of the peer', '10.60.0.0/15', 'cluster3', /own pod CIDR/],
  ['the peer\'s view as the target of a pair to another peer', '10.61.0.0/16', 'cluster4', /where the leaf sees cluster3's pods/],
  ['a target in no view, for a peer without a Configuration', '10.64.0.0/16', 'cluster4', undefined],
];
for (const [name, target, peer, detail] of targets) {
  test(`target mismatch: ${name}`, () => {
    const found = targetMismatch(views, cidr(target), peer);
    if (detail === undefined) assert.equal(found, undefined);
    else assert.match(found ?? '', detail);
  });
}

test('a Configuration without the peer label guards its views against every pair', () => {
  const object = configurationObject({ peer: 'cluster3', remotePodView: '10.61.0.0/16' });
  const unlabelled = leafViews([decodeConfiguration({ ...object, metadata: { name: 'cluster3', namespace: 'liqo-tenant-cluster3' } })]);
  assert.match(localOverlap(unlabelled, cidr('10.61.0.0/16'), 'cluster3') ?? '', /pods of a peer without a liqo\.io\/remote-cluster-id label/);
});

test('the leaf\'s view of a cluster\'s external CIDR is found by the cluster\'s ID and family', () => {
  assert.deepEqual(texts(views.externalOf('cluster1', 'IPv4')), ['10.71.0.0/16']);
  assert.deepEqual(views.externalOf('cluster1', 'IPv6'), []);
  assert.deepEqual(views.externalOf('cluster9', 'IPv4'), []);
  const dual = leafViews([decodeConfiguration(configurationObject({ peer: 'cluster1', remoteExternalView: ['fd71::/64', '10.71.0.0/16'] })),
    decodeConfiguration(configurationObject({ peer: 'cluster1', remoteExternalView: '10.72.0.0/16' }))]);
  assert.deepEqual(texts(dual.externalOf('cluster1', 'IPv4')), ['10.71.0.0/16', '10.72.0.0/16']);
  assert.deepEqual(texts(dual.externalOf('cluster1', 'IPv6')), ['fd71::/64']);
});

test('only Liqo networking objects of the right kind are taken for Configurations and Connections', () => {
  const configuration = configurationObject({ peer: 'cluster1' });
  const connection = connectionObject('cluster3', 'Connected');
  assert.deepEqual([isConfigurationObject(configuration), isConnectionObject(configuration)], [true, false]);
  assert.deepEqual([isConfigurationObject(connection), isConnectionObject(connection)], [false, true]);
  // Another group's kind of the same name, a missing apiVersion, or not an object at all, is not Liqo's.
  assert.equal(isConfigurationObject({ ...configuration, apiVersion: 'config.example.io/v1' }), false);
  assert.equal(isConfigurationObject({ ...configuration, apiVersion: 'xnetworking.liqo.io/v1beta1' }), false);
  const { apiVersion: _apiVersion, ...withoutApiVersion } = connection;
  assert.equal(isConnectionObject(withoutApiVersion), false);
  assert.equal(isConnectionObject('Connection'), false);
});

test('entries of a CIDR list that are not strings are dropped', () => {
  const configuration = decodeConfiguration(configurationObject({ peer: 'cluster1' }));
  const object = configurationObject({ peer: 'cluster1' });
  const odd = decodeConfiguration({ ...object, status: { remote: { cidr: { pod: [42, null, '10.200.0.0/16'], external: 7 } } } });
  assert.deepEqual(texts(odd.remotePod), texts(configuration.remotePod));
  assert.deepEqual(odd.remoteExternal, []);
});

test('a Configuration is named namespace/name, by name alone without a namespace, and by the fallback without either', () => {
  assert.equal(decodeConfiguration({ kind: 'Configuration', metadata: { name: 'c' } }).ref, 'c');
  assert.equal(decodeConfiguration({ kind: 'Configuration', metadata: { namespace: 'ns' } }, 'file.yaml#2').ref, 'ns/file.yaml#2');
  assert.equal(decodeConfiguration({ kind: 'Configuration' }, 'file.yaml#3').ref, 'file.yaml#3');
  assert.equal(decodeConfiguration({ kind: 'Configuration' }).ref, '');
});

test('Configurations differ when any field read differs: name, peer, or any of the three CIDR lists', () => {
  const base = configurationObject({ peer: 'cluster1' });
  const a = decodeConfiguration(base);
  const variants = [
    { ...base, metadata: { ...(base.metadata as object), name: 'other' } },
    { ...base, metadata: { ...(base.metadata as object), labels: { 'liqo.io/remote-cluster-id': 'cluster9' } } },
    configurationObject({ peer: 'cluster1', localPod: ['10.60.0.0/16', '10.61.0.0/16'] }),
    configurationObject({ peer: 'cluster1', localPod: '10.62.0.0/16' }),
    configurationObject({ peer: 'cluster1', remotePodView: ['10.200.0.0/16', '10.202.0.0/16'] }),
    configurationObject({ peer: 'cluster1', remoteExternalView: '10.79.0.0/16' }),
    configurationObject({ peer: 'cluster1', remoteExternalView: [] }),
  ];
  for (const [i, variant] of variants.entries()) {
    assert.equal(sameConfigurations([a], [decodeConfiguration(variant)]), false, `variant ${i}`);
  }
  assert.equal(sameConfigurations([], []), true);
});

test('with three Connections down listed in reverse order, the first by namespace/name decides', () => {
  const down = [connectionObject('cluster3', 'Error', 'gw-c'), connectionObject('cluster3', 'Connecting', 'gw-b'),
    connectionObject('cluster3', 'Pending', 'gw-a')];
  assert.equal(tunnelStates(down).get('cluster3')?.value, 'Pending');
  assert.equal(tunnelStates([...down].reverse()).get('cluster3')?.value, 'Pending');
});

test('a Connected Connection the judge finds silent makes its peer connection-stale, after any Connection not Connected', () => {
  const lastHeartbeat = '2026-11-28T12:00:00.000Z';
  const silent = (ref: string) => (ref === 'liqo-tenant-cluster3/gw-cluster3' ? lastHeartbeat : undefined);
  const stale = tunnelStates([connectionObject('cluster3', 'Connected'), connectionObject('cluster3', 'Connected', 'gw-cluster3-b')], silent);
  assert.deepEqual(stale.get('cluster3'), { up: false, reason: 'connection-stale', value: 'Connected', connection: 'liqo-tenant-cluster3/gw-cluster3', lastHeartbeat });
  const state = stale.get('cluster3');
  assert.ok(state !== undefined);
  assert.equal(tunnelWord(state), 'connection-stale');
  assert.equal(tunnelText(state, Date.parse(lastHeartbeat) + 95_400), 'connection-stale (last heartbeat 95s ago, 2026-11-28T12:00:00.000Z)');
  assert.deepEqual(tunnelDown('cluster3', state), {
    reason: 'connection-stale',
    detail: 'the leaf\'s Liqo Connection liqo-tenant-cluster3/gw-cluster3 to cluster3 reads Connected, but its gateway stopped reporting: no heartbeat since 2026-11-28T12:00:00.000Z',
  });
  // A value not Connected says more: the tunnel is down whatever the heartbeats.
  const down = tunnelStates([connectionObject('cluster3', 'Connected'), connectionObject('cluster3', 'Error', 'gw-cluster3-b', null)], silent);
  assert.deepEqual(down.get('cluster3'), { up: false, reason: 'tunnel-down', value: 'Error' });
  // Without a judge (files, --connection-stale-after 0) the value alone decides.
  assert.deepEqual(tunnelStates([connectionObject('cluster3', 'Connected', 'gw-cluster3', '2020-01-01T00:00:00Z')]).get('cluster3'), { up: true, value: 'Connected' });
});

test('the heartbeat is status.latency.timestamp; none for null, a zero time, junk or a Connection without latency', () => {
  assert.deepEqual(connectionHeartbeat(connectionObject('cluster3', 'Connected', 'gw', '2026-11-28T12:00:05Z')), { text: '2026-11-28T12:00:05Z', at: Date.parse('2026-11-28T12:00:05Z') });
  for (const timestamp of [null, '0001-01-01T00:00:00Z', 'yesterday', '']) {
    const object = { ...connectionObject('cluster3', 'Connected', 'gw', '2026-11-28T12:00:05Z'), status: { value: 'Connected', latency: { value: 'N/A', timestamp } } };
    assert.equal(connectionHeartbeat(object), undefined, String(timestamp));
  }
  assert.equal(connectionHeartbeat(connectionObject('cluster3', 'Connected', 'gw', null)), undefined);
  assert.equal(connectionHeartbeat('junk'), undefined);
});
