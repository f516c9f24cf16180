// The controller keeps stored slices in step, against the test API server with the webhook in its write path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { planSlice } from '../../src/controller/plan.ts';
import { httpStatus } from '../../src/kube/client.ts';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import type { ForeignClusterConnection } from '../../src/core/fcc.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject, snapshotOf, type SliceSpec } from '../support/builders.ts';
import { startKubeApiServer, type KubeApiServer, type MutateHook } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger, type PassRecord } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

interface Context {
  readonly server: KubeApiServer;
  readonly store: SnapshotStore;
  readonly reconciler: SliceReconciler;
  readonly metrics: Metrics;
  /** The passes finished so far, as the controller logs them ('reconcile pass done'). */
  passes(): readonly PassRecord[];
  /** The delays the controller announced before retrying a pass that had errors. */
  retryDelays(): readonly number[];
  /** How many log records have this message. */
  said(msg: string): number;
  patches(name?: string): number;
  addresses(name: string): unknown;
  annotations(name: string): Record<string, string>;
}

const SLICE = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo' } as const;

async function withController(
  slices: readonly SliceSpec[], fccs: readonly ForeignClusterConnection[], run: (context: Context) => Promise<void>,
  options: { pageSize?: number; maxWritesPerSecond?: number; backoff?: { initialMs: number; maxMs: number }; resyncIntervalMs?: number; confirmAfterMs?: number; maxConcurrentWrites?: number;
    mutate?: (store: SnapshotStore) => MutateHook; unsynced?: boolean; heal?: boolean } = {},
): Promise<void> {
  const { mutate = webhookHook, unsynced = false, ...reconcilerOptions } = options;
  const store = new SnapshotStore();
  const server = await startKubeApiServer({ mutate: mutate(store) });
  for (const spec of slices) await server.create(sliceObject(spec));
  if (!unsynced) store.publishFccs(fccs);
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const metrics = new Metrics();
  const { logger, records, passes } = recordingLogger();
  const reconciler = new SliceReconciler({
    config, view: store, clusterId: undefined, logger, metrics, resyncIntervalMs: 0, settleMs: 5,
    backoff: { initialMs: 20, maxMs: 100 }, ...reconcilerOptions,
  });
  const get = (name: string) => server.get({ ...SLICE, name });
  const context: Context = {
    server, store, reconciler, metrics,
    passes,
    retryDelays: () => records.filter((r) => r.msg === 'reconcile pass had errors or conflicts, next pass after a delay').map((r) => Number(r.delayMs)),
    said: (msg) => records.filter((r) => r.msg === msg).length,
    patches: (name) => server.requests.filter((r) => r.method === 'PATCH' && (name === undefined || r.path.endsWith(`/${name}`))).length,
    addresses: (name) => (get(name)?.endpoints as { addresses: string[] }[]).map((e) => e.addresses),
    annotations: (name) => (get(name)?.metadata?.annotations ?? {}) as Record<string, string>,
  };
  try {
    reconciler.start();
    await run(context);
  } finally {
    await reconciler.stop();
    await server.close();
  }
}

/** A webhook that answers, then holds the first UPDATE inside the API server until released: a change lands mid-pass. */
function holdingFirstWrite(): { holdFirstWrite: (store: SnapshotStore) => MutateHook; reached: () => boolean; release: () => void } {
  let reached = false;
  let release = () => {};
  const released = new Promise<void>((resolve) => { release = resolve; });
  const holdFirstWrite = (store: SnapshotStore): MutateHook => {
    const webhook = webhookHook(store);
    return async (object, context) => {
      const answer = await webhook(object, context);
      if (context.operation === 'UPDATE' && !reached) {
        reached = true;
        await released;
      }
      return answer;
    };
  };
  return { holdFirstWrite, reached: () => reached, release: () => release() };
}

