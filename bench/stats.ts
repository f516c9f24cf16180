// Small statistics and process helpers shared by the benchmark sections. Not product code.
import { spawn } from 'node:child_process';

/** The middle value, or the mean of the two middle values of an even count. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Nearest-rank percentile: the smallest sample with at least `p` percent of the samples at or below it. */
export function percentile(values: readonly number[] | Float64Array, p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}


/**
 * BENCH_TINY=1: every section at a size that only shows it runs to its JSON (test/bench.test.ts and
 * test/e2e/bench.test.ts run them so in the suite, so a section that no longer runs fails CI). Its figures mean nothing.
 */
export const TINY = process.env.BENCH_TINY === '1';

/** `full`, or `tiny` under BENCH_TINY=1. */
export function sized(full: number, tiny: number): number {
  return TINY ? tiny : full;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `node [flags] --import tsx bench/<file> args…` (a `.mjs` path runs as it is, without tsx) and returns the JSON
 * it prints on its last stdout line. Each section runs in a fresh process, so one section's heap and JIT state never
 * colour the next one's numbers.
 */
export function runSection<T>(file: string, args: readonly string[] = [], flags: readonly string[] = []): Promise<T> {
  const script = file.endsWith('.mjs') ? file : new URL(file, import.meta.url).pathname;
  const loader = file.endsWith('.mjs') ? [] : ['--import', 'tsx'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, ...loader, script, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'production' },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    child.on('error', reject);
    child.on('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0) { reject(new Error(`${file} exited with ${code}:\n${out}`)); return; }
      try {
        // Our own child, printing the shape its section file declares: not a trust boundary.
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${file} printed no JSON result:\n${out}`));
      }
    });
  });
}

/** Progress goes to stderr so that stdout carries only the section's JSON result. */
export function progress(message: string): void {
  process.stderr.write(`  ${message}\n`);
}

