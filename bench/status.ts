// Section "status": `shortcut-webhook status` on a leaf with many stored slices, on the real kube-apiserver and etcd
// (bench/control-plane.ts, as `scale` uses them), against a plain list of the same objects in the same run. The leaf
// holds 20-endpoint reflected slices in 20 namespaces, half of each one's addresses in LIQO.md's shortcut (created by a
// plain client, 16 in flight, no webhook: what status reads is what is stored), first SMALL slices, then LARGE.
// Each run is a fresh process under /usr/bin/time (wall seconds, peak RSS, its own CPU):
//   - the command as after `npm ci` (bin/shortcut-webhook.js on the bundle), four ways: per peer and -A (one line per
//     Service), each as text and -o json;
//   - the baseline, plain-list.ts bundled: `node:https` GETs of pages of 500 of the same reflected EndpointSlices in all
//     namespaces (the same label selector), each page parsed, as kubectl lists;
// in ROUNDS rounds, each the baseline and the four ways in an order that rotates, so that a drift of the machine's load
// falls on all alike; each way's ratio is the median over rounds of its seconds over that round's baseline. The large
// size's -o json per peer runs once more with V8's old space capped at OLD_SPACE_MB, far below what its slices take as
// objects (about 12 kB each): it completes only because pages (500 a page) are folded and dropped. Prints one JSON line.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { sliceObject } from '../test/support/builders.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { rawClient, startBench } from './control-plane.ts';
import { median, progress, round, sized } from './stats.ts';

const SMALL = sized(2_000, 20);
const LARGE = Number(process.env.BENCH_STATUS_SLICES ?? sized(20_000, 200));
const ROUNDS = Number(process.env.BENCH_STATUS_ROUNDS ?? sized(5, 1));
const ENDPOINTS = 20;
const NAMESPACES = 20;
const IN_FLIGHT = 16;
const OLD_SPACE_MB = 64;
const SELECTOR = 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io';
const root = new URL('..', import.meta.url).pathname;
const bin = join(root, 'bin/shortcut-webhook.js');

/** The four ways an operator runs it. */
const WAYS = [
  { name: 'peers', args: [] },
  { name: 'peersJson', args: ['-o', 'json'] },
  { name: 'services', args: ['-A'] },
  { name: 'servicesJson', args: ['-A', '-o', 'json'] },
] as const;
type Way = (typeof WAYS)[number]['name'];

const built = spawnSync(process.execPath, [join(root, 'build/bundle.js')], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`build/bundle.js failed: ${built.stderr}`);
const dir = mkdtempSync(join(tmpdir(), 'shortcut-bench-status-'));
const plainList = join(dir, 'plain-list.mjs');
await build({ entryPoints: [new URL('plain-list.ts', import.meta.url).pathname], bundle: true, platform: 'node', format: 'esm',
  target: 'node20', outfile: plainList, logLevel: 'warning' });

const bench = await startBench();

interface Run {
  readonly seconds: number; readonly rssMB: number;
  /** The process's own CPU (user + system): its share of the wall time, the rest being the API server's and the machine's. */
  readonly cpuSeconds: number;
}