test('slices stored before start converge, and only the ones that differ are written', async () => {
  const slices: SliceSpec[] = [
    { name: 'to-shortcut', addresses: [['10.63.0.1'], ['10.200.0.1']] },
    { name: 'hub-only', addresses: [['10.200.0.2']] },
    { name: 'unmanaged', managedBy: 'endpointslice-controller.k8s.io', addresses: [['10.63.0.3']] },
    { name: 'fqdn', addressType: 'FQDN', addresses: [['web.example.com']] },
  ];
  await withController(slices, [fcc()], async ({ passes, patches, addresses, annotations }) => {
    await waitFor(() => passes().length >= 1);
    assert.deepEqual(addresses('to-shortcut'), [['10.61.0.1'], ['10.200.0.1']]);
    assert.equal(annotations('to-shortcut')['liqo.io/shortcut-addresses'], '10.61.0.1');
    assert.equal(patches('to-shortcut'), 1);
    assert.equal(patches(), 1, 'nothing else is written');
    assert.deepEqual(addresses('unmanaged'), [['10.63.0.3']]);
  });
});

test('connect, disconnect, CIDR change and delete each converge', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc({ connected: false })], async ({ passes, store, addresses, annotations }) => {
    await waitFor(() => passes().length >= 1);
    assert.deepEqual(addresses('web'), [['10.63.0.7']]);
    store.publishFccs([fcc()]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'connected' });
    store.publishFccs([fcc({ aRemapped: '10.71.0.0/16' })]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.71.0.7"]]', { description: 'CIDR changed' });
    store.publishFccs([fcc({ connected: false })]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.63.0.7"]]', { description: 'disconnected' });
    assert.deepEqual(annotations('web'), {});
    store.publishFccs([fcc()]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    store.publishFccs([]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.63.0.7"]]', { description: 'deleted' });
  });
});

test('after convergence a further pass writes nothing: no loop between controller and webhook', async () => {
  await withController([{ name: 'a', addresses: [['10.63.0.1']] }, { name: 'b', addresses: [['10.63.0.2']] }], [fcc()],
    async ({ passes, reconciler, patches }) => {
      await waitFor(() => passes().length >= 1);
      const written = patches();
      assert.equal(written, 2);
      reconciler.trigger('test', 0);
      await waitFor(() => passes().length >= 2);
      assert.equal(patches(), written);
      assert.equal(passes().at(-1)?.unchanged, 2);
    });
});

test('writes put back by another writer while the API server could not call the webhook are written again by a confirming pass, and said', async () => {
  // Liqo's writer puts a reflected slice back as the shadow says whenever something else changes it; on a fresh
  // install the API server cannot yet reach the webhook (failurePolicy Ignore), so that write is stored unrewritten.
  let reachable = false;
  const mutate = (store: SnapshotStore): MutateHook => {
    const hook = webhookHook(store);
    return (object, context) => (reachable ? hook(object, context) : object);
  };
  const web: SliceSpec = { name: 'web', addresses: [['10.63.0.7']] };
  await withController([web], [fcc()], async ({ passes, server, addresses, said }) => {
    await waitFor(() => passes().length >= 1);
    assert.deepEqual(addresses('web'), [['10.61.0.7']], 'the first pass wrote the shortcut');
    const original = sliceObject(web) as { metadata: Record<string, unknown> };
    const stored = server.get({ ...SLICE, name: 'web' });
    await server.update({ ...original, metadata: { ...original.metadata, resourceVersion: stored?.metadata?.resourceVersion } });
    assert.deepEqual(addresses('web'), [['10.63.0.7']], 'put back, unrewritten');
    reachable = true;
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'written again by the confirming pass' });
    // Said when that pass ends, which is after its write is stored.
    await waitFor(() => passes().length >= 2, { description: 'the confirming pass ended' });
    assert.equal(said('stored objects were out of step again after the last pass, with the same view: written since without the webhook\'s review (is the webhook reachable from the API server?)'), 1);
    // And confirmed once more: that pass finds everything in step, and the confirmations end there.
    await waitFor(() => passes().length >= 3);
    assert.deepEqual(passes().map((pass) => pass.patched), [1, 1, 0]);
  // The passes alone: the healing watch would heal the put-back write before any confirming pass (healer tests).
  }, { mutate, confirmAfterMs: 1000, heal: false });
});

