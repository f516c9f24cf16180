// Section "snapshot": the view built from 10,000 FCCs among 200 leaves. Prints one JSON line. Two modes, each run in
// fresh processes by run.ts:
//   time: rebuildMs, the median of 21 rebuilds (buildSnapshot + forCluster of the local leaf, which 199 of the FCCs
//     name) after 5 of warm-up; also the decode of the 10,000 objects (the cluster source does it on every change)
//     and statesFor(local) (what serve reads with --cluster-id for its pair log and metrics), for the table.
//   rss: the process RSS once the view is built, as a product process holds it: the raw FCC objects (the informer's
//     cache), their decoded form and the snapshot with its local view. A single build, as at startup: the churn of
//     26 rebuilds in a tight loop is the benchmark's, and the heap it leaves behind is reported apart.
import { decodeFcc } from '../src/core/fcc.ts';
import { buildSnapshot, type Snapshot } from '../src/core/snapshot.ts';
import { MESH_LOCAL, meshFccObjects } from './fixtures.ts';
import { median, round, sized } from './stats.ts';

const FCCS = sized(10_000, 300);
const LEAVES = sized(200, 40);
const WARMUP = sized(5, 0);
const REPETITIONS = sized(21, 1);

const rssMB = () => process.memoryUsage().rss / 2 ** 20;
const collect = () => { if (typeof globalThis.gc === 'function') globalThis.gc(); };
const mode = process.argv[2] === 'rss' ? 'rss' : 'time';

collect();
const baselineRssMB = rssMB();
const objects = meshFccObjects(FCCS, LEAVES);

function build(version: number): { snapshot: Snapshot; decodeMs: number; buildMs: number } {
  const decodeStart = performance.now();
  const fccs = objects.map((object) => decodeFcc(object));
  const start = performance.now();
  const snapshot = buildSnapshot({ version, fccs });
  const view = snapshot.forCluster(MESH_LOCAL);
  const end = performance.now();
  if (view.pairs.length < Math.min(150, LEAVES / 2)) throw new Error(`unexpected view: ${view.pairs.length} pairs`);
  return { snapshot, decodeMs: start - decodeStart, buildMs: end - start };
}

if (mode === 'rss') {
  const { snapshot } = build(1);
  collect();
  const view = snapshot.forCluster(MESH_LOCAL);
  console.log(JSON.stringify({
    fccs: snapshot.fccs.length, rssMB: round(rssMB(), 1), baselineRssMB: round(baselineRssMB, 1),
    heapUsedMB: round(process.memoryUsage().heapUsed / 2 ** 20, 1), localFccs: view.states.length, localPairs: view.pairs.length,
    objects: objects.length,
  }));
} else {
  const rebuild: number[] = [];
  const decode: number[] = [];
  let kept: Snapshot | undefined;
  for (let i = 0; i < WARMUP + REPETITIONS; i++) {
    const { snapshot, decodeMs, buildMs } = build(i + 1);
    if (i >= WARMUP) {
      decode.push(decodeMs);
      rebuild.push(buildMs);
    }
    kept = snapshot;
  }
  const states: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    const all = kept?.statesFor(MESH_LOCAL) ?? [];
    states.push(performance.now() - start);
    if (all.length !== FCCS) throw new Error(`statesFor gave ${all.length} states`);
  }
  collect();
  console.log(JSON.stringify({
    fccs: FCCS, leaves: LEAVES, rebuildMs: round(median(rebuild), 2), decodeMs: round(median(decode), 2),
    statesForMs: round(median(states), 2), loopRssMB: round(rssMB(), 1),
  }));
}
