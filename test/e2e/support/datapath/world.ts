// One world for the data-path test and demo: the Liqo objects of the hub cluster1 and the leaves cluster2 (the
// client's, where the product runs) and cluster3 (the server's), as JSON objects. The test writes the leaf's and the
// hub's into their API servers for the product, and topology.ts generates every cluster's tables and routes from
// the same objects. Every cluster declares the same pod CIDR (10.60.0.0/16 for the leaves, as Liqo's examples do),
// so each sees the others remapped:
//
//   cluster2 sees  cluster1's pods at 10.200/16 (unremapped), its external 10.70/16 at 10.71/16
//                  cluster3's pods at 10.61/16 (direct network), its external at 10.72/16
//   cluster1 sees  cluster2's pods at 10.62/16, cluster3's at 10.63/16 (the FCC's hub-view podCIDRs)
//   cluster3 sees  cluster1's external at 10.71/16, cluster2's pods at 10.61/16
//
// The server pod web-0 of cluster3 is 10.60.0.151: the hub sees it at 10.63.0.151 and allocated it 10.70.0.12 in its
// external CIDR (its IP), which cluster2 reaches at 10.71.0.12; cluster2 reaches it directly at 10.61.0.151.
import { configurationObject, fccObject, hubIpObject, type ConfigurationSpec } from '../../../support/builders.ts';
import type { ClusterSpec, DataPathSpec, LinkSpec } from './topology.ts';

export const HUB = 'cluster1';
export const CLIENT_LEAF = 'cluster2';
export const SERVER_LEAF = 'cluster3';
export const CLIENT_POD = { name: 'client', ip: '10.60.0.10' } as const;
export const SERVER_POD = { name: 'web-0', ip: '10.60.0.151' } as const;

/** The addresses of web-0 that cluster2 may be given. */
export const WEB = {
  /** What a hub reflecting hub-view addresses sends (the FCC path's input). */
  hubView: '10.63.0.151',
  /** What stock Liqo's hub sends: its IPAM allocation, as cluster2 sees it. */
  hubAllocated: '10.70.0.12',
  leafViewOfAllocated: '10.71.0.12',
  /** The shortcut: cluster2's view of cluster3's pods. */
  direct: '10.61.0.151',
} as const;

const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** cluster2's Configurations (liqo.ts createConfiguration writes them as Liqo does). */
export const leafConfigurationSpecs = (): ConfigurationSpec[] => [
  { peer: HUB },
  { peer: SERVER_LEAF, remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' },
];

export const hubConfigurationSpecs = (): ConfigurationSpec[] => [
  { peer: CLIENT_LEAF, localPod: '10.200.0.0/16', remotePod: '10.60.0.0/16', remotePodView: '10.62.0.0/16', remoteExternalView: '10.74.0.0/16' },
  { peer: SERVER_LEAF, localPod: '10.200.0.0/16', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16', remoteExternalView: '10.75.0.0/16' },
];

/** The IP the hub's IPAM allocated to web-0. */
export const hubIpSpecs = () => [{ pod: SERVER_POD.name, ip: WEB.hubView, allocated: WEB.hubAllocated }];

/** The shortcut as the FCC operator records it on the hub: each side's hub view and direct view of the other's pods. */
export const fcc = () => json(fccObject({ a: CLIENT_LEAF, b: SERVER_LEAF, aPod: '10.63.0.0/16', aRemapped: '10.61.0.0/16', bPod: '10.62.0.0/16', bRemapped: '10.61.0.0/16' }));

/** cluster3's own Configurations: the data path needs them; the product on cluster2 never reads them. */
export const serverLeafConfigurations = () => [
  configurationObject({ peer: HUB }),
  configurationObject({ peer: CLIENT_LEAF, remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' }),
].map(json);

/** The same objects as the builders make them, for a data path without API servers. */
export function worldObjects(): WorldObjects {
  return {
    leafConfigurations: leafConfigurationSpecs().map((spec) => json(configurationObject(spec))),
    hubConfigurations: hubConfigurationSpecs().map((spec) => json(configurationObject(spec))),
    hubIps: hubIpSpecs().map((spec) => json(hubIpObject(spec))),
    fcc: fcc(),
  };
}

/** The Liqo objects of the leaf and the hub, as stored (read back from their API servers) or as built. */
export interface WorldObjects {
  readonly leafConfigurations: readonly unknown[];
  readonly hubConfigurations: readonly unknown[];
  readonly hubIps: readonly unknown[];
  readonly fcc: unknown;
}

export const LINKS = {
  clientHub: 'cluster2-hub',
  hubServer: 'hub-cluster3',
  direct: 'cluster2-cluster3 (direct)',
} as const;

export function dataPathSpec(objects: WorldObjects = worldObjects()): DataPathSpec {
  const podCidr = (objects.fcc as { status?: { foreignClusterANetworking?: { podCIDR?: unknown } } }).status?.foreignClusterANetworking?.podCIDR;
  if (typeof podCidr !== 'string') throw new Error('the FCC has no A-side podCIDR');
  const clusters: ClusterSpec[] = [
    { id: HUB, short: 'c1', configurations: objects.hubConfigurations, ips: objects.hubIps, pods: [] },
    {
      id: CLIENT_LEAF, short: 'c2', configurations: objects.leafConfigurations, pods: [CLIENT_POD],
      // A hub that reflects hub-view addresses (the FCC path) is reached at them through the hub's gateway.
      throughPeer: [{ peer: HUB, cidr: podCidr }],
    },
    { id: SERVER_LEAF, short: 'c3', configurations: serverLeafConfigurations(), pods: [SERVER_POD] },
  ];
  const links: LinkSpec[] = [
    { name: LINKS.clientHub, server: HUB, client: CLIENT_LEAF },
    { name: LINKS.hubServer, server: HUB, client: SERVER_LEAF },
    { name: LINKS.direct, server: SERVER_LEAF, client: CLIENT_LEAF },
  ];
  return { clusters, links };
}