test('a change that does not alter the usable pairs triggers no pass', async () => {
  await withController([{ name: 'a', addresses: [['10.63.0.1']] }], [fcc()], async ({ passes, store, reconciler }) => {
    await waitFor(() => passes().length >= 1);
    store.publishFccs([fcc(), fcc({ b: 'cluster9', connected: false })]);
    store.publishFccs([fcc()]);
    reconciler.trigger('probe', 0);
    await waitFor(() => passes().length >= 2);
    assert.equal(passes().length, 2);
  });
});

test('a conflict is retried with a fresh read', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc({ connected: false })], async ({ passes, server, store, addresses, metrics }) => {
    await waitFor(() => passes().length >= 1);
    server.failNext({ method: 'PATCH' }, 409);
    store.publishFccs([fcc()]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    assert.ok(server.requests.some((r) => r.method === 'GET' && r.path.endsWith('/endpointslices/web')), 'read again');
    // The write lands before the pass counts it: wait for the count rather than read it at once.
    await waitFor(async () => /slices_reconciled_total\{result="patched"\} 1/.test(await metrics.registry.metrics()));
  });
});

test('addresses the controller moves are counted as rewritten and restored, as the webhook counts its own', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7', '10.63.0.8']] }], [fcc({ connected: false })], async ({ passes, store, addresses, metrics }) => {
    await waitFor(() => passes().length >= 1);
    const counted = async (name: string) => Number(new RegExp(`^shortcut_webhook_${name} (\\d+)$`, 'm').exec(await metrics.registry.metrics())?.[1]);
    assert.equal(await counted('addresses_rewritten_total'), 0);
    store.publishFccs([fcc()]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7","10.61.0.8"]]');
    await waitFor(async () => (await counted('addresses_rewritten_total')) === 2, { description: 'two rewritten' });
    store.publishFccs([fcc({ connected: false })]);
    await waitFor(async () => (await counted('addresses_restored_total')) === 2, { description: 'two restored' });
    assert.equal(await counted('addresses_rewritten_total'), 2);
  });
});

test('a slice still in conflict after its retries is planned again soon, not at the next resync', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc({ connected: false })], async ({ passes, server, store, addresses }) => {
    await waitFor(() => passes().length >= 1);
    server.failNext({ method: 'PATCH', pathIncludes: '/web', count: 3 }, 409);
    store.publishFccs([fcc()]);
    await waitFor(() => passes().some((p) => p.conflict > 0), { description: 'a pass that ended in conflict' });
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'converged by a retry, with no resync' });
  });
});

test('before the first sync no pass runs, whatever asks for one: an empty view would restore every stored shortcut', async () => {
  const rewritten = { name: 'web', addresses: [['10.61.0.7']], annotations: { 'liqo.io/shortcut-addresses': '10.61.0.7', 'liqo.io/shortcut-original-addresses': '{"10.61.0.7":"10.63.0.7"}' } };
  await withController([rewritten], [], async ({ passes, server, store, reconciler, addresses, said }) => {
    reconciler.trigger('became the leader', 0);
    await waitFor(() => said('the view is not synced yet: no pass') >= 1, { description: 'the pass declined' });
    assert.equal(passes().length, 0);
    assert.equal(server.requests.filter((r) => r.method === 'PATCH').length, 0);
    assert.deepEqual(addresses('web'), [['10.61.0.7']]);
    store.publishFccs([fcc()]);
    await waitFor(() => passes().length >= 1, { description: 'the first sync makes a pass' });
    assert.deepEqual(addresses('web'), [['10.61.0.7']], 'the shortcut in use is kept');
  }, { unsynced: true });
});