/** One process under /usr/bin/time; its stdout. */
async function timed(args: readonly string[]): Promise<Run & { out: string }> {
  const time = join(dir, 'time');
  const child = spawn('/usr/bin/time', ['-f', '%e %M %U %S', '-o', time, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}: ${err}`);
  const [seconds, kB, user, system] = readFileSync(time, 'utf8').trim().split(/\s+/).slice(-4).map(Number);
  return { seconds: seconds ?? Number.NaN, rssMB: round((kB ?? Number.NaN) / 1024, 1), cpuSeconds: round((user ?? Number.NaN) + (system ?? Number.NaN)), out };
}

async function plain(slices: number): Promise<Run> {
  const { out, ...run } = await timed([plainList, bench.cp.url, join(bench.cp.dir, 'ca.crt'), join(bench.cp.dir, 'admin.crt'), join(bench.cp.dir, 'admin.key'),
    `/apis/discovery.k8s.io/v1/endpointslices?${new URLSearchParams({ labelSelector: SELECTOR })}`]);
  if (Number(out.trim()) !== slices) throw new Error(`the plain list listed ${out.trim()} slices of ${slices}`);
  return run;
}

async function status(slices: number, args: readonly string[], nodeFlags: readonly string[] = []): Promise<Run> {
  const { out, ...run } = await timed([...nodeFlags, bin, 'status', '--kubeconfig', bench.cp.adminKubeconfig, ...args]);
  // Text or JSON, the command must have counted every slice: the JSON's totals; in the text's SLICES column, the hub's
  // row per peer (every slice has addresses on the hub path), the Services' rows summed with -A.
  const column = slicesColumn(out);
  const counted = args.includes('json')
    ? (JSON.parse(out) as { totals: { endpointSlices: number } }).totals.endpointSlices
    : args.includes('-A') ? column.reduce((a, b) => a + b, 0) : Math.max(...column);
  if (counted !== slices) throw new Error(`status ${args.join(' ')} counted ${counted} slices of ${slices}`);
  return run;
}

/** The SLICES column of status's table, row by row (none for JSON). */
function slicesColumn(text: string): number[] {
  const lines = text.split('\n');
  const header = lines.findIndex((line) => line.includes('SLICES'));
  const start = lines[header]?.indexOf('SLICES') ?? -1;
  const cells: number[] = [];
  if (start < 0) return cells;
  for (const line of lines.slice(header + 1)) {
    if (line.trim() === '' || line.startsWith('(')) break;
    cells.push(Number(line.slice(start).trim().split(/\s+/)[0]));
  }
  return cells;
}

let stored = 0;
async function fill(slices: number): Promise<void> {
  progress(`status: storing slices ${stored} to ${slices}`);
  const client = rawClient(bench.cp, IN_FLIGHT);
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (stored < slices) {
      const i = stored++;
      // Endpoint k of slice i: an address of its own (modulo 2^16) in the shortcut's source (even k) or outside it.
      const addresses = Array.from({ length: ENDPOINTS }, (_, k) => {
        const index = i * ENDPOINTS + k;
        return [`${k % 2 === 0 ? '10.63' : '10.200'}.${(index >> 8) & 255}.${index & 255}`];
      });
      const slice = sliceObject({ name: `web-${i}`, namespace: `ns-${i % NAMESPACES}`, addresses });
      delete (slice.metadata as Record<string, unknown>).resourceVersion;
      const answer = await client.send('POST', `/apis/discovery.k8s.io/v1/namespaces/ns-${i % NAMESPACES}/endpointslices`, JSON.stringify(slice), 'application/json');
      if (answer.status !== 201) throw new Error(`create web-${i}: HTTP ${answer.status}: ${answer.text.slice(0, 300)}`);
      if ((i + 1) % 5000 === 0) progress(`status: ${i + 1} stored`);
    }
  }));
  client.close();
}

/** ROUNDS rounds of the baseline and the four ways, rotated; each way's runs and its ratios to its round's baseline. */
async function measure(slices: number) {
  const plains: Run[] = [];
  const ways = new Map<Way, { runs: Run[]; ratios: number[] }>(WAYS.map((way) => [way.name, { runs: [], ratios: [] }]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = [...WAYS.slice(r % WAYS.length), ...WAYS.slice(0, r % WAYS.length)];
    const baseline = await plain(slices);
    plains.push(baseline);
    const runs: [Way, Run][] = [];
    for (const way of order) runs.push([way.name, await status(slices, way.args)]);
    for (const [name, run] of runs) {
      const entry = ways.get(name);
      entry?.runs.push(run);
      entry?.ratios.push(run.seconds / baseline.seconds);
    }
    progress(`status: ${slices} slices, round ${r + 1}: plain list ${baseline.seconds} s; ${runs.map(([name, run]) => `${name} ${run.seconds} s`).join(', ')}`);
  }
  const summary = (runs: readonly Run[]) => ({
    seconds: round(median(runs.map((run) => run.seconds))), cpuSeconds: round(median(runs.map((run) => run.cpuSeconds))),
    rssMB: round(Math.max(...runs.map((run) => run.rssMB)), 1),
  });
  return {
    slices, plainList: summary(plains),
    ...Object.fromEntries([...ways].map(([name, { runs, ratios }]) => [name, { ...summary(runs), ratio: round(median(ratios), 3) }])) as
      Record<Way, ReturnType<typeof summary> & { ratio: number }>,
  };
}

try {
  for (let n = 0; n < NAMESPACES; n++) {
    await bench.admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
  }
  // Liqo's CRDs were just installed: their storage answers 429 until it is ready, and status would stop on it.
  await waitFor(async () => (await bench.admin.request('GET', '/apis/offloading.liqo.io/v1beta1/shadowendpointslices?limit=1')).status === 200,
    { timeoutMs: 60_000, intervalMs: 100, description: 'ShadowEndpointSlices are served' });
  await fill(SMALL);
  const small = await measure(SMALL);
  await fill(LARGE);
  const large = await measure(LARGE);
  progress(`status: ${LARGE} slices, old space capped at ${OLD_SPACE_MB} MB`);
  const capped = await status(LARGE, ['-o', 'json'], [`--max-old-space-size=${OLD_SPACE_MB}`]);
  console.log(JSON.stringify({ endpoints: ENDPOINTS, rounds: ROUNDS, oldSpaceMB: OLD_SPACE_MB, small, large, capped: { slices: LARGE, ...capped } }));
} finally {
  await bench.close();
  rmSync(dir, { recursive: true, force: true });
}
