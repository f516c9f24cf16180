// When the cluster source last matched the API: a quiet, healthy watch keeps the view fresh through its bookmarks
// (no FCC changes for hours is normal; the stale-view alert on view_last_sync_timestamp_seconds must not fire), and
// an outage does not. The store's clock is the test's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { ClusterShortcutSource } from '../../src/view/cluster-source.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fccObject } from '../support/builders.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { waitFor } from '../support/wait-for.ts';

test('a bookmark on the FCC watch refreshes the last sync without a new snapshot; nothing does while the API is away', async () => {
  const server = await startKubeApiServer();
  await server.create(fccObject());
  let now = 1_700_000_000_000;
  const store = new SnapshotStore(() => now);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const source = new ClusterShortcutSource({ store, logger: createLogger('silent'), shortcutsConfig: config, namespace: undefined,
    localConfig: undefined, backoff: { initialMs: 10, maxMs: 50 } });
  try {
    await source.start();
    await waitFor(() => store.isSynced() && server.openWatches() === 1, { description: 'listed and watching' });
    assert.equal(store.lastSync(), 1_700_000_000_000);
    const version = store.current().version;

    now += 60_000;
    server.bookmark();
    await waitFor(() => store.lastSync() === 1_700_000_060_000, { description: 'the bookmark refreshes the last sync' });
    assert.equal(store.current().version, version, 'a bookmark is no change');

    now += 60_000;
    server.setAvailable(false);
    await waitFor(() => server.requests.filter((r) => r.status === 503).length >= 2, { description: 'retries while down' });
    assert.equal(store.lastSync(), 1_700_000_060_000, 'a failing API is no sync');
  } finally {
    await source.stop();
    await server.close();
  }
});
