// One Liqo world for the ShadowEndpointSlice repair, as every Liqo example topology has it: every cluster declares the
// same pod CIDR, so the hub remaps its peers. Hub cluster1; leaf cluster2 (where the webhook runs); peers cluster3
// and cluster4 (both pod CIDRs 10.200.0.0/16, like everyone's).
//   the hub sees       cluster3 at 10.203/16, cluster4 at 10.204/16, its own pods at 10.200/16, external 10.70/16
//   the leaf sees      cluster3 at 10.213/16, cluster4 at 10.214/16, the hub's pods at 10.201/16 and its external
//                      10.70/16 at 10.71/16
// IPv6 mirrors it: pods fd00:200::/64 everywhere, the hub sees cluster3 at fd00:203::/64, the leaf at fd00:213::/64,
// the hub's external fd00:70::/64 seen by the leaf at fd00:71::/64.
import { decodeHubIp, indexHubIps } from '../../src/core/hub-ipam.ts';
import type { HubIpam } from '../../src/core/hub-resolution.ts';
import type { HubPart } from '../../src/core/hubs.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { decodeConfiguration, tunnelStates, type LiqoConfiguration, type TunnelStates } from '../../src/core/leaf-views.ts';
import { buildSnapshot, type Snapshot } from '../../src/core/snapshot.ts';
import { configurationObject, connectionObject, hubIpObject } from './builders.ts';

export const HUB = 'cluster1';
export const LEAF = 'cluster2';

export const leafToHub = configurationObject({
  peer: HUB, localPod: ['10.200.0.0/16', 'fd00:200::/64'], remotePod: ['10.200.0.0/16', 'fd00:200::/64'], remotePodView: ['10.201.0.0/16', 'fd00:201::/64'],
  remoteExternal: ['10.70.0.0/16', 'fd00:70::/64'], remoteExternalView: ['10.71.0.0/16', 'fd00:71::/64'],
});

export function leafToPeer(peer: string, view: readonly string[], declared: readonly string[] = ['10.200.0.0/16', 'fd00:200::/64']): JsonObject {
  return configurationObject({ peer, localPod: ['10.200.0.0/16', 'fd00:200::/64'], remotePod: declared, remotePodView: view });
}

export const leafToCluster3 = leafToPeer('cluster3', ['10.213.0.0/16', 'fd00:213::/64']);
export const leafToCluster4 = leafToPeer('cluster4', ['10.214.0.0/16', 'fd00:214::/64']);

export function hubToPeer(peer: string, view: readonly string[], declared: readonly string[] = ['10.200.0.0/16', 'fd00:200::/64']): JsonObject {
  return configurationObject({ peer, localPod: ['10.200.0.0/16', 'fd00:200::/64'], remotePod: declared, remotePodView: view });
}

export const hubToCluster2 = hubToPeer('cluster2', ['10.202.0.0/16', 'fd00:202::/64']);
export const hubToCluster3 = hubToPeer('cluster3', ['10.203.0.0/16', 'fd00:203::/64']);
export const hubToCluster4 = hubToPeer('cluster4', ['10.204.0.0/16', 'fd00:204::/64']);

/** web-0 runs on cluster3, web-1 on cluster4: the hub sees them at 10.203.0.5 and 10.204.0.6 and allocated 10.70.0.12/13. */
export const hubIps: readonly JsonObject[] = [
  hubIpObject({ pod: 'web-0', ip: '10.203.0.5', allocated: '10.70.0.12' }),
  hubIpObject({ pod: 'web-1', ip: '10.204.0.6', allocated: '10.70.0.13' }),
  hubIpObject({ pod: 'web6-0', ip: 'fd00:203::5', allocated: 'fd00:70::12' }),
];

export interface DirectWorld {
  /** The leaf's Configurations; the hub's and both peers' by default. */
  readonly leaf?: readonly JsonObject[];
  /** `status.value` of the leaf's Connections per peer; both peers Connected by default. */
  readonly tunnels?: Readonly<Record<string, readonly string[]>>;
  readonly hubConfigurations?: readonly JsonObject[];
  readonly ips?: readonly JsonObject[];
  /** False: the hub's IPAM objects are not known. */
  readonly hubKnown?: boolean;
}

let version = 0;

/** The world's parts as a view store publishes them (SnapshotStore.publish). */
export function directWorldParts(spec: DirectWorld = {}): { fccs: []; tunnels: TunnelStates; configurations: LiqoConfiguration[]; hubs: HubPart[] } {
  const hub: HubIpam = spec.hubKnown === false ? { known: false, why: 'no hub source' } : {
    known: true,
    ips: indexHubIps((spec.ips ?? hubIps).flatMap((object) => decodeHubIp(object) ?? [])),
    configurations: (spec.hubConfigurations ?? [hubToCluster2, hubToCluster3, hubToCluster4]).map((c) => decodeConfiguration(c)),
  };
  const tunnels = spec.tunnels ?? { cluster3: ['Connected'], cluster4: ['Connected'] };
  return {
    fccs: [],
    tunnels: tunnelStates(Object.entries(tunnels).flatMap(([peer, values]) => values.map((value, i) => connectionObject(peer, value, `gw-${peer}-${i}`)))),
    configurations: (spec.leaf ?? [leafToHub, leafToCluster3, leafToCluster4]).map((c) => decodeConfiguration(c)),
    hubs: [{ id: undefined, ipam: hub, fccs: [] }],
  };
}

export function directWorld(spec: DirectWorld = {}): Snapshot {
  return buildSnapshot({ version: ++version, ...directWorldParts(spec) });
}

/** The empty view: nothing known, no Configurations, no Connections. */
export function emptyWorld(): Snapshot {
  return buildSnapshot({ version: ++version, fccs: [] });
}
