// status on a leaf with several hubs: per peer and per Service, which hubs reflected it; a hub no reader stands for
// is counted through that hub with reason hub-not-read, never decided with another hub's view.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { peerLines, serviceLines } from '../../src/commands/status.ts';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { StatusFold } from '../../src/offline/status.ts';
import { loadShortcutFiles } from '../../src/view/shortcut-files.ts';

const CASE = new URL('../fixtures/two-hubs-each-slice-through-its-own-hubs-ipam/', import.meta.url).pathname;

test('status names the hubs of each peer and Service, and counts a hub no reader stands for as hub-not-read', async () => {
  const loaded = await loadShortcutFiles({ shortcuts: [`${CASE}shortcuts.yaml`], hub: [`cluster1=${CASE}hubs/cluster1.yaml`, `cluster9=${CASE}hubs/cluster9.yaml`] });
  assert.ok(loaded.ok);
  const fold = new StatusFold(buildSnapshot({ version: 1, ...loaded.value }), { clusterId: 'cluster2' });
  for (const document of parseAllDocuments(readFileSync(`${CASE}input.yaml`, 'utf8'))) fold.add('EndpointSlice', document.toJS());
  const [web] = fold.serviceStatuses();
  assert.deepEqual(web?.hubs, ['cluster1', 'cluster7', 'cluster9']);
  const peers = fold.peerStatuses([]);
  const cluster3 = peers.find((peer) => peer.peer === 'cluster3');
  assert.deepEqual([cluster3?.hubs, cluster3?.path, cluster3?.counts.addresses.direct], [['cluster1', 'cluster9'], 'direct', 3]);
  const cluster7 = peers.find((peer) => peer.peer === 'cluster7');
  assert.deepEqual([cluster7?.path, cluster7?.why], ['hub', [{ reason: 'hub-not-read', addresses: 1 }]]);
  assert.match(serviceLines(fold.serviceStatuses())[0] ?? '', /^SERVICE +HUBS +PATH/);
  assert.match(peerLines(peers).find((line) => line.startsWith('cluster3')) ?? '', /^cluster3 +cluster1,cluster9 +direct/);
});
