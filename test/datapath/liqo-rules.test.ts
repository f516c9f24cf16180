// The data-path generator of test/e2e/support/datapath (Liqo v1.2.0's gateway and node tables and routes from Liqo
// objects), without root: what each generator makes of the world's objects, rule by rule. The e2e
// (test/e2e/datapath.test.ts) shows the same tables carrying packets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configurationObject, hubIpObject } from '../support/builders.ts';
import {
  decodeConfiguration, decodeIp, gatewayRoutes, ipMappingTable, masqueradeBypassTable, nodeRoutes, remapCidrTable,
} from '../e2e/support/datapath/liqo-rules.ts';
import { dataPathSpec, hubConfigurationSpecs, leafConfigurationSpecs } from '../e2e/support/datapath/world.ts';

const rules = (table: string) => table.split('\n').map((line) => line.trim())
  .filter((line) => /(?:dnat|snat) /.test(line)).map((line) => line.replace(/ comment ".*"$/, ''));

const leafForHub = decodeConfiguration(configurationObject(leafConfigurationSpecs()[0]!));
const leafForServer = decodeConfiguration(configurationObject(leafConfigurationSpecs()[1]!));
const hubForServer = decodeConfiguration(configurationObject(hubConfigurationSpecs()[1]!));

test('remap tables: the local view of the peer to its own addresses on the way in, back on the way out; an unremapped CIDR has no rule', () => {
  assert.deepEqual(rules(remapCidrTable(leafForServer, 'pod')), [
    'ip daddr 10.61.0.0/16 iifname != "eth0" iifname != "liqo-tunnel" dnat prefix to 10.60.0.0/16',
    'oifname != "eth0" ip saddr 10.60.0.0/16 iifname "liqo-tunnel" snat prefix to 10.61.0.0/16',
  ]);
  assert.deepEqual(rules(remapCidrTable(leafForHub, 'pod')), [], 'the hub\'s pods are seen unremapped (10.200/16)');
  assert.deepEqual(rules(remapCidrTable(leafForHub, 'external')), [
    'ip daddr 10.71.0.0/16 iifname != "eth0" iifname != "liqo-tunnel" dnat prefix to 10.70.0.0/16',
    'oifname != "eth0" ip saddr 10.70.0.0/16 iifname "liqo-tunnel" snat prefix to 10.71.0.0/16',
  ]);
  const table = remapCidrTable(leafForServer, 'pod');
  assert.match(table, /^table ip remap-podcidr \{/);
  assert.match(table, /chain outgoing \{\n\s+type nat hook prerouting priority dstnat; policy accept;/);
  assert.match(table, /chain incoming \{\n\s+type nat hook postrouting priority srcnat; policy accept;/);
});

test('every rule names the Liqo file that forges it', () => {
  for (const table of [remapCidrTable(leafForServer, 'pod'), masqueradeBypassTable(hubForServer), ipMappingTable(decodeIp(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' })))]) {
    for (const line of table.split('\n').filter((l) => /nat /.test(l) && !l.includes('type nat'))) {
      assert.match(line, /comment "liqo\/pkg\/liqo-controller-manager\/networking\/[a-z/-]+\.go"$/, line);
    }
  }
});

test('the ip-mapping table: the address the hub allocated to the pod, to the hub\'s view of the pod and back', () => {
  const table = ipMappingTable(decodeIp(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' })));
  assert.match(table, /^table ip web-0-remap-ipmapping-gw-demo \{/);
  assert.deepEqual(rules(table), ['ip daddr 10.70.0.12 dnat to 10.63.0.151', 'ip saddr 10.70.0.12 snat to 10.63.0.151']);
});

test('masquerade-bypass: local pods keep their address towards the peer, anything else takes the first address of the external CIDR', () => {
  const table = masqueradeBypassTable(hubForServer);
  assert.match(table, /^table ip cluster3-masquerade-bypass \{\n\s+chain pre-postrouting \{\n\s+type nat hook postrouting priority srcnat - 1;/);
  assert.deepEqual(rules(table), [
    'ip daddr 10.63.0.0/16 ip saddr 10.200.0.0/16 snat prefix to 10.200.0.0/16',
    'ip daddr 10.63.0.0/16 ip saddr != 10.200.0.0/16 snat to 10.70.0.0',
    'ip daddr 10.75.0.0/16 ip saddr 10.200.0.0/16 snat prefix to 10.200.0.0/16',
    'ip daddr 10.75.0.0/16 ip saddr != 10.200.0.0/16 snat to 10.70.0.0',
  ]);
});

test('routes: a node sends its views of the peer to the gateway; the gateway sends the peer\'s own CIDRs, from the node only, into the tunnel', () => {
  assert.deepEqual(nodeRoutes(leafForServer, '10.80.5.2').map((r) => `${r.dst} via ${r.via}`), ['10.61.0.0/16 via 10.80.5.2', '10.72.0.0/16 via 10.80.5.2']);
  assert.deepEqual(gatewayRoutes(leafForServer, 'client', 'liqo.node').map((r) => `${r.iif} ${r.dst} via ${r.via}`),
    ['liqo.node 10.60.0.0/16 via 169.254.18.1', 'liqo.node 10.70.0.0/16 via 169.254.18.1']);
  assert.deepEqual(gatewayRoutes(hubForServer, 'server', 'liqo.node').map((r) => r.via), ['169.254.18.2', '169.254.18.2']);
});

test('a Configuration without its peer label, or an IP without status.ip, is refused by name', () => {
  const unlabelled = configurationObject({ peer: 'cluster3' });
  delete (unlabelled.metadata as { labels?: unknown }).labels;
  assert.throws(() => decodeConfiguration(unlabelled), /metadata\.labels\.liqo\.io\/remote-cluster-id/);
  assert.throws(() => decodeIp(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: null })), /status\.ip/);
});

test('the world: three clusters, a gateway pair per link, the FCC path\'s hub-view CIDR through the hub from cluster2', () => {
  const spec = dataPathSpec();
  assert.deepEqual(spec.clusters.map((c) => c.id), ['cluster1', 'cluster2', 'cluster3']);
  assert.deepEqual(spec.links.map((l) => `${l.client}->${l.server}`), ['cluster2->cluster1', 'cluster3->cluster1', 'cluster2->cluster3']);
  assert.deepEqual(spec.clusters[1]?.throughPeer, [{ peer: 'cluster1', cidr: '10.63.0.0/16' }]);
  // Every gateway needs its cluster's Configuration for the peer.
  for (const link of spec.links) {
    for (const [side, peer] of [[link.server, link.client], [link.client, link.server]] as const) {
      const cluster = spec.clusters.find((c) => c.id === side);
      assert.ok(cluster?.configurations.map(decodeConfiguration).some((cfg) => cfg.peer === peer), `${side} has a Configuration for ${peer}`);
    }
  }
});
