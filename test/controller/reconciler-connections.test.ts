// The controller's requests share kept-alive connections: a pass that writes many slices opens about as many
// connections as it has writes in flight, not one per request (client-node gives each request an agent of its own,
// which made every write a new TLS handshake: most of the controller's CPU at 20,000 slices).
import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject } from '../support/builders.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const SLICES = 60;

test('a pass writing 60 slices, 8 at a time, opens no more connections than it has requests in flight', async () => {
  const store = new SnapshotStore();
  const api = await startKubeApiServer({ mutate: webhookHook(store) });
  for (let i = 0; i < SLICES; i++) await api.create(sliceObject({ name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`]] }));
  store.publishFccs([fcc()]);
  // A TCP relay in front of the API server counts the connections the controller opens.
  const target = new URL(api.url);
  let connections = 0;
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    connections++;
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const loaded = new KubeConfig();
  loaded.loadFromFile(await api.kubeconfig());
  const cluster = loaded.getCurrentCluster();
  assert.ok(cluster);
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ ...cluster, server: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` }],
    users: loaded.users, contexts: loaded.contexts, currentContext: loaded.currentContext,
  });
  const { logger, passes } = recordingLogger();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0,
    settleMs: 0, maxConcurrentWrites: 8 });
  try {
    reconciler.start();
    const [pass] = await waitFor(() => (passes().length > 0 ? passes() : undefined), { description: 'the first pass' });
    assert.equal(pass?.patched, SLICES);
    assert.ok(connections <= 9, `${connections} connections for ${SLICES + 1} requests`);
  } finally {
    await reconciler.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
    await api.close();
  }
});
