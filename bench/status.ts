// Section "status": `shortcut-webhook status` on a leaf with many stored slices. The leaf is the test API server
// (test/support/kube-api-server.ts, in this process: it answers the list pages), holding 20-endpoint reflected slices
// of one Service each, half of each one's addresses in LIQO.md's shortcut; first SMALL slices, then LARGE. Each size is
// one run of the executable (the bundle, as after `npm ci`) under /usr/bin/time: wall seconds and peak RSS. The large
// one runs again with V8's old space capped at OLD_SPACE_MB, far below what its slices take as objects (about 12 kB
// each): it completes only because pages (500 a page) are folded and dropped. Prints one JSON line.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionObject, sliceObject } from '../test/support/builders.ts';
import { startKubeApiServer } from '../test/support/kube-api-server.ts';
import { exampleFccObject } from './fixtures.ts';
import { progress, round, sized } from './stats.ts';

const SMALL = sized(2_000, 20);
const LARGE = Number(process.env.BENCH_STATUS_SLICES ?? sized(20_000, 200));
const ENDPOINTS = 20;
const OLD_SPACE_MB = 64;
const root = new URL('..', import.meta.url).pathname;
const bin = join(root, 'bin/shortcut-webhook.js');

const built = spawnSync(process.execPath, [join(root, 'build/bundle.js')], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`build/bundle.js failed: ${built.stderr}`);
const dir = mkdtempSync(join(tmpdir(), 'shortcut-bench-status-'));
const server = await startKubeApiServer();
await server.create(exampleFccObject());
await server.create(connectionObject('cluster3', 'Connected'));
const kubeconfig = await server.kubeconfig({ dir });

let stored = 0;
async function fill(slices: number): Promise<void> {
  progress(`status: storing slices ${stored} to ${slices}`);
  for (; stored < slices; stored++) {
    const addresses = Array.from({ length: ENDPOINTS }, (_, k) => [k % 2 === 0 ? `10.63.${stored % 250}.${k + 10}` : `10.200.${stored % 250}.${k + 10}`]);
    await server.create(sliceObject({ name: `web-${stored}`, namespace: `ns-${stored % 50}`, addresses }));
  }
}

interface StatusRun {
  readonly slices: number; readonly seconds: number; readonly rssMB: number;
  /** The command's own CPU (user + system): its share of the wall time, the rest being the server's and the machine's. */
  readonly cpuSeconds: number; readonly counted: number;
}

/** One run of the child: spawnSync would block this process, which is the API server it reads. */
async function run(slices: number, nodeFlags: readonly string[] = []): Promise<StatusRun> {
  const time = join(dir, 'time');
  const child = spawn('/usr/bin/time', ['-f', '%e %M %U %S', '-o', time, process.execPath, ...nodeFlags, bin, 'status', '--kubeconfig', kubeconfig, '-o', 'json'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`status exited ${code}: ${err}`);
  const counted = (JSON.parse(out) as { totals: { endpointSlices: number } }).totals.endpointSlices;
  if (counted !== slices) throw new Error(`status counted ${counted} slices of ${slices}`);
  const [seconds, kB, user, system] = readFileSync(time, 'utf8').trim().split(/\s+/).slice(-4).map(Number);
  return { slices, seconds: seconds ?? Number.NaN, rssMB: round((kB ?? Number.NaN) / 1024, 1), cpuSeconds: round((user ?? Number.NaN) + (system ?? Number.NaN)), counted };
}

try {
  await fill(SMALL);
  progress(`status: ${SMALL} slices`);
  const small = await run(SMALL);
  await fill(LARGE);
  progress(`status: ${LARGE} slices`);
  const large = await run(LARGE);
  progress(`status: ${LARGE} slices, old space capped at ${OLD_SPACE_MB} MB`);
  const capped = await run(LARGE, [`--max-old-space-size=${OLD_SPACE_MB}`]);
  console.log(JSON.stringify({ endpoints: ENDPOINTS, oldSpaceMB: OLD_SPACE_MB, small, large, capped }));
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