test('a planned patch carries a resourceVersion test, so it never lands on a slice changed since', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc()], async ({ passes, server, addresses }) => {
    await waitFor(() => passes().length >= 1);
    const stored = server.get({ ...SLICE, name: 'web' });
    assert.ok(stored);
    const stale = planSlice(stored, snapshotOf([]), {});
    assert.equal(stale.kind, 'write');
    assert.deepEqual(stale.kind === 'write' ? stale.write.patch[0] : undefined,
      { op: 'test', path: '/metadata/resourceVersion', value: stored.metadata?.resourceVersion });
    await server.update({ ...stored, metadata: { ...stored.metadata, resourceVersion: undefined }, endpoints: [{ addresses: ['10.63.0.8'], conditions: { ready: true } }] });
    const config = new KubeConfig();
    config.loadFromFile(await server.kubeconfig());
    const api = config.makeApiClient(CustomObjectsApi);
    await assert.rejects(api.patchNamespacedCustomObject({ group: 'discovery.k8s.io', version: 'v1', namespace: 'demo', plural: 'endpointslices',
      name: 'web', body: stale.kind === 'write' ? stale.write.patch : [] }), (error: unknown) => httpStatus(error) === 422);
    assert.deepEqual(addresses('web'), [['10.61.0.8']], 'the webhook rewrote the new address; the stale patch changed nothing');
  });
});

test('a failed resourceVersion test (422) is retried with a fresh read, within the same pass', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc({ connected: false })], async ({ passes, server, store, addresses }) => {
    await waitFor(() => passes().length >= 1);
    server.failNext({ method: 'PATCH' }, 422);
    store.publishFccs([fcc()]);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]');
    await waitFor(() => passes().length >= 2, { description: 'the pass that met the 422 is over' });
    const calls = server.requests.filter((r) => r.path.endsWith('/endpointslices/web'));
    assert.deepEqual(calls.map((r) => `${r.method} ${r.status}`), ['PATCH 422', 'GET 200', 'PATCH 200'], 'refused, read again, written');
    assert.deepEqual(passes().map((p) => p.error), [0, 0], 'no pass records an error');
    assert.equal(passes()[1]?.patched, 1);
  });
});

test('a pair change that arrives while a pass runs is not lost, with no periodic resync to catch it later', async () => {
  // The pass's one write is held inside the API server (the webhook has already answered for the old pairs) until
  // the test has changed the pairs: the change lands mid-pass.
  const { holdFirstWrite, reached, release } = holdingFirstWrite();
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc()], async ({ passes, store, addresses }) => {
    await waitFor(reached, { description: 'the first pass is writing' });
    store.publishFccs([fcc({ aRemapped: '10.71.0.0/16' })]);
    release();
    await waitFor(() => passes().length >= 1);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.71.0.7"]]', { description: 'the change made during the pass is applied' });
  }, { mutate: holdFirstWrite, resyncIntervalMs: 0 });
});

test('a view that moves during a pass takes effect for the slices still to come, and the next pass puts back those written before', async () => {
  // Ten slices, one write at a time; the first write is held inside the API server until the shortcut has gone.
  const { holdFirstWrite, reached, release } = holdingFirstWrite();
  const slices = Array.from({ length: 10 }, (_, i): SliceSpec => ({ name: `web-${i}`, addresses: [[`10.63.0.${i + 1}`]] }));
  await withController(slices, [fcc()], async ({ passes, store, addresses, patches }) => {
    await waitFor(reached, { description: 'the first pass is writing its first slice' });
    store.publishFccs([fcc({ connected: false })]);
    release();
    await waitFor(() => passes().length >= 2, { description: 'the pass the move asked for is done' });
    for (let i = 0; i < slices.length; i++) assert.deepEqual(addresses(`web-${i}`), [[`10.63.0.${i + 1}`]], `web-${i} as Liqo wrote it`);
    assert.equal(patches(), 2, 'the held slice written and put back; the other nine never written for the gone shortcut');
    assert.deepEqual(passes().map((pass) => pass.patched), [1, 1], 'each pass wrote the one slice planned before the move');
  }, { mutate: holdFirstWrite, maxConcurrentWrites: 1, pageSize: 3, heal: false });
});

