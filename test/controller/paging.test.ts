// A controller pass pages through the stored objects by continue token; an API server that gives a token it already
// gave in that list fails the pass (said, retried after the backoff) instead of a pass that never ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { ListPage } from '../../src/kube/client.ts';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc } from '../support/builders.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

test('a pass whose list gives the same continue token again fails, saying so, instead of listing for ever', async () => {
  let lists = 0;
  const { logger, records } = recordingLogger();
  const store = new SnapshotStore();
  store.publishFccs([fcc()]);
  const reconciler = new SliceReconciler({
    config: new KubeConfig(), view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0, settleMs: 0,
    storedObjects: {
      listPage: async (): Promise<ListPage> => {
        lists++;
        // A page as from the network, after a turn of the event loop.
        await new Promise((resolve) => setImmediate(resolve));
        return { items: [], resourceVersion: '1', continueToken: 'page-2' };
      },
      get: async () => undefined,
      patch: async () => {},
      watch: async () => new AbortController(),
      close: () => {},
    },
  });
  reconciler.start();
  try {
    const failed = await waitFor(() => records.find((record) => record['msg'] === 'reconcile pass failed, retrying'), { description: 'the pass failed' });
    assert.match(String(failed['err']), /same continue token twice in one list \(page-2\)/);
    assert.ok(lists <= 4, `each resource's first page and its one token at most, not ${lists} lists`);
  } finally {
    await reconciler.stop();
  }
});
