// /readyz and --stale-view-after (docs/reference.md, "serve"): a view source failing past the bound takes the replica
// out of the reviews; `0` means never, however long the source fails. On the ops app, with the readiness's clock set by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOpsApp } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { Readiness } from '../../src/server/readiness.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc } from '../support/builders.ts';
import { recordingLogger } from '../support/recording-logger.ts';

const HOUR = 3_600_000;

async function readyz(staleViewAfterMs: number): Promise<{ status: number; body: string; sentAway: number }> {
  const view = new SnapshotStore(() => 0);
  view.publishFccs([fcc()]);
  let sentAway = 0;
  const logger = createLogger('silent');
  // Every read of the FCCs has failed since the start, an hour ago.
  const readiness = new Readiness({ view, logger, failing: () => ({ since: 0, problem: 'HTTP 500' }),
    sourceName: 'FCCs', staleViewAfterMs, certificateLoaded: () => true, onStale: () => { sentAway++; }, now: () => HOUR });
  const ops = buildOpsApp({ view, metrics: new Metrics(), logger, clusterId: undefined, readiness: () => readiness.reasons() });
  try {
    const response = await ops.inject({ method: 'GET', url: '/readyz' });
    return { status: response.statusCode, body: response.body, sentAway };
  } finally {
    await ops.close();
  }
}

test('--stale-view-after 0 never takes the replica out: a source failing for an hour leaves /readyz ready', async () => {
  const never = await readyz(0);
  assert.equal(never.status, 200, never.body);
  assert.match(never.body, /^ok\n/);
  assert.equal(never.sentAway, 0, 'no connection sent away');
  // The same source with the default bound: stale, so the set-up above is one that would turn a replica out.
  const bounded = await readyz(60_000);
  assert.equal(bounded.status, 503);
  assert.match(bounded.body, /shortcut view stale: every read of FCCs has failed for 3600 s \(HTTP 500\)/);
  assert.equal(bounded.sentAway, 1);
});

test('the log says once, at error, that the view turned stale, and once, at info, that it is live again: an operator sees both ends', () => {
  const view = new SnapshotStore(() => 0);
  view.publishFccs([fcc()]);
  const { logger, records } = recordingLogger();
  let failure: { since: number; problem: string } | undefined = { since: 0, problem: 'HTTP 500' };
  const readiness = new Readiness({ view, logger, failing: () => failure, sourceName: 'FCCs', staleViewAfterMs: 60_000,
    certificateLoaded: () => true, onStale: () => {}, now: () => HOUR });
  readiness.reasons();
  readiness.reasons();
  failure = undefined;
  readiness.reasons();
  readiness.reasons();
  assert.deepEqual(records.map((record) => [record['level'], record['msg']]), [
    ['error', 'shortcut view stale: not ready, so that reviews go to replicas whose view is live'],
    ['info', 'shortcut view live again: ready'],
  ]);
});
