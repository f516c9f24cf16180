// The pass behind the fence (SPEC §5): leadership is asked before every write, so a pass stops the moment it is
// lost; and a view lapsed by a pause of the process plans nothing until its sources have listed again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject, type SliceSpec } from '../support/builders.ts';
import { startKubeApiServer, type MutateHook } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const slices: SliceSpec[] = Array.from({ length: 6 }, (_, i) => ({ name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`]] }));

test('a pass stops the moment leadership is lost: the writes not yet sent are never sent', async () => {
  const store = new SnapshotStore();
  let leader = true;
  const hook = webhookHook(store);
  // The first write the API server stores ends the term, as a renewal past its deadline would.
  const mutate: MutateHook = (object, context) => {
    if (context.operation === 'UPDATE') leader = false;
    return hook(object, context);
  };
  const server = await startKubeApiServer({ mutate });
  for (const spec of slices) await server.create(sliceObject(spec));
  store.publishFccs([fcc({ connected: false })]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, records } = recordingLogger();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0,
    settleMs: 5, confirmAfterMs: 0, maxConcurrentWrites: 1, heal: false, isLeader: () => leader });
  try {
    reconciler.start();
    await waitFor(() => records.some((r) => r.msg === 'reconcile pass done'), { description: 'the first pass (nothing to write)' });
    store.publishFccs([fcc()]);
    await waitFor(() => records.some((r) => String(r.msg).startsWith('pass stopped: not the leader')), { description: 'the pass stopped' });
    const patches = server.requests.filter((r) => r.method === 'PATCH');
    assert.equal(patches.length, 1, 'the one write sent before the term ended, no other');
  } finally {
    await reconciler.stop();
    await server.close();
  }
});

test('a lapsed view plans no write until its sources have listed again, then a pass runs', async () => {
  const store = new SnapshotStore();
  const server = await startKubeApiServer({ mutate: webhookHook(store) });
  for (const spec of slices) await server.create(sliceObject(spec));
  store.publishFccs([fcc({ connected: false })]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, records, passes } = recordingLogger();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0,
    settleMs: 5, confirmAfterMs: 0 });
  let relisted: () => void = () => {};
  try {
    reconciler.start();
    await waitFor(() => passes().length >= 1);
    store.lapse(() => new Promise((resolve) => { relisted = resolve; }));
    // The view moves while lapsed (a stale watch's replay): nothing may be planned on it yet.
    store.publishFccs([fcc()]);
    await waitFor(() => records.some((r) => String(r.msg).startsWith('no pass: the view lapsed')), { description: 'the pass was held' });
    assert.equal(server.requests.filter((r) => r.method === 'PATCH').length, 0);
    relisted();
    await waitFor(() => passes().length >= 2, { description: 'a pass once fresh' });
    assert.equal(passes().at(-1)?.patched, slices.length);
  } finally {
    await reconciler.stop();
    await server.close();
  }
});

test('a controller stopped while a write is answered 409 stops its pass: the conflict is not read again, nor counted or said as an error', async () => {
  const store = new SnapshotStore();
  const server = await startKubeApiServer({ mutate: webhookHook(store) });
  const [web] = slices;
  if (web !== undefined) await server.create(sliceObject(web));
  store.publishFccs([fcc()]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, records } = recordingLogger();
  const metrics = new Metrics();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics, resyncIntervalMs: 0,
    settleMs: 5, confirmAfterMs: 0, heal: false });
  try {
    // The pass's one write, answered 409 (another writer got there first) once the controller has begun to stop: the
    // read that would follow meets the fence, and a shutdown is no failure of the pass.
    const held = server.holdNext({ method: 'PATCH' });
    server.failNext({ method: 'PATCH' }, 409);
    reconciler.start();
    await held.arrived;
    const stopped = reconciler.stop();
    held.release();
    await stopped;
    assert.equal(server.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/${web?.name ?? ''}`)).length, 0, 'not read again');
    const errors = (await metrics.registry.metrics()).split('\n').find((line) => line.startsWith('shortcut_webhook_slices_reconciled_total{result="error"}'));
    assert.equal(errors, 'shortcut_webhook_slices_reconciled_total{result="error"} 0');
    assert.deepEqual(records.filter((r) => r.level === 'warn' || r.msg === 'reconcile pass done').map((r) => r.msg), []);
  } finally {
    await reconciler.stop();
    await server.close();
  }
});
