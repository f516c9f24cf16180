// Section "admission": the real webhook (`shortcut-webhook serve` as the image runs it: the bundle made by the
// Dockerfile's own build step, started with its ENTRYPOINT's node flags; its own process, log level warn) against a bare
// node:https server (its own process), both answering the same UPDATE review of a 100-endpoint slice, half of it
// rewritten. The load generator is this process: 4 workers over 4 keep-alive HTTP/1.1 connections, or 4 workers
// multiplexed on one HTTP/2 session. Rounds alternate webhook https1, bare https1, webhook http2 (7 rounds of 3 s
// each, after a warm-up of 4 s each). The machine is shared and noisy, so rps is the median of the rounds and the ratio
// the median of the per-round ratios (each webhook run against the bare run right after it), and latency percentiles
// the median of each round's (the p99 of all rounds pooled is printed too). Prints one JSON line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildImageBundle, entrypointNodeFlags } from '../test/deploy/support/dockerfile.ts';
import { makeCerts } from '../test/support/certs.ts';
import { admissionReview, exampleFccObject } from './fixtures.ts';
import { client, load, type LoadResult, type Protocol, type Target } from './load.ts';
import { freePort } from '../test/support/free-port.ts';
import { median, percentile, progress, round, sized, sleep } from './stats.ts';

const WORKERS = 4;
// Odd, so the median is a round that ran, not the mean of two.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? sized(7, 1));
const SECONDS = Number(process.env.BENCH_SECONDS ?? sized(3, 0.2));
// With 2 s, the webhook's first round was its slowest in every one of six runs (ratio 0.62 to 0.72 against 0.73
// to 0.78 after): the JIT had not settled with both protocols yet.
const WARMUP_SECONDS = sized(4, 0.2);

const root = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'shortcut-bench-'));
const certs = makeCerts(join(dir, 'certs'));
const shortcuts = join(dir, 'shortcuts.json');
writeFileSync(shortcuts, JSON.stringify(exampleFccObject()));
const body = Buffer.from(JSON.stringify(admissionReview()));
// Inside the checkout, so that the bundle's packages resolve from node_modules.
const bundleDir = join(root, '.tmp', `bench-${process.pid}`);
mkdirSync(bundleDir, { recursive: true });
const bundle = join(bundleDir, 'shortcut-webhook.mjs');
const built = buildImageBundle(bundle);
if (built.status !== 0) throw new Error(`the Dockerfile's build step failed: ${built.stderr}`);
const nodeFlags = entrypointNodeFlags();

function start(args: readonly string[]): { child: ChildProcess; output: string[] } {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  return { child, output };
}

