// What view_watch_restarts_total counts: a watch opened again because the server broke or ended the last one early,
// each with its reason in the log. A watch that reached the timeout it asked for is reopened as routine, and a relist
// asked while a watch request is on its way leaves one watch open, not two.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { ListWatch, type WatchRestart } from '../../src/view/list-watch.ts';
import { readListPage } from '../../src/kube/client.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { waitFor } from '../support/wait-for.ts';

const PATH = '/apis/networking.liqo.io/v1beta1/connections';

async function withWatch(run: (context: { server: KubeApiServer; watch: ListWatch<unknown>; restarts: WatchRestart[]; watchRequests: () => number }) => Promise<void>,
  options: { readonly watchTimeoutSeconds?: number } = {}): Promise<void> {
  const server = await startKubeApiServer();
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const restarts: WatchRestart[] = [];
  const watch = new ListWatch<unknown>({
    name: 'connections', config, logger: createLogger('silent'), watchPath: PATH,
    list: async () => readListPage(await (await fetch(`${server.url}${PATH}`)).json()),
    keep: (object) => object,
    onChange: () => {},
    onRestart: (restart) => restarts.push(restart),
    ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
  });
  try {
    watch.start();
    await watch.settled();
    await run({ server, watch, restarts, watchRequests: () => server.requests.filter((request) => request.watch).length });
  } finally {
    await watch.stop();
    await server.close();
  }
}

test('a watch that reached its own timeout is opened again and is no restart', async () => {
  await withWatch(async ({ restarts, watchRequests }) => {
    // The test server ends each watch after the timeoutSeconds asked, as kube-apiserver does.
    await waitFor(() => watchRequests() >= 3, { timeoutMs: 15_000, description: 'two watches ended on their timeout and were opened again' });
    assert.deepEqual(restarts, [], 'a watch reaching the timeout it asked for is routine, not a restart');
  }, { watchTimeoutSeconds: 1 });
});

test('a watch the server ends early, or drops, is one restart each, and says which', async () => {
  await withWatch(async ({ server, restarts, watchRequests }) => {
    await waitFor(() => server.openWatches() === 1, { description: 'the watch is open' });
    server.endWatches();
    await waitFor(() => watchRequests() === 2 && server.openWatches() === 1, { timeoutMs: 15_000, description: 'the watch ended early is open again' });
    server.dropWatches();
    await waitFor(() => watchRequests() === 3, { timeoutMs: 15_000, description: 'the dropped watch is opened again' });
    assert.deepEqual(restarts.map((restart) => restart.resource), ['connections', 'connections']);
    assert.match(restarts[0]?.why ?? '', /^ended by the server after \d+\.\d s$/);
    assert.match(restarts[1]?.why ?? '', /^dropped \(/);
  });
});

test('a relist asked while the watch request is on its way leaves one watch open, not that one beside the next', async () => {
  await withWatch(async ({ server, watch, restarts, watchRequests }) => {
    await waitFor(() => server.openWatches() === 1, { description: 'the watch is open' });
    const held = server.holdNext({ watch: true, pathIncludes: '/connections' });
    const before = watchRequests();
    server.endWatches();
    await held.arrived;
    await watch.relist();
    await waitFor(() => watchRequests() === before + 2, { description: 'the watch after the relist is sent' });
    const heldRequest = server.requests.filter((request) => request.watch)[before];
    held.release();
    await waitFor(() => server.requests.filter((request) => request.watch)[before]?.status !== undefined, { description: 'the held watch answered' });
    assert.equal(heldRequest?.status, undefined, 'the held watch request had no answer before its release');
    // The held watch is open on the server now; the loop has moved on, so it is closed rather than kept beside the next.
    await waitFor(() => server.openWatches() === 1, { timeoutMs: 15_000, description: 'one watch of the resource open' });
    assert.equal(restarts.length, 1, 'the watch ended early is a restart; the relist\'s is not');
  });
});
