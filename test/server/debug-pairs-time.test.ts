// /debug/pairs' lastSync: the store's last sync as an ISO 8601 instant, null before the first; read at each request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { debugPairs } from '../../src/server/debug-pairs.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc } from '../support/builders.ts';

test('lastSync is the instant of the last sync, to the millisecond, and null before the first', () => {
  let now = 1_700_000_123_456;
  const store = new SnapshotStore(() => now);
  const body = () => debugPairs({ snapshot: store.current(), clusterId: 'cluster2', synced: store.isSynced(), lastSync: store.lastSync() });
  assert.equal(body().lastSync, null);
  assert.equal(body().synced, false);
  store.publishFccs([fcc()]);
  assert.equal(body().lastSync, '2023-11-14T22:15:23.456Z');
  now += 90_000;
  store.confirm();
  assert.equal(body().lastSync, '2023-11-14T22:16:53.456Z');
  assert.equal(body().synced, true);
});
