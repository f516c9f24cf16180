// Every view source counts for readiness, not only the FCCs: a leaf whose Liqo objects can no longer be read makes the
// replica's tunnel and overlap decisions stale, so past --stale-view-after it stops taking reviews, and says which.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fccObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import { killServer, opsGet, usablePairs } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();

test('a leaf whose Configurations keep failing (500) past --stale-view-after is not ready and names them; ready again once they answer', async () => {
  const hub = await startKubeApiServer();
  const leaf = await startKubeApiServer();
  let server: RunningServer | undefined;
  try {
    await hub.create(fccObject());
    server = await startServer(['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--no-controller', '--cluster-id', 'cluster2',
      '--kubeconfig', await leaf.kubeconfig(), '--shortcuts-kubeconfig', await hub.kubeconfig(), '--stale-view-after', '1s']);
    const running = server;
    await waitFor(async () => (await usablePairs(running)).length === 1 && (await opsGet(running, '/readyz')).status === 200,
      { timeoutMs: 15_000, description: 'ready' });

    const broken = Date.now();
    // Two refusals in a row: each attempt waits the optional resources' backoff (2.5 s or more), far past the bound.
    leaf.failNext({ method: 'GET', pathIncludes: '/configurations', count: 2 }, 500);
    leaf.dropWatches();
    const stale = await waitFor(async () => {
      const answer = await opsGet(running, '/readyz');
      return answer.status === 503 ? answer.text : undefined;
    }, { timeoutMs: 30_000, intervalMs: 50, description: 'not ready once the leaf source is stale' });
    assert.ok(Date.now() - broken >= 1000, 'not before the bound');
    // The dropped watches end both leaf resources' streams; the Configurations then keep failing.
    assert.match(stale, /shortcut view stale: every read of the leaf's (configurations|connections) has failed for \d+ s/);
    const local = (JSON.parse((await opsGet(running, '/debug/pairs')).text) as { sources: { cluster: string; failing: { problem: string } | null }[] })
      .sources.find((s) => s.cluster === 'local');
    assert.notEqual(local?.failing ?? null, null, '/debug/pairs names the failing cluster');
    assert.equal((await usablePairs(running)).length, 1, 'the view itself is kept');

    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { timeoutMs: 45_000, description: 'ready again' });
  } finally {
    await killServer(server);
    await hub.close();
    await leaf.close();
  }
});
