// The hub keeps a Configuration for each of its leaves, this one included: with --cluster-id the leaf knows which is
// itself, and no page or line treats it as a peer it lacks a direct network to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { logViewChanges } from '../../src/view/view-log.ts';
import { directWorldParts } from '../support/direct-world.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { startHarness } from '../support/webhook-harness.ts';

test('with --cluster-id, /debug/pairs and the log name the hub\'s other peers, never the leaf itself', async () => {
  const harness = await startHarness({ clusterId: 'cluster2' });
  try {
    harness.store.publish(directWorldParts());
    const page = await (await fetch(`${harness.opsUrl}/debug/pairs`)).json() as
      { hub: { directNetworks: { peer: string }[]; directConnections: { peer: string }[] } };
    assert.deepEqual(page.hub.directNetworks.map((network) => network.peer), ['cluster3', 'cluster4']);
    assert.deepEqual(page.hub.directConnections.map((peer) => peer.peer), ['cluster3', 'cluster4']);
  } finally {
    await harness.close();
  }
  const { logger, records } = recordingLogger();
  const store = new SnapshotStore();
  logViewChanges(store, logger, 'cluster2');
  store.publish(directWorldParts());
  assert.deepEqual(records.filter((record) => 'peer' in record).map((record) => [record['peer'], record['msg']]), [
    ['cluster3', 'direct network usable: hub addresses of its pods are resolved'],
    ['cluster4', 'direct network usable: hub addresses of its pods are resolved'],
  ]);
});
