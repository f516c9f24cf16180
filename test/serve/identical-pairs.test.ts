// Identical pairs from two FCCs count once, as an operator reads them from a running replica: /debug/pairs lists the
// pair once and no FCC as unusable, and the pairs gauge counts both FCC sides usable. (The rewrite itself:
// test/fixtures/identical-pairs-from-two-fccs-count-once.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeCerts } from '../support/certs.ts';
import { startServer } from '../support/process.ts';
import { debugPairs, killServer, metricValue } from '../support/serve-cluster.ts';

const certs = makeCerts();
const shortcuts = new URL('../fixtures/identical-pairs-from-two-fccs-count-once/shortcuts.yaml', import.meta.url).pathname;

test('serve: two FCCs with the same pair show one usable pair in /debug/pairs and two usable sides in the gauge', async () => {
  const server = await startServer(['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--shortcuts', shortcuts, '--cluster-id', 'cluster2']);
  try {
    const body = await debugPairs(server);
    assert.equal(body.synced, true);
    assert.equal(body.fccs, 2);
    assert.deepEqual(body.clusters.map((c) => ({ cluster: c.clusterId, pairs: c.pairs.map((p) => `${p.hubPrefix}->${p.shortcutPrefix}`), unusable: c.unusable })),
      [{ cluster: 'cluster2', pairs: ['10.63.0.0/16->10.61.0.0/16'], unusable: [] }]);
    assert.equal(await metricValue(server, 'shortcut_webhook_pairs{state="usable"}'), 2);
    assert.equal(await metricValue(server, 'shortcut_webhook_pairs{state="conflict"}'), 0);
  } finally {
    server.child.kill('SIGTERM');
    await killServer(server);
  }
});
