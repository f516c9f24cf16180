// The controller's writes name their field manager: in a slice's managedFields (next to Liqo's
// `shadow-endpointslice-controller`) an operator sees `shortcut-webhook`, not the HTTP client's user agent.
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

test('the controller patches slices as field manager shortcut-webhook', async () => {
  const store = new SnapshotStore();
  const server = await startKubeApiServer({ mutate: webhookHook(store) });
  await server.create(sliceObject({ name: 'web', addresses: [['10.63.0.7']] }));
  store.publishFccs([fcc()]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, passes } = recordingLogger();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0, settleMs: 5 });
  try {
    reconciler.start();
    await waitFor(() => passes().length >= 1);
    const patches = server.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/endpointslices/web'));
    assert.equal(patches.length, 1);
    assert.equal(patches[0]?.query.fieldManager, 'shortcut-webhook');
  } finally {
    await reconciler.stop();
    await server.close();
  }
});
