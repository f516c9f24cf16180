// Section "rewrite": the pure engine on 100-endpoint IPv4 slices, one address per endpoint, half of them inside a
// pair's source. Prints one JSON line.
//   addressesPerSecond: rewriteEndpointSlice + patchFor (what the webhook does per review) against LIQO.md's shortcut;
//     the same with applyRewrite (what `rewrite` prints) is reported beside it.
//   pairScaling: ns per address, same pipeline, with 1, 100 and 10,000 usable pairs for the slice's cluster.
// Scenarios are measured round-robin after a common warm-up, so that JIT state and machine noise fall on all of them
// alike; each figure is the median of the repetitions.
import { patchFor } from '../src/admission/patch.ts';
import { isSkip } from '../src/core/endpoint-slice.ts';
import { decodeFcc } from '../src/core/fcc.ts';
import { isObject, type JsonObject } from '../src/core/json.ts';
import { applyRewrite, isUnchanged, rewriteEndpointSlice } from '../src/core/rewrite.ts';
import { buildSnapshot, type Snapshot } from '../src/core/snapshot.ts';
import { admissionReview, exampleFccObject, LOCAL, scalingFccs, scalingSlice } from './fixtures.ts';
import { median, progress, round, sized } from './stats.ts';

const ENDPOINTS = 100;
const SLICES = sized(64, 2);
const REPETITIONS = sized(9, 1);
const REPETITION_MS = sized(150, 2);
const PAIR_COUNTS = [1, 100, 10_000] as const;

type Step = (object: JsonObject, snapshot: Snapshot) => number;

/** What the webhook does per review: f, then the JSON Patch of it. Returns a number so nothing is optimised away. */
const withPatch: Step = (object, snapshot) => {
  const rewrite = rewriteEndpointSlice(object, snapshot);
  return isSkip(rewrite) || isUnchanged(rewrite) ? 0 : patchFor(rewrite).length;
};

/** What the offline harness does: f as an object. */
const withObject: Step = (object, snapshot) => {
  const rewrite = rewriteEndpointSlice(object, snapshot);
  return isSkip(rewrite) ? 0 : Object.keys(applyRewrite(rewrite)).length;
};

interface Scenario {
  readonly name: string;
  readonly step: Step;
  readonly slices: readonly JsonObject[];
  readonly snapshot: Snapshot;
  readonly samples: number[];
}

let sink = 0;

/** ns per address over one timed run of at least `ms`. */
function run(scenario: Scenario, ms: number): number {
  const { step, slices, snapshot } = scenario;
  let iterations = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (const slice of slices) sink += step(slice, snapshot);
    iterations += slices.length;
    elapsed = performance.now() - start;
  }
  return (elapsed * 1e6) / (iterations * ENDPOINTS);
}

/** The pairs must all be usable, or the scaling would measure something else. */
function check(snapshot: Snapshot, usable: number): void {
  const view = snapshot.forCluster(LOCAL);
  const states = view.states.filter((state) => state.usable).length;
  if (view.pairs.length !== usable || states !== usable) {
    throw new Error(`expected ${usable} usable pairs for ${LOCAL}, evaluatePairs gave ${view.pairs.length} (${states} usable states)`);
  }
  const rewrite = rewriteEndpointSlice(scalingSlice(usable, ENDPOINTS, 1), snapshot);
  if (isSkip(rewrite) || rewrite.edits.length !== ENDPOINTS / 2) throw new Error('the slice is not half rewritten');
}

function reviewedSlice(): JsonObject {
  const request = admissionReview().request;
  const object = isObject(request) ? request.object : undefined;
  if (!isObject(object)) throw new Error('no slice in the review');
  return object;
}

const example = buildSnapshot({ version: 1, fccs: [decodeFcc(exampleFccObject())] });
const scenarios: Scenario[] = [
  { name: 'patch', step: withPatch, slices: [reviewedSlice()], snapshot: example, samples: [] },
  { name: 'object', step: withObject, slices: [reviewedSlice()], snapshot: example, samples: [] },
];
for (const pairs of PAIR_COUNTS) {
  const snapshot = buildSnapshot({ version: 1, fccs: scalingFccs(pairs) });
  check(snapshot, pairs);
  const slices = Array.from({ length: SLICES }, (_, seed) => scalingSlice(pairs, ENDPOINTS, seed + 1));
  scenarios.push({ name: String(pairs), step: withPatch, slices, snapshot, samples: [] });
}

progress(`rewrite: warm-up, then ${REPETITIONS} rounds of ${scenarios.length} scenarios x ${REPETITION_MS} ms`);
for (const scenario of scenarios) run(scenario, REPETITION_MS * 2);
for (let round = 0; round < REPETITIONS; round++) {
  for (const scenario of scenarios) scenario.samples.push(run(scenario, REPETITION_MS));
}
const nsOf = (name: string): number => median(scenarios.find((s) => s.name === name)?.samples ?? []);

console.log(JSON.stringify({
  addressesPerSecond: Math.round(1e9 / nsOf('patch')),
  addressesPerSecondApplyRewrite: Math.round(1e9 / nsOf('object')),
  pairScaling: Object.fromEntries(PAIR_COUNTS.map((pairs) => [String(pairs), round(nsOf(String(pairs)), 1)])),
  sink: sink > 0,
}));
