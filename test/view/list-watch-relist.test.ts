// ListWatch.relist (the view after a pause of the process): a list now, whatever the watch is doing, and the promise
// settles only with a list sent after it was asked for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/log.ts';
import { ListWatch } from '../../src/view/list-watch.ts';
import { readListPage } from '../../src/kube/client.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { waitFor } from '../support/wait-for.ts';

test('relist lists again at once while the watch stays open, and settles with that list', async () => {
  const server = await startKubeApiServer();
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  let lists = 0;
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
  });
  try {
    watch.start();
    await watch.settled();
    await waitFor(() => server.openWatches() === 1, { description: 'the watch is open' });
    const before = lists;
    await watch.relist();
    assert.equal(lists, before + 1, 'one list for the relist');
    assert.equal(seen.size, 0);
    await waitFor(() => server.openWatches() === 1, { description: 'watching again after the list' });
  } finally {
    await watch.stop();
    await server.close();
  }
});
