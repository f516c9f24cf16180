// The smallest stock-Liqo world on two test API servers: the leaf's Configurations for the hub (external 10.70/16 seen
// at 10.71/16) and for cluster3 (pods 10.60/16 seen at 10.61/16) with a Connected tunnel to cluster3; on the hub, where
// it sees cluster3's pods (10.63/16) and the IP it allocated to pod demo/web-0 (10.70.0.12). So the leaf's 10.71.0.12
// resolves to 10.61.0.151.
import { configurationObject, connectionObject, hubIpObject } from './builders.ts';
import type { KubeApiServer } from './kube-api-server.ts';

type Creates = Pick<KubeApiServer, 'create'>;

export async function createStockWorld(leaf: Creates, hub: Creates): Promise<void> {
  await leaf.create(configurationObject({ peer: 'cluster1' }));
  await leaf.create(configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' }));
  await leaf.create(connectionObject('cluster3', 'Connected'));
  await hub.create(configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16' }));
  await hub.create(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' }));
}