test('an API outage fails the pass, and it is retried after recovery', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc({ connected: false })], async ({ passes, server, store, addresses }) => {
    await waitFor(() => passes().length >= 1);
    server.setAvailable(false);
    store.publishFccs([fcc()]);
    await waitFor(() => passes().some((p) => p.error > 0), { description: 'a failed pass' });
    server.setAvailable(true);
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'converged after recovery' });
  });
});

test('a write refused on every pass is retried with a growing delay, which a clean pass resets', async () => {
  const backoff = { initialMs: 5, maxMs: 40 };
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc({ connected: false })], async ({ passes, retryDelays, server, store, addresses }) => {
    await waitFor(() => passes().length >= 1);
    server.failNext({ method: 'PATCH', pathIncludes: '/web', count: 4 }, 403);
    store.publishFccs([fcc()]);
    // Every pass of those four wrote nothing and failed: each must ask for a longer delay than the last, not start over.
    await waitFor(() => passes().filter((p) => p.error > 0).length >= 3, { description: 'three failed passes' });
    await waitFor(() => JSON.stringify(addresses('web')) === '[["10.61.0.7"]]', { description: 'converged once the API accepts' });
    const grown = retryDelays();
    assert.ok(grown.length >= 3, `${grown.length} retries after three failed passes`);
    // Full jitter: the n-th delay lies in [cap/2, cap] with the cap doubling, so each is at least the one before.
    for (let i = 1; i < 3; i++) assert.ok((grown[i] ?? 0) >= (grown[i - 1] ?? 0), `delays ${grown.join(', ')} grow`);
    assert.ok((grown[2] ?? 0) >= backoff.initialMs, `the third delay ${grown[2]} ms is past the first cap`);
    // After the clean pass, the next failure starts again from the first cap.
    server.failNext({ method: 'PATCH', pathIncludes: '/web', count: 1 }, 403);
    store.publishFccs([fcc({ connected: false })]);
    await waitFor(() => retryDelays().length > grown.length, { description: 'a retry after the next failure' });
    assert.ok((retryDelays().at(-1) ?? Infinity) <= backoff.initialMs, `${retryDelays().at(-1)} ms: the delay started over`);
  }, { backoff, heal: false });
});

test('with a resync interval, passes go on without any change of the view', async () => {
  // Without it a quiet view makes one pass (the first sync); each further pass here can only be a resync.
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc()], async ({ passes }) => {
    await waitFor(() => passes().length >= 3, { description: 'two resyncs after the first pass' });
  }, { resyncIntervalMs: 50 });
});

test('a flapping shortcut makes few passes, and the slices end in the last state', async () => {
  await withController([{ name: 'web', addresses: [['10.63.0.7']] }], [fcc({ connected: false })], async ({ passes, store, reconciler, addresses }) => {
    await waitFor(() => passes().length >= 1);
    for (let i = 0; i < 50; i++) store.publishFccs([fcc({ connected: i % 2 === 0 })]);
    await waitFor(() => passes().length >= 2 && JSON.stringify(addresses('web')) === '[["10.63.0.7"]]');
    reconciler.trigger('settle', 0);
    await waitFor(() => passes().length >= 3);
    assert.ok(passes().length <= 5, `${passes().length} passes for 50 flips`);
  });
});

test('many slices are listed in pages and all converge', async () => {
  const slices = Array.from({ length: 120 }, (_, i): SliceSpec => ({ name: `s${i}`, addresses: [[`10.63.${i}.1`]] }));
  await withController(slices, [fcc()], async ({ passes, server, patches }) => {
    await waitFor(() => passes().length >= 1, { timeoutMs: 15_000 });
    assert.equal(patches(), 120);
    const lists = server.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/endpointslices') && !r.watch);
    assert.ok(lists.length >= 3, 'paged');
    assert.ok(lists.every((r) => r.query.labelSelector === 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io'));
  }, { pageSize: 50 });
});
