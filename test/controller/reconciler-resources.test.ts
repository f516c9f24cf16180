// The controller's pass is generic over a resource descriptor: a second kind of stored object is one more descriptor
// (its group, version, plural, label selector and pure plan), listed, written, counted and retried by the same pass.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ENDPOINT_SLICES } from '../../src/controller/endpoint-slices.ts';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { defineResource, type StoredWrite } from '../../src/controller/resource.ts';
import type { Snapshot } from '../../src/core/snapshot.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject } from '../support/builders.ts';
import { startKubeApiServer, type KubeApiServer, type KubeObject } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

const MARKS = { group: 'example.liqo.io', version: 'v1', plural: 'marks', kind: 'Mark', namespaced: true } as const;
const MARK = { apiVersion: 'example.liqo.io/v1', kind: 'Mark' } as const;

/** What a stored Mark should say under the view: how many shortcuts are known. */
const expected = (snapshot: Snapshot) => String(snapshot.fccs.length);

interface MarkWrite extends StoredWrite { readonly value: string }

/** A second kind: Marks labelled `example.liqo.io/kept=true`, whose spec.value follows the view. */
function marks(patchedValues: string[]) {
  return defineResource<MarkWrite>({
    ...MARKS,
    labelSelector: 'example.liqo.io/kept=true',
    optional: true,
    plan: (item, { snapshot }) => {
      const object = item as KubeObject;
      const { namespace, name, resourceVersion } = object.metadata ?? {};
      if (namespace === undefined || name === undefined || resourceVersion === undefined) return { kind: 'not-ours' };
      const value = expected(snapshot);
      if ((object['spec'] as { value?: string } | undefined)?.value === value) return { kind: 'in-step' };
      return { kind: 'write', write: { namespace, name, resourceVersion, value, patch: [
        { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, { op: 'replace', path: '/spec/value', value },
      ] } };
    },
    patched: (write) => { patchedValues.push(`${write.name}=${write.value}`); },
    counted: () => {},
  });
}

async function withTwoKinds(run: (context: {
  server: KubeApiServer; store: SnapshotStore; reconciler: SliceReconciler; patched: string[];
  passes: () => readonly Record<string, unknown>[]; said: (msg: string) => number;
}) => Promise<void>, options: { served: boolean }): Promise<void> {
  const store = new SnapshotStore();
  const server = await startKubeApiServer({ mutate: webhookHook(store) });
  if (options.served) server.registerResource(MARKS);
  await server.create(sliceObject({ name: 'web', addresses: [['10.63.0.1']] }));
  if (options.served) {
    for (const [name, kept] of [['a', 'true'], ['b', 'true'], ['other', 'false']] as const) {
      await server.create({ ...MARK, metadata: { namespace: 'demo', name, labels: { 'example.liqo.io/kept': kept } }, spec: { value: '0' } });
    }
  }
  store.publishFccs([fcc()]);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, records, passes } = recordingLogger();
  const patched: string[] = [];
  const reconciler = new SliceReconciler({
    config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0, settleMs: 5,
    backoff: { initialMs: 20, maxMs: 100 }, resources: [ENDPOINT_SLICES, marks(patched)],
  });
  try {
    reconciler.start();
    await run({
      server, store, reconciler, patched, passes: () => passes() as unknown as Record<string, unknown>[],
      said: (msg) => records.filter((r) => r.msg === msg).length,
    });
  } finally {
    await reconciler.stop();
    await server.close();
  }
}

const value = (server: KubeApiServer, name: string) => (server.get({ ...MARK, namespace: 'demo', name })?.['spec'] as { value: string }).value;

test('one pass keeps both kinds in step: each listed by its own selector, planned by its own plan, reported once', async () => {
  await withTwoKinds(async ({ server, patched, passes }) => {
    await waitFor(() => passes().length >= 1, { description: 'the first pass' });
    assert.deepEqual(passes()[0], { ...passes()[0], listed: 3, patched: 3, unchanged: 0, conflict: 0, error: 0, gone: 0 },
      'the slice and the two kept Marks, in one pass');
    assert.deepEqual([value(server, 'a'), value(server, 'b'), value(server, 'other')], ['1', '1', '0'], 'the unselected Mark is not touched');
    assert.deepEqual(patched.sort(), ['a=1', 'b=1']);
    const slice = server.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name: 'web' });
    assert.deepEqual((slice?.['endpoints'] as { addresses: string[] }[])[0]?.addresses, ['10.61.0.1'], 'the slice is rewritten as before');
  }, { served: true });
});

test('a conflict on the second kind is read again and planned with that kind\'s plan', async () => {
  await withTwoKinds(async ({ server, store, passes }) => {
    await waitFor(() => passes().length >= 1, { description: 'the first pass' });
    const before = server.requests.length;
    server.failNext({ method: 'PATCH', pathIncludes: '/marks/a' }, 409);
    store.publishFccs([fcc(), fcc({ name: 'second', b: 'cluster4' })]);
    await waitFor(() => passes().length >= 2, { description: 'the pass after the change' });
    const calls = server.requests.slice(before).filter((r) => r.path.includes('/marks/a')).map((r) => `${r.method} ${r.status}`);
    assert.deepEqual(calls, ['PATCH 409', 'GET 200', 'PATCH 200']);
    assert.equal(value(server, 'a'), '2');
    assert.equal(passes()[1]?.['conflict'], 0);
  }, { served: true });
});

test('an optional kind that is not served is said once and left idle; the pass stays clean and the other kind is written', async () => {
  await withTwoKinds(async ({ server, store, reconciler, passes, said }) => {
    await waitFor(() => passes().length >= 1, { description: 'the first pass' });
    assert.equal(passes()[0]?.['patched'], 1, 'the slice is written');
    assert.equal(passes()[0]?.['error'], 0, 'a kind not served is no error: no retry, no backoff');
    reconciler.trigger('test', 0);
    await waitFor(() => passes().length >= 2, { description: 'a second pass' });
    assert.equal(said('resource not served: nothing of it to reconcile'), 1, 'said once, not on every pass');
    // Served now (the CRD installed): its objects are kept in step from the next pass on.
    server.registerResource(MARKS);
    await server.create({ ...MARK, metadata: { namespace: 'demo', name: 'a', labels: { 'example.liqo.io/kept': 'true' } }, spec: { value: '0' } });
    store.publishFccs([fcc(), fcc({ name: 'second', b: 'cluster4' })]);
    await waitFor(() => value(server, 'a') === '2', { description: 'the Mark written once served' });
  }, { served: false });
});
