// ListWatch.relist (the view after a pause of the process): a list now, whatever the watch is doing, and the promise
// settles only with a list sent after it was asked for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { ListWatch } from '../../src/view/list-watch.ts';
import { readListPage } from '../../src/kube/client.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { waitFor, within } from '../support/wait-for.ts';

test('relist lists again at once while the watch stays open, and settles with that list; the watch opened after it is no restart', async () => {
  const server = await startKubeApiServer();
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  let lists = 0;
  let restarts = 0;
  let seen: ReadonlyMap<string, unknown> = new Map();
  const watch = new ListWatch<unknown>({
    name: 'connections', config, logger: createLogger('silent'),
    watchPath: '/apis/networking.liqo.io/v1beta1/connections',
    list: async () => {
      lists++;
      const response = await fetch(`${server.url}/apis/networking.liqo.io/v1beta1/connections`);
      return readListPage(await response.json());
    },
    keep: (object) => object,
    onChange: (objects) => { seen = objects; },
    onRestart: () => restarts++,
  });
  const watchRequests = () => server.requests.filter((request) => request.watch).length;
  try {
    watch.start();
    await within(watch.settled(), { description: 'the first list' });
    await waitFor(() => server.openWatches() === 1, { description: 'the watch is open' });
    const before = lists;
    const watchesBefore = watchRequests();
    const restartsBefore = restarts;
    await within(watch.relist(), { description: 'the relist' });
    assert.equal(lists, before + 1, 'one list for the relist');
    assert.equal(seen.size, 0);
    // The restart is counted (or not) before the new watch is sent: once the server has the request, the count is final.
    // (The aborted watch may stay open on the server a while: how many are open says nothing here.)
    await waitFor(() => watchRequests() > watchesBefore, { description: 'watching again after the list' });
    // view_watch_restarts counts watches the server dropped or ended; a relist the process asked for after a pause is
    // not one (under load a pause of the test's replica made serve's exact count of two restarts three).
    assert.equal(restarts, restartsBefore);
  } finally {
    await watch.stop();
    await server.close();
  }
});

test('a relist whose list fails is not settled by it: it settles with the next list that succeeds', async () => {
  const server = await startKubeApiServer();
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  let lists = 0;
  let failing = 0;
  const watch = new ListWatch<unknown>({
    name: 'connections', config, logger: createLogger('silent'),
    watchPath: '/apis/networking.liqo.io/v1beta1/connections',
    list: async () => {
      lists++;
      if (failing > 0) {
        failing--;
        throw Object.assign(new Error('the API server is overloaded'), { statusCode: 500 });
      }
      const response = await fetch(`${server.url}/apis/networking.liqo.io/v1beta1/connections`);
      return readListPage(await response.json());
    },
    keep: (object) => object,
    onChange: () => {},
  });
  try {
    watch.start();
    await within(watch.settled(), { description: 'the first list' });
    await waitFor(() => server.openWatches() === 1, { description: 'the watch is open' });
    const before = lists;
    failing = 1;
    let settled = false;
    const relisted = watch.relist().then(() => { settled = true; });
    await waitFor(() => lists === before + 1, { description: 'the relist\'s list, refused' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'a failed list says nothing of what is there now');
    await within(relisted, { timeoutMs: 10_000, description: 'the relist, by the list after the refused one' });
    assert.equal(lists, before + 2, 'settled by the list after it');
  } finally {
    await watch.stop();
    await server.close();
  }
});
