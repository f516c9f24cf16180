// The controller's pace as the API server sees it: the write rate measured at the server stays under the cap it is
// given, over a pass that has more to write than one second's burst; and the periodic resync, when no flag sets it,
// is the interval docs/reference.md gives.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parseServeArgs, SERVE_FLAGS } from '../../src/config.ts';
import { SliceReconciler } from '../../src/controller/reconciler.ts';
import { Metrics } from '../../src/metrics.ts';
import { parseDuration } from '../../src/util/duration.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc, sliceObject } from '../support/builders.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { webhookHook } from '../support/kube-webhook.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { waitFor } from '../support/wait-for.ts';

test('maxWritesPerSecond caps the patches the API server receives: a burst of one second\'s worth, then the rate, measured', { timeout: 30_000 }, async () => {
  const cap = 10;
  const slices = 30;
  const store = new SnapshotStore();
  const hook = webhookHook(store);
  /** When each controller patch reached the API server (its admission), in ms. */
  const arrivals: number[] = [];
  const server = await startKubeApiServer({
    mutate: (object, context) => {
      if (context.operation === 'UPDATE' && context.resource.plural === 'endpointslices') arrivals.push(performance.now());
      return hook(object, context);
    },
  });
  for (let i = 0; i < slices; i++) await server.create(sliceObject({ name: `web-${i}`, addresses: [['10.63.0.1']] }));
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const { logger, passes } = recordingLogger();
  const reconciler = new SliceReconciler({ config, view: store, clusterId: undefined, logger, metrics: new Metrics(), resyncIntervalMs: 0,
    // One patch in flight: the cap limits when patches start, and with several in flight the server's own delays
    // could bunch their arrivals past what the bucket let out (21 in 0.98 s once, at a load average of 14).
    settleMs: 5, maxWritesPerSecond: cap, maxConcurrentWrites: 1 });
  try {
    reconciler.start();
    store.publishFccs([fcc()]);
    await waitFor(() => passes().some((pass) => pass.patched === slices), { timeoutMs: 20_000, description: `a pass patching all ${slices} slices` });
  } finally {
    await reconciler.stop();
    await server.close();
  }
  assert.equal(arrivals.length, slices);
  // In any stretch of time, at most the burst plus the rate over that stretch (one more for the stretch's edges).
  for (let i = 0; i < arrivals.length; i++) {
    for (let j = i; j < arrivals.length; j++) {
      const seconds = ((arrivals[j] ?? 0) - (arrivals[i] ?? 0)) / 1000;
      assert.ok(j - i + 1 <= cap + seconds * cap + 1, `${j - i + 1} patches in ${seconds.toFixed(3)} s, over ${cap} + ${cap}/s`);
    }
  }
  // The whole pass, measured: 30 patches at 10/s after a burst of 10 take about 2 s (the bucket refills a little
  // while the burst is sent, and arrivals are measured at the server, so not exactly 2 s), never a fraction of it.
  const seconds = ((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)) / 1000;
  assert.ok(seconds >= ((slices - cap) / cap) * 0.9, `${slices} patches in ${seconds.toFixed(3)} s, cap ${cap}/s after a burst of ${cap}`);
});

test('without --resync-interval the periodic resync is the reference\'s default, and --help says it', () => {
  const reference = readFileSync(new URL('../../docs/reference.md', import.meta.url), 'utf8');
  const row = /^\| `--resync-interval DUR` \| `([^`]+)` \|/m.exec(reference);
  assert.ok(row?.[1] !== undefined, 'the reference lists --resync-interval with its default');
  const documented = parseDuration(row[1]);
  assert.equal(documented, 600_000, 'the reference says 10m');
  const parsed = parseServeArgs(['--tls-cert', 'c', '--tls-key', 'k'], {});
  assert.ok(!parsed.help);
  assert.equal(parsed.config.resyncIntervalMs, documented);
  assert.match(SERVE_FLAGS['resync-interval'].help, new RegExp(`\\(default ${row[1]}\\)`), 'serve --help gives the same default');
});
