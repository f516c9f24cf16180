// Section "writepath": the latency the webhook adds to the API server's writes, as Liqo sees it. On the real API
// server (bench/control-plane.ts), sequential server-side applies of a 100-endpoint reflected slice (half its
// addresses in LIQO.md's shortcut; each apply moves one hub-only address, so each one is a real write) through:
//   product  the product registered (the image's bundle, node flags and NODE_OPTIONS as the chart runs it), its
//            controller on: the healing watch reads back every version stored
//   review   the same product with --no-controller: what the review alone costs, for the CPU's breakdown
//   minimal  bench/minimal-webhook.ts registered: the same rewrite with nothing else (bundled, same node flags)
//   none     no webhook (a slice no configuration selects)
// Each webhook has its own MutatingWebhookConfiguration, selecting its own slice by a label. Blocks of
// BENCH_WRITEPATH_BLOCK applies per mode, interleaved (the order rotates each block) so machine noise falls on all
// three alike, BENCH_WRITEPATH_BLOCKS blocks after a warm-up. Percentiles are over all samples of a mode.
// Prints one JSON line.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { MANAGED_BY_LABEL } from '../src/core/endpoint-slice.ts';
import { sliceObject } from '../test/support/builders.ts';
import { freePort } from '../test/support/free-port.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { cpuSeconds, rawClient, startBench } from './control-plane.ts';
import { percentile, progress, round, sized } from './stats.ts';

const BLOCKS = Number(process.env.BENCH_WRITEPATH_BLOCKS ?? sized(20, 1));
const BLOCK = Number(process.env.BENCH_WRITEPATH_BLOCK ?? sized(50, 3));
const WARMUP = sized(100, 2);
/** The quiet window, after the warm-up, over which each webhook's CPU at rest is measured. */
const IDLE_SECONDS = sized(10, 1);
const ENDPOINTS = 100;
const MODES = ['product', 'review', 'minimal', 'none'] as const;
type Mode = (typeof MODES)[number];
const LIQO_MANAGER = 'shadow-endpointslice-controller';
/** /proc's CPU times count in ticks of 10 ms: the tiny run's few applies may read 0, and a ratio needs a number. */
const CPU_TICK_SECONDS = 0.01;

