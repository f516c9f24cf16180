// --max-concurrent-patches is a cap the API server sees: never one patch more in flight than it says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject } from '../support/builders.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

test('with a cap of 3, the API server never holds more than 3 of the controller\'s patches at once', async () => {
  const cap = 3;
  const store = new SnapshotStore();
  const review = webhookHook(store);
  let server: KubeApiServer | undefined;
  const open = () => (server?.requests ?? []).filter((r) => r.method === 'PATCH' && r.status === undefined).length;
  let most = 0;
  server = await startKubeApiServer({
    // Each patch is held (under the server's write lock, so the others queue in flight) until one more than the cap
    // is in flight or a few turns of the event loop have passed: a client over its cap is seen over it.
    mutate: async (object, context) => {
      for (let turn = 0; turn < 50 && open() <= cap; turn++) await new Promise((resolve) => setImmediate(resolve));
      most = Math.max(most, open());
      return review(object, context);
    },
  });
  for (let i = 0; i < 16; i++) await server.create(sliceObject({ name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`]] }));
  store.publishFccs([fcc({ connected: false })]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, passes } = recordingLogger();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0, settleMs: 5, maxConcurrentWrites: cap });
  try {
    reconciler.start();
    await waitFor(() => passes().length >= 1, { description: 'the first pass' });
    most = 0;
    store.publishFccs([fcc()]);
    await waitFor(() => passes().length >= 2, { description: 'the pass that patches the 16 slices' });
    assert.equal(passes()[1]?.patched, 16);
    assert.ok(most <= cap, `${most} patches in flight at once, over the cap of ${cap}`);
  } finally {
    await reconciler.stop();
    await server.close();
  }
});
