// The hub's IPAM record of offloaded pods: which objects are IPs, which IPs the stock path keeps, when two decoded IPs
// are the same (the view rebuilds nothing then), and the index by allocated address.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeHubIp, indexHubIps, isHubIpObject, sameHubIp, type HubIp } from '../../src/core/hub-ipam.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { configurationObject, hubIpObject } from '../support/builders.ts';

const web0 = hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' });

function decoded(object: JsonObject): HubIp {
  const ip = decodeHubIp(object);
  assert.ok(ip !== undefined, 'decoded');
  return ip;
}

test('an ipam.liqo.io/v1alpha1 IP is a hub IP; another version, group or kind is not', () => {
  assert.equal(isHubIpObject(web0), true);
  assert.equal(isHubIpObject({ ...web0, apiVersion: 'ipam.liqo.io/v1beta1' }), false);
  assert.equal(isHubIpObject({ ...web0, apiVersion: 'networking.liqo.io/v1alpha1' }), false);
  assert.equal(isHubIpObject({ ...web0, kind: 'Network' }), false);
  assert.equal(isHubIpObject(configurationObject({ peer: 'cluster3' })), false);
  assert.equal(isHubIpObject({ kind: 'IP' }), false);
  assert.equal(isHubIpObject(null), false);
  assert.equal(isHubIpObject('ipam.liqo.io/v1alpha1'), false);
});

test('an offloaded pod\'s IP decodes to its ref, pod, and both addresses', () => {
  assert.deepEqual(decodeHubIp(web0), {
    ref: 'demo/web-0', podName: 'web-0', podNamespace: 'demo', family: 'IPv4',
    pod: (10 << 24 | 63 << 16 | 151) >>> 0, allocated: (10 << 24 | 70 << 16 | 12) >>> 0,
  });
  const ip6 = decodeHubIp(hubIpObject({ pod: 'web-1', namespace: 'shop', ip: 'fd63::97', allocated: 'fd70::c' }));
  assert.deepEqual(ip6, { ref: 'shop/web-1', podName: 'web-1', podNamespace: 'shop', family: 'IPv6', pod: 0xfd630000000000000000000000000097n, allocated: 0xfd70000000000000000000000000000cn });
});

test('an IP without the pod-name label is not an offloaded pod\'s: not decoded', () => {
  const withLabels = (labels: JsonObject): JsonObject => ({ ...web0, metadata: { ...(web0.metadata as JsonObject), labels } });
  assert.equal(decodeHubIp(withLabels({})), undefined);
  assert.equal(decodeHubIp(withLabels({ 'offloading.liqo.io/pod-namespace': 'demo' })), undefined);
});

test('an IP with the pod-name label and no pod-namespace label names a pod of its own namespace; without either, none', () => {
  const withLabels = (labels: JsonObject, namespace?: string): JsonObject => {
    const { namespace: _, ...rest } = web0.metadata as JsonObject;
    return { ...web0, metadata: { ...rest, labels, ...(namespace === undefined ? {} : { namespace }) } };
  };
  assert.equal(decodeHubIp(withLabels({ 'offloading.liqo.io/pod-name': 'web-0' }, 'shop'))?.podNamespace, 'shop');
  assert.equal(decodeHubIp(withLabels({ 'offloading.liqo.io/pod-name': 'web-0', 'offloading.liqo.io/pod-namespace': 'demo' }, 'shop'))?.podNamespace, 'demo');
  assert.equal(decodeHubIp(withLabels({ 'offloading.liqo.io/pod-name': 'web-0' })), undefined);
});

test('an IP without spec.ip or status.ip is not decoded, and reading it does not throw', () => {
  const { spec: _, ...noSpec } = web0;
  assert.equal(decodeHubIp(noSpec), undefined);
  assert.equal(decodeHubIp({ ...web0, spec: { masquerade: false } }), undefined);
  assert.equal(decodeHubIp(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: null })), undefined);
});

test('an IP whose two addresses are of two families, or not canonical, is not decoded', () => {
  assert.equal(decodeHubIp(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: 'fd70::c' })), undefined);
  assert.equal(decodeHubIp(hubIpObject({ pod: 'web-0', ip: 'fd63::97', allocated: '10.70.0.12' })), undefined);
  assert.equal(decodeHubIp(hubIpObject({ pod: 'web-0', ip: '10.63.0.0151', allocated: '10.70.0.12' })), undefined);
  assert.equal(decodeHubIp(hubIpObject({ pod: 'web-0', ip: 'FD63::97', allocated: 'fd70::c' })), undefined);
});

test('two decodings of one IP are the same; a change in any field read makes them differ', () => {
  const ip = decoded(web0);
  assert.equal(sameHubIp(ip, decoded(structuredClone(web0))), true);
  const changed: HubIp[] = [
    { ...ip, ref: 'demo/web-0-old' },
    { ...ip, podName: 'web-1' },
    { ...ip, podNamespace: 'other' },
    decoded(hubIpObject({ pod: 'web-0', ip: '10.63.0.152', allocated: '10.70.0.12' })),
    decoded(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.13' })),
    decoded(hubIpObject({ pod: 'web-0', ip: 'fd63::97', allocated: 'fd70::c' })),
  ];
  for (const other of changed) {
    assert.equal(sameHubIp(ip, other), false, JSON.stringify(other, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
    assert.equal(sameHubIp(other, ip), false);
  }
});

test('the index counts every IP and files each under its allocated address, in its family', () => {
  const old = decoded(hubIpObject({ pod: 'old', ip: '10.63.0.7', allocated: '10.70.0.12' }));
  const ip = decoded(web0);
  const ip6 = decoded(hubIpObject({ pod: 'web-1', ip: 'fd63::97', allocated: 'fd70::c' }));
  const index = indexHubIps([old, ip, ip6]);
  assert.equal(index.size, 3);
  assert.deepEqual([...index.ipv4], [[ip.allocated, [old, ip]]]);
  assert.deepEqual([...index.ipv6], [[ip6.allocated, [ip6]]]);
  assert.equal(indexHubIps([]).size, 0);
});

test('the index also files each IP under the hub\'s view of its pod (spec.ip): the same entries, for the direct connections\' hub path', () => {
  const old = decoded(hubIpObject({ pod: 'old', ip: '10.63.0.7', allocated: '10.70.0.12' }));
  const twin = decoded(hubIpObject({ pod: 'twin', ip: '10.63.0.7', allocated: '10.70.0.14' }));
  const ip = decoded(web0);
  const ip6 = decoded(hubIpObject({ pod: 'web-1', ip: 'fd63::97', allocated: 'fd70::c' }));
  const index = indexHubIps([old, ip, twin, ip6]);
  assert.deepEqual([...index.byPod.ipv4], [[old.pod, [old, twin]], [ip.pod, [ip]]]);
  assert.deepEqual([...index.byPod.ipv6], [[ip6.pod, [ip6]]]);
  assert.equal([...index.byPod.ipv4.values()][0]?.[0], [...index.ipv4.values()][0]?.[0], 'one object, filed twice');
});
