// Builds a Go program of test/e2e once and keeps it in a cache outside the repository, keyed by a hash of everything
// the build reads (its module's go.mod, go.sum and sources, and a recipe string naming how it is built), so a second
// run and a fresh clone on the same machine reuse it; `go build` itself reuses GOCACHE and GOMODCACHE. Nothing is
// downloaded except through the Go module proxy. Used by the control plane (controlplane/build.ts) and Liqo's writer
// (liqo-writer/build.ts).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

const STAMP = 'complete';

export interface GoProgram {
  /** What is built, for log lines. */
  readonly title: string;
  /** The folder of the cache (under ~/.cache/shortcut-webhook) and its override variable's value, if set. */
  readonly cacheName: string;
  readonly overrideDir: string | undefined;
  /** The Go module's folder and the files of it the build reads. */
  readonly moduleDir: string;
  readonly inputs: readonly string[];
  /** Changes the cache key when the way of building changes (flags, names). */
  readonly recipe: string;
  /** The files a finished build holds. */
  readonly outputs: readonly string[];
  /** Fills `staging` with the outputs; `go` runs the go command in the module folder, `goOutput` returns its stdout. */
  build(staging: string, tools: GoTools): void;
}

export interface GoTools {
  go(args: readonly string[]): void;
  goOutput(args: readonly string[]): string;
}

export interface Built {
  readonly dir: string;
  /** False when the cache already held this build. */
  readonly built: boolean;
  readonly seconds: number;
}

/** True when `go` runs; the e2e suite is skipped outside CI without it. */
export function goAvailable(): boolean {
  return spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
}

/** Where the build of this exact module state lives. */
export function cacheDirOf(program: GoProgram, env: NodeJS.ProcessEnv = process.env): string {
  if (program.overrideDir) return program.overrideDir;
  const hash = createHash('sha256').update(program.recipe);
  for (const file of program.inputs) hash.update(`${file}\0`).update(readFileSync(join(program.moduleDir, file))).update('\0');
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'shortcut-webhook', program.cacheName, hash.digest('hex').slice(0, 16));
}

export function builtIn(program: GoProgram, dir: string): boolean {
  return existsSync(join(dir, STAMP)) && program.outputs.every((output) => existsSync(join(dir, output)));
}

function goTools(program: GoProgram): GoTools {
  // GOTOOLCHAIN=local: use the installed Go, never download another one. -mod=readonly: go.sum is the pin.
  const env = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly -buildvcs=false', CGO_ENABLED: '0' };
  const run = (args: readonly string[], stdout: 'inherit' | 'pipe') => {
    if (!goAvailable()) throw new Error(`Go is not installed (no \`go\` on PATH): it is needed once, to build ${program.title} for test/e2e`);
    const result = spawnSync('go', args, { cwd: program.moduleDir, stdio: ['ignore', stdout, 'inherit'], env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`go ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    return result.stdout ?? '';
  };
  return { go: (args) => { run(args, 'inherit'); }, goOutput: (args) => run(args, 'pipe') };
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * One build at a time per cache folder: `npm test` runs the e2e files side by side, and two cold builds at once would
 * each compile everything. The lock is a folder holding the builder's pid; a lock whose process is gone is taken over.
 */
function withLock<T>(dir: string, title: string, log: (line: string) => void, work: () => T): T {
  const lock = `${dir}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  let said = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let owner = Number.NaN;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        // Being created right now: look again.
      }
      if (Number.isInteger(owner) && !alive(owner)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!said) log(`waiting for another build of ${title} (pid ${owner})`);
      said = true;
      sleepSync(1000);
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds into the cache unless it is already there; returns the folder and whether this call built it. */
export function buildCached(program: GoProgram, log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Built {
  const dir = cacheDirOf(program);
  if (builtIn(program, dir)) return { dir, built: false, seconds: 0 };
  return withLock(dir, program.title, log, () => (builtIn(program, dir) ? { dir, built: false, seconds: 0 } : build(program, dir, log)));
}

function build(program: GoProgram, dir: string, log: (line: string) => void): Built {
  const started = Date.now();
  log(`building ${program.title} into ${dir} (first time only; minutes on a cold Go cache)`);
  // A private folder per build, renamed into place at the end: two concurrent builds never see half a directory.
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    program.build(staging, goTools(program));
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    writeFileSync(join(staging, STAMP), `${program.title} built in ${seconds}s\n`);
    if (builtIn(program, dir)) {
      rmSync(staging, { recursive: true, force: true });
    } else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    }
    log(`built ${program.title} in ${seconds}s`);
    return { dir, built: true, seconds };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}
