// The bench sections on the real kube-apiserver (bench/control-plane.ts) run in the suite at a tiny size
// (BENCH_TINY=1), to their JSON: a section that crashes fails here. No figure is checked: at these sizes they mean
// nothing. The other sections run in test/bench.test.ts.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { CONTROL_PLANE_SECTIONS } from '../../bench/sections.ts';
import { numbersIn, runTinyBench } from '../support/tiny-bench.ts';
import { buildControlPlane } from './controlplane/build.ts';
import { buildLiqoWriter } from './liqo-writer/build.ts';
import { skipReason } from './support/skip.ts';

// The Go builds (cached across runs) happen in a hook, which has no timeout: on a cold cache they alone can take
// minutes on a 2-core machine, and the test's own bound is for the bench.
before(() => {
  if (skipReason()) return;
  buildControlPlane();
  buildLiqoWriter();
});

test('every bench section on the real kube-apiserver runs at a tiny size and reports its results', { skip: skipReason(), timeout: 600_000 }, async () => {
  const results = await runTinyBench(CONTROL_PLANE_SECTIONS);
  for (const section of CONTROL_PLANE_SECTIONS) {
    const numbers = numbersIn(results[section]);
    assert.ok(numbers.length > 0, `${section} reported no figures: ${JSON.stringify(results[section])}`);
    assert.deepEqual(numbers.filter(([, value]) => value === null), [], `${section} reported a figure that is not a number`);
  }
});
