// The hub's IPAM objects from its API: paged, kept compact, and said once when they cannot be read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { HubIpamSource } from '../../src/view/hub-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { configurationObject, hubIpObject } from '../support/builders.ts';
import { LIQO_IPS, startKubeApiServer } from '../support/kube-api-server.ts';
import { waitFor } from '../support/wait-for.ts';

test('a hub of 1,200 pod IPs is listed in pages of 500 and every IP is indexed; other IPs of the hub are not asked for', async () => {
  const hub = await startKubeApiServer();
  hub.registerResource(LIQO_IPS);
  const store = new SnapshotStore();
  let source: HubIpamSource | undefined;
  try {
    await hub.create(configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16' }));
    for (let i = 0; i < 1200; i++) {
      await hub.create(hubIpObject({ pod: `pod-${i}`, ip: `10.63.${i >> 8}.${i & 255}`, allocated: `10.70.${i >> 8}.${i & 255}` }));
    }
    // Liqo's own IPs (the API server proxy's) carry no pod labels: the label selector leaves them on the hub.
    const proxy = hubIpObject({ pod: 'api-server-proxy', ip: '10.96.0.10', allocated: '10.70.200.1' });
    (proxy.metadata as { labels: Record<string, string> }).labels = { 'ipam.liqo.io/ip-type': 'api-server-proxy' };
    await hub.create(proxy);
    const config = new KubeConfig();
    config.loadFromFile(await hub.kubeconfig());
    source = new HubIpamSource({ store, logger: createLogger('silent'), config });
    source.start();
    await source.attempted();
    await waitFor(() => { const h = store.current().hub; return h.known && h.ips.size === 1200; }, { description: 'every IP indexed' });
    const lists = hub.requests.filter((r) => r.path.startsWith('/apis/ipam.liqo.io/v1alpha1/ips') && !r.watch);
    const shown = JSON.stringify(lists.map((r) => r.query));
    assert.equal(lists.length, 3, shown);
    assert.ok(lists.every((r) => r.query['limit'] === '500' && r.query['labelSelector'] === 'offloading.liqo.io/pod-name'), shown);
    assert.deepEqual(lists.map((r) => r.query['continue'] !== undefined), [false, true, true], shown);
  } finally {
    await source?.stop();
    await hub.close();
  }
});