async function until(check: () => Promise<boolean> | boolean, what: string, output: string[]): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`${what} did not happen in 20 s:\n${output.join('')}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function rssMB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kB / 1024;
}

const [webhookPort, opsPort, barePort] = [await freePort(), await freePort(), await freePort()];
const webhook = start([
  ...nodeFlags, bundle, 'serve', '--host', '127.0.0.1', '--port', String(webhookPort), '--ops-port', String(opsPort),
  '--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--shortcuts', shortcuts, '--cluster-id', 'cluster2',
  '--log-level', 'warn',
]);
let bare: ReturnType<typeof start> | undefined;
// Servers must not outlive the bench, however it ends (Ctrl-C, a closed pipe, an exception).
process.on('exit', () => {
  webhook.child.kill();
  bare?.child.kill();
  rmSync(dir, { recursive: true, force: true });
  rmSync(bundleDir, { recursive: true, force: true });
});
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));
try {
  await until(async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined))?.status === 200, 'webhook ready', webhook.output);
  const path = '/mutate/endpointslices?timeout=10s';
  const webhookTarget: Target = { url: `https://127.0.0.1:${webhookPort}${path}`, ca: certs.ca, body };
  const bareTarget: Target = { url: `https://127.0.0.1:${barePort}${path}`, ca: certs.ca, body };

  // The webhook's real answer becomes the bare server's fixed one: both move the same bytes.
  const probe = await client(webhookTarget, 'https1', 1);
  const first = await probe.send(true);
  probe.close();
  const answer: unknown = JSON.parse(first.body);
  const patch = typeof answer === 'object' && answer !== null && 'response' in answer
    && typeof answer.response === 'object' && answer.response !== null && 'patch' in answer.response ? answer.response.patch : undefined;
  if (first.status !== 200 || typeof patch !== 'string') throw new Error(`the webhook did not patch the review: ${first.status} ${first.body}`);
  const operations: unknown = JSON.parse(Buffer.from(patch, 'base64').toString());
  const answerFile = join(dir, 'answer.json');
  writeFileSync(answerFile, first.body);

  bare = start(['--import', 'tsx', 'bench/bare-server.ts', String(barePort), certs.certFile, certs.keyFile, answerFile]);
  const bareOutput = bare.output;
  await until(() => bareOutput.join('').includes('listening'), 'bare server listening', bareOutput);

  type Mode = 'https1' | 'http2' | 'bareHttps';
  const modes: { mode: Mode; target: Target; protocol: Protocol }[] = [
    { mode: 'https1', target: webhookTarget, protocol: 'https1' },
    { mode: 'bareHttps', target: bareTarget, protocol: 'https1' },
    { mode: 'http2', target: webhookTarget, protocol: 'http2' },
  ];
  const runs = new Map<Mode, LoadResult[]>(modes.map(({ mode }) => [mode, []]));
  const measure = async (target: Target, protocol: Protocol, seconds: number) => {
    const connection = await client(target, protocol, WORKERS);
    try {
      return await load(connection.send, WORKERS, seconds);
    } finally {
      connection.close();
    }
  };
  progress(`admission: warm-up ${WARMUP_SECONDS} s each, then ${ROUNDS} rounds of ${modes.length} x ${SECONDS} s`);
  for (const { target, protocol } of modes) await measure(target, protocol, WARMUP_SECONDS);
  for (let r = 0; r < ROUNDS; r++) {
    for (const { mode, target, protocol } of modes) {
      const result = await measure(target, protocol, SECONDS);
      if (result.errors > 0) throw new Error(`${mode}: ${result.errors} failed requests`);
      runs.get(mode)?.push(result);
      progress(`admission: round ${r + 1} ${mode.padEnd(9)} ${result.rps.toFixed(0)} rps`);
    }
  }
  // Every figure is the median over the rounds, latency percentiles too: a round the shared machine disturbed moves
  // a pooled p99 as much as it would move a pooled rps. The pooled p99 is kept alongside.
  const summary = (mode: Mode) => {
    const results = runs.get(mode) ?? [];
    const roundP99 = results.map((result) => percentile(result.latencies, 99));
    return {
      rps: round(median(results.map((result) => result.rps)), 0),
      p50Ms: round(median(results.map((result) => percentile(result.latencies, 50))), 3),
      p99Ms: round(median(roundP99), 3),
      rounds: results.map((result) => round(result.rps, 0)),
      p99Rounds: roundP99.map((p99) => round(p99, 2)),
      p99PooledMs: round(percentile(Float64Array.from(results.flatMap((result) => [...result.latencies])), 99), 3),
      requests: results.reduce((total, result) => total + result.latencies.length, 0),
    };
  };
  const https1 = summary('https1');
  const bareHttps = summary('bareHttps');
  const bareRuns = runs.get('bareHttps') ?? [];
  const roundRatios = (runs.get('https1') ?? []).map((result, r) => result.rps / (bareRuns[r]?.rps ?? Number.NaN));
  console.log(JSON.stringify({
    https1, http2: summary('http2'), bareHttps, ratio: round(median(roundRatios), 3), roundRatios: roundRatios.map((r) => round(r, 3)),
    bodyBytes: body.length, answerBytes: first.body.length, patchOperations: Array.isArray(operations) ? operations.length : 0,
    webhookRssMB: round(rssMB(webhook.child.pid), 1), bareRssMB: round(rssMB(bare.child.pid), 1), webhookNodeFlags: nodeFlags,
  }));
} finally {
  await stop(webhook.child);
  if (bare !== undefined) await stop(bare.child);
  rmSync(dir, { recursive: true, force: true });
  rmSync(bundleDir, { recursive: true, force: true });
}
