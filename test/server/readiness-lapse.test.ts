// /readyz's rules (src/server/readiness.ts): a view lapsed after a pause of the process is no view to review with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log.ts';
import { Readiness } from '../../src/server/readiness.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc } from '../support/builders.ts';

test('a replica whose view lapsed (the process was paused) is not ready until its sources have listed again', async () => {
  const view = new SnapshotStore(() => 0);
  view.publishFccs([fcc()]);
  const readiness = new Readiness({ view, logger: createLogger('silent'), failing: () => undefined, sourceName: 'FCCs',
    staleViewAfterMs: 0, certificateLoaded: () => true, onStale: () => {} });
  assert.deepEqual(readiness.reasons(), [], 'ready with a synced view');
  let relisted: () => void = () => {};
  view.lapse(() => new Promise<void>((resolve) => { relisted = resolve; }));
  assert.deepEqual(readiness.reasons(), ['shortcut view lapsed after a pause of the process: every source is listing again']);
  relisted();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(readiness.reasons(), [], 'ready again once the sources listed');
});