const root = new URL('..', import.meta.url).pathname;
const bench = await startBench();
const minimalDir = join(root, '.tmp', `bench-minimal-${process.pid}`);
let minimal: ReturnType<typeof spawn> | undefined;
try {
  const product = await bench.startProduct({ keep: [], controller: true });
  const reviewOnly = await bench.startProduct({ keep: [], controller: false });
  mkdirSync(minimalDir, { recursive: true });
  const minimalBundle = join(minimalDir, 'minimal-webhook.mjs');
  await build({ entryPoints: [new URL('minimal-webhook.ts', import.meta.url).pathname], bundle: true, platform: 'node', format: 'esm',
    target: 'node20', outfile: minimalBundle, logLevel: 'warning' });
  const minimalPort = await freePort();
  // BENCH_NODE_FLAGS (a look inside, e.g. --cpu-prof) apply to both webhooks, so that their profiles compare.
  const extraFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  minimal = spawn(process.execPath, [...product.nodeFlags, ...extraFlags, minimalBundle, String(minimalPort), bench.certs.certFile, bench.certs.keyFile, bench.webhook.host],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', NODE_OPTIONS: product.nodeOptions } });
  const started = minimal;
  process.on('exit', () => started.kill('SIGKILL'));
  let said = '';
  started.stdout?.on('data', (chunk: Buffer) => { said += chunk.toString(); });
  await waitFor(() => said.includes('listening'), { timeoutMs: 20_000, description: 'the minimal webhook listens' });

  await bench.register('shortcut-webhook', `https://${bench.webhook.host}:${product.port}/mutate/endpointslices`, 'product');
  await bench.register('shortcut-webhook-review', `https://${bench.webhook.host}:${reviewOnly.port}/mutate/endpointslices`, 'review');
  await bench.register('minimal-webhook', `https://${bench.webhook.host}:${minimalPort}/mutate`, 'minimal');

  const client = rawClient(bench.cp, 1);
  const addresses = (version: number) => Array.from({ length: ENDPOINTS }, (_, k) =>
    [k % 2 === 0 ? `10.63.${k}.${10 + k}` : k === ENDPOINTS - 1 ? `10.200.250.${version % 200}` : `10.200.${k}.${10 + k}`]);
  const versions: Record<Mode, number> = { product: 0, review: 0, minimal: 0, none: 0 };
  /** One apply of the next version of `mode`'s slice; milliseconds, and the stored addresses for a check. */
  const apply = async (mode: Mode): Promise<{ ms: number; text: string }> => {
    const slice = sliceObject({ name: `writepath-${mode}`, destination: 'cluster2', addresses: addresses(++versions[mode]) });
    const metadata = slice.metadata as { labels: Record<string, string>; resourceVersion?: string };
    delete metadata.resourceVersion;
    metadata.labels['bench.liqo.io/path'] = mode;
    // The product's healing watch reads every reflected slice and heals one no webhook rewrote: the unreviewed slice
    // is no reflected one, or its heals (paced, so spilling into the other blocks) would add to the product's CPU.
    // The other modes' slices are in step, and their events fall in their own blocks, outside the product's figure.
    if (mode === 'none') delete metadata.labels[MANAGED_BY_LABEL];
    const body = JSON.stringify(slice);
    const path = `/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices/writepath-${mode}?fieldManager=${LIQO_MANAGER}&force=true`;
    const started = performance.now();
    const answer = await client.send('PATCH', path, body, 'application/apply-patch+yaml');
    const ms = performance.now() - started;
    if (answer.status >= 300) throw new Error(`apply ${mode}: HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
    return { ms, text: answer.text };
  };
  // Each path does what it is meant to: rewritten by both webhooks alike, left alone without one.
  const stored = await Promise.all(MODES.map(async (mode) => (await apply(mode)).text));
  const firstAddress = (text: string) => (JSON.parse(text) as { endpoints: { addresses: string[] }[] }).endpoints[0]?.addresses[0];
  const seen = stored.map(firstAddress);
  if (seen.join() !== '10.61.0.10,10.61.0.10,10.61.0.10,10.63.0.10') throw new Error(`the four paths stored ${seen.join()}`);
  const annotations = stored.map((text) => JSON.stringify((JSON.parse(text) as { metadata: { annotations?: unknown } }).metadata.annotations));
  if (annotations[0] !== annotations[2]) progress(`writepath: note, the webhooks wrote different annotations: ${annotations[0]} / ${annotations[2]}`);

  progress(`writepath: warm-up, ${WARMUP} applies per path`);
  for (let i = 0; i < WARMUP; i++) for (const mode of MODES) await apply(mode);
  // What each webhook process spends doing nothing (timers, leases, watches kept open): it accrues during every apply
  // too, more on a slow API server, so the figures below are also given net of it.
  const pidOf = { product: product.child.pid, review: reviewOnly.child.pid, minimal: minimal.pid };
  progress(`writepath: ${IDLE_SECONDS} s at rest`);
  const restStarted = { at: performance.now(), product: cpuSeconds(pidOf.product), review: cpuSeconds(pidOf.review), minimal: cpuSeconds(pidOf.minimal) };
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const restSeconds = (performance.now() - restStarted.at) / 1000;
  const idleMsPerSecond = (webhook: 'product' | 'review' | 'minimal') => (cpuSeconds(pidOf[webhook]) - restStarted[webhook]) * 1000 / restSeconds;
  const idle = { product: idleMsPerSecond('product'), review: idleMsPerSecond('review'), minimal: idleMsPerSecond('minimal') };
  const samples: Record<Mode, number[]> = { product: [], review: [], minimal: [], none: [] };
  // CPU (user + system) each webhook process spends on its blocks: what a review costs it, whatever the machine's
  // load does to the latencies (the other core is shared with the API server, etcd and this load generator).
  const cpu = { product: 0, review: 0, minimal: 0 };
  progress(`writepath: ${BLOCKS} blocks of ${BLOCK} applies per path, interleaved`);
  for (let block = 0; block < BLOCKS; block++) {
    const order = MODES.map((_, k) => MODES[(block + k) % MODES.length] as Mode);
    for (const mode of order) {
      const before = mode === 'none' ? 0 : cpuSeconds(pidOf[mode]);
      for (let i = 0; i < BLOCK; i++) samples[mode].push((await apply(mode)).ms);
      if (mode !== 'none') cpu[mode] += cpuSeconds(pidOf[mode]) - before;
    }
  }
  client.close();
  // How the product's healing watch handled the versions it read: each of its own applies should be passed over.
  const metricsText = await (await fetch(`http://${bench.webhook.host}:${product.opsPort}/metrics`)).text();
  const healingEvents = (handling: string) => Number(metricsText.split('\n')
    .find((line) => line.startsWith('shortcut_webhook_healing_events_total{') && line.includes('resource="endpointslices"') && line.includes(`handling="${handling}"`))
    ?.split(' ').at(-1) ?? Number.NaN);
  // A webhook's CPU per apply less what it would have spent at rest over its blocks' time (the applies' latencies).
  const busyMsPerApply = (webhook: 'product' | 'review' | 'minimal') => {
    const wallSeconds = samples[webhook].reduce((sum, ms) => sum + ms, 0) / 1000;
    return Math.max(0, cpu[webhook] * 1000 - idle[webhook] * wallSeconds) / samples[webhook].length;
  };
  const stats = (mode: Mode) => ({ p50Ms: round(percentile(samples[mode], 50), 3), p99Ms: round(percentile(samples[mode], 99), 3), samples: samples[mode].length });
  const [p, r, m, z] = MODES.map(stats) as [ReturnType<typeof stats>, ReturnType<typeof stats>, ReturnType<typeof stats>, ReturnType<typeof stats>];
  console.log(JSON.stringify({
    endpoints: ENDPOINTS, webhookHost: bench.webhook.host, protocol: bench.webhook.protocol, blocks: BLOCKS, block: BLOCK, nodeFlags: product.nodeFlags, nodeOptions: product.nodeOptions,
    product: p, review: r, minimal: m, none: z,
    p50Ratio: round(p.p50Ms / m.p50Ms, 3), p99Ratio: round(p.p99Ms / m.p99Ms, 3),
    p50AddedRatio: round((p.p50Ms - z.p50Ms) / (m.p50Ms - z.p50Ms), 3), p99AddedRatio: round((p.p99Ms - z.p99Ms) / (m.p99Ms - z.p99Ms), 3),
    productCpuMsPerApply: round(cpu.product * 1000 / p.samples, 3), reviewCpuMsPerApply: round(cpu.review * 1000 / r.samples, 3),
    healingPassedOver: healingEvents('passed-over'), healingPlanned: healingEvents('planned'),
    minimalCpuMsPerApply: round(cpu.minimal * 1000 / m.samples, 3), cpuRatio: round((cpu.product / p.samples) / (Math.max(cpu.minimal, CPU_TICK_SECONDS) / m.samples), 3),
    idleSeconds: round(restSeconds, 1), productIdleCpuMsPerSecond: round(idle.product, 2), reviewIdleCpuMsPerSecond: round(idle.review, 2), minimalIdleCpuMsPerSecond: round(idle.minimal, 2),
    productBusyCpuMsPerApply: round(busyMsPerApply('product'), 3), reviewBusyCpuMsPerApply: round(busyMsPerApply('review'), 3), minimalBusyCpuMsPerApply: round(busyMsPerApply('minimal'), 3),
  }));
} finally {
  // The minimal webhook's pipe would keep this process alive after its answer is printed. With node flags it ends on
  // SIGTERM, so that a profile asked for is written.
  if (minimal !== undefined && minimal.exitCode === null) {
    const exited = new Promise((resolve) => minimal?.once('exit', resolve));
    minimal.kill((process.env.BENCH_NODE_FLAGS ?? '').trim() === '' ? 'SIGKILL' : 'SIGTERM');
    await exited;
  }
  await bench.close();
  rmSync(minimalDir, { recursive: true, force: true });
}
