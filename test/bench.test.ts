// Every bench section runs in the suite, at a tiny size (BENCH_TINY=1), to its JSON: a section that crashes fails
// here, not months later in front of a user (`npm run bench -- writepath` once crashed on a path, unnoticed). No
// figure is checked: at these sizes they mean nothing. The sections on the real kube-apiserver run in
// test/e2e/bench.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONTROL_PLANE_SECTIONS, SECTIONS } from '../bench/sections.ts';
import { numbersIn, runTinyBench } from './support/tiny-bench.ts';

test('every bench section off the control plane runs at a tiny size and reports its results', { timeout: 300_000 }, async () => {
  const sections = SECTIONS.filter((section) => !CONTROL_PLANE_SECTIONS.includes(section));
  const results = await runTinyBench(sections);
  for (const section of sections) {
    const numbers = numbersIn(results[section]);
    assert.ok(numbers.length > 0, `${section} reported no figures: ${JSON.stringify(results[section])}`);
    assert.deepEqual(numbers.filter(([, value]) => value === null), [], `${section} reported a figure that is not a number`);
  }
});
