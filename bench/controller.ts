// Section "controller": 5,000 reflected slices stored on the test API server (the webhook's review code in its
// write path, as kube-apiserver calls the webhook), the reconciler with its defaults (src/controller/pace.ts: 1,000 writes/s, 8 in flight,
// 250 ms settle), then one shortcut flips. Measures the time from the flip until a pass has brought every slice in
// step, and the PATCH requests it took. The API server, the webhook hook and the reconciler share this process, as
// in test/controller/reconciler.test.ts. Prints one JSON line.
import { KubeConfig } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_MAX_PATCHES_PER_SECOND } from '../src/controller/pace.ts';
import { planSlice } from '../src/controller/plan.ts';
import { SliceReconciler } from '../src/controller/reconciler.ts';
import { decodeFcc } from '../src/core/fcc.ts';
import { Metrics } from '../src/metrics.ts';
import { SnapshotStore } from '../src/view/shortcut-view.ts';
import { fccObject, sliceObject } from '../test/support/builders.ts';
import { recordingLogger } from '../test/support/recording-logger.ts';
import { startKubeApiServer, type KubeObject } from '../test/support/kube-api-server.ts';
import { webhookHook } from '../test/support/kube-webhook.ts';
import { LOCAL } from './fixtures.ts';
import { progress, round, sized, sleep } from './stats.ts';

const SLICES = sized(5000, 40);
const NAMESPACES = sized(50, 4);
const ENDPOINTS = 4;
/** One slice in ten serves pods outside the shortcut: the flip must leave it alone, and the controller unwritten. */
const UNAFFECTED_EVERY = 10;
const SLICE_TYPE = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' } as const;

const connected = (isConnected: boolean) => [decodeFcc(fccObject({ connected: isConnected }))];

/** The parts of a stored slice that the rewrite may change. */
const content = (slice: KubeObject) => ({ endpoints: slice['endpoints'], annotations: slice.metadata?.annotations ?? {} });

const store = new SnapshotStore();
store.publishFccs(connected(true));
const server = await startKubeApiServer({ mutate: webhookHook(store) });
const metrics = new Metrics();
let reconciler: SliceReconciler | undefined;
try {
  progress(`controller: storing ${SLICES} slices through the webhook hook`);
  for (let i = 0; i < SLICES; i++) {
    const inside = i % UNAFFECTED_EVERY !== 0;
    // Pod i.k: 10.63.x.y (inside the shortcut's source) or 10.200.x.y (hub only); half of each affected slice.
    const addresses = Array.from({ length: ENDPOINTS }, (_, k) =>
      [`${inside && k % 2 === 0 ? '10.63' : '10.200'}.${i >> 6}.${((i & 63) << 2) + k}`]);
    await server.create(sliceObject({ name: `web-${i}`, namespace: `ns-${i % NAMESPACES}`, destination: LOCAL, addresses }));
  }
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const log = recordingLogger();
  reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger: log.logger, metrics, resyncIntervalMs: 0 });
  const passes = log.passes;
  reconciler.start();
  while (passes().length < 1) await sleep(20);
  const firstPass = passes()[0];
  if (firstPass?.patched !== 0 || firstPass.listed !== SLICES) throw new Error(`the first pass was not idle: ${JSON.stringify(firstPass)}`);

  const before = new Map(server.list(SLICE_TYPE).map((slice) => [`${slice.metadata?.namespace}/${slice.metadata?.name}`, content(slice)]));
  const requestsBefore = server.requests.length;
  progress('controller: the shortcut disconnects');
  const flipped = performance.now();
  store.publishFccs(connected(false));
  // Converged: a pass that started after the flip has finished, and nothing is left to write.
  const deadline = flipped + 60_000;
  let convergedAt = Number.NaN;
  while (performance.now() < deadline) {
    await sleep(10);
    const last = passes().at(-1);
    if (passes().length >= 2 && last !== undefined && last.error === 0 && last.conflict === 0) {
      convergedAt = performance.now();
      break;
    }
  }
  if (Number.isNaN(convergedAt)) throw new Error('no pass after the flip within 60 s');
  const after = server.list(SLICE_TYPE);
  const snapshot = store.current();
  const behind = after.filter((slice) => planSlice(slice, snapshot, {}).kind === 'write').length;
  const changed = after.filter((slice) => !isDeepStrictEqual(before.get(`${slice.metadata?.namespace}/${slice.metadata?.name}`), content(slice))).length;
  const patches = server.requests.slice(requestsBefore).filter((request) => request.method === 'PATCH');
  // Every PATCH issued counts, failed ones too: a retry is a write the flip cost.
  const writes = patches.length;
  const failedWrites = patches.filter((request) => request.status === undefined || request.status >= 300).length;
  const summary = passes().at(-1);
  // The reconciler's own bounds: a 250 ms settle, then a burst of one second's writes and that rate after it.
  const floorSeconds = 0.25 + Math.max(0, changed - DEFAULT_MAX_PATCHES_PER_SECOND) / DEFAULT_MAX_PATCHES_PER_SECOND;
  console.log(JSON.stringify({
    floorSeconds,
    slices: SLICES,
    convergeSeconds: round((convergedAt - flipped) / 1000, 2),
    writes,
    changed,
    failedWrites,
    behind,
    passes: passes().length - 1,
    pass: summary,
  }));
} finally {
  await reconciler?.stop();
  await server.close();
}
