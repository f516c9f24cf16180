// shortcut_webhook_stored_objects{peer,path,resource} from the controller's pass (SPEC §10): each stored object counted
// once per peer and path its addresses take as the view leaves them, replaced after every complete pass.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject } from '../support/builders.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

function series(text: string): string[] {
  return text.split('\n').filter((line) => line.startsWith('shortcut_webhook_stored_objects{')).sort();
}

test('the stored objects per peer and path follow the passes, each object once however many of its addresses take that path: direct while the shortcut is usable, hub once it is not', async () => {
  const store = new SnapshotStore();
  const server = await startKubeApiServer({ mutate: webhookHook(store) });
  // Two slices with cluster3's pods, one with a hub pod's too, the other with two of cluster3's: an object counts once.
  await server.create(sliceObject({ name: 'web', addresses: [['10.63.0.7'], ['10.200.0.9']] }));
  await server.create(sliceObject({ name: 'api', addresses: [['10.63.0.8'], ['10.63.0.9']] }));
  store.publishFccs([fcc()]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const metrics = new Metrics();
  const { logger, passes } = recordingLogger();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics, resyncIntervalMs: 0, settleMs: 5, confirmAfterMs: 0, heal: false });
  try {
    reconciler.start();
    await waitFor(() => passes().length >= 1, { description: 'the first pass' });
    const direct = series(await metrics.registry.metrics());
    assert.ok(direct.includes('shortcut_webhook_stored_objects{peer="cluster3",path="direct",resource="endpointslices"} 2'), direct.join('\n'));
    assert.ok(!direct.some((line) => line.includes('peer="cluster3",path="hub"')), 'no cluster3 object on the hub path');
    store.publishFccs([fcc({ connected: false })]);
    await waitFor(() => passes().length >= 2, { description: 'the pass after the shortcut went' });
    const hub = series(await metrics.registry.metrics());
    assert.ok(!hub.some((line) => line.includes('path="direct"')), `nothing direct any more: ${hub.join('\n')}`);
    assert.ok(hub.some((line) => line.endsWith(' 2') && line.includes('path="hub"') && line.includes('resource="endpointslices"')), hub.join('\n'));
  } finally {
    await reconciler.stop();
    await server.close();
  }
});
