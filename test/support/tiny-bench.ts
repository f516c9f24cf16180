// Runs `npm run bench -- <sections>` at BENCH_TINY=1 (every section at a size that only shows it runs) and returns
// what it wrote to its results file. The suite's guard against a bench section that no longer runs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Section } from '../../bench/sections.ts';

const root = new URL('../..', import.meta.url).pathname;

export async function runTinyBench(sections: readonly Section[]): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-tiny-bench-'));
  const resultsFile = join(dir, 'results.json');
  try {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...sections], {
        cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BENCH_TINY: '1', BENCH_RESULTS: resultsFile },
      });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      child.stderr.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      child.on('error', reject);
      child.on('exit', (exitCode) => resolve({ code: exitCode, output: text }));
    });
    if (code !== 0) throw new Error(`npm run bench -- ${sections.join(' ')} (BENCH_TINY=1) exited ${code}:\n${output.slice(-4000)}`);
    const parsed: unknown = JSON.parse(readFileSync(resultsFile, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`results are not an object: ${String(parsed)}`);
    return Object.fromEntries(Object.entries(parsed));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every number in `value`, with its path; JSON writes NaN and Infinity as null, which is listed as such. */
export function numbersIn(value: unknown, path = ''): [string, number | null][] {
  if (value === null) return [[path, null]];
  if (typeof value === 'number') return [[path, value]];
  if (typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => numbersIn(item, `${path}.${key}`));
}
