// Builds the end-to-end tests' control plane once: kube-apiserver (k8s.io/kubernetes, as pinned in go.mod/go.sum)
// and etcd (./etcd, go.etcd.io/etcd/server/v3 embedded). The binaries go to a cache outside the repository, keyed by
// a hash of everything the build reads, so a second run and a fresh clone on the same machine reuse them; `go build`
// itself reuses GOCACHE and GOMODCACHE. Nothing is downloaded except through the Go module proxy.
//
//   npm run build:controlplane      (node --import tsx test/e2e/controlplane/build.ts) prints the folder holding them
//
// SHORTCUT_WEBHOOK_CONTROLPLANE_DIR=<dir> puts (or finds) the binaries there instead of the hashed cache folder.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const moduleDir = fileURLToPath(new URL('.', import.meta.url));
const inputs = ['go.mod', 'go.sum', 'etcd/main.go'];
/** Bump when the way of building changes (flags, names): the cache key changes with it. */
const RECIPE = 'kube-apiserver+etcd, -trimpath -s -w, version stamped, 1';
const STAMP = 'complete';

/** The Kubernetes release the module pins, read from go.mod. */
export function kubernetesVersion(): string {
  const match = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(readFileSync(join(moduleDir, 'go.mod'), 'utf8'));
  if (match === null) throw new Error('go.mod does not require k8s.io/kubernetes');
  return match[1] ?? '';
}

/** Where the binaries of this exact go.mod/go.sum/launcher live. */
export function controlPlaneDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SHORTCUT_WEBHOOK_CONTROLPLANE_DIR) return env.SHORTCUT_WEBHOOK_CONTROLPLANE_DIR;
  const hash = createHash('sha256').update(RECIPE);
  for (const file of inputs) hash.update(`${file}\0`).update(readFileSync(join(moduleDir, file))).update('\0');
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'shortcut-webhook', 'controlplane', hash.digest('hex').slice(0, 16));
}

/** True when `go` runs; the e2e suite is skipped outside CI without it. */
export function goAvailable(): boolean {
  const result = spawnSync('go', ['version'], { stdio: 'ignore' });
  return result.status === 0;
}

export function builtIn(dir: string): boolean {
  return existsSync(join(dir, STAMP)) && existsSync(join(dir, 'kube-apiserver')) && existsSync(join(dir, 'etcd'));
}

function go(args: readonly string[]): void {
  if (!goAvailable()) throw new Error('Go is not installed (no `go` on PATH): it is needed once, to build kube-apiserver and etcd for test/e2e');
  const result = spawnSync('go', args, {
    cwd: moduleDir,
    stdio: ['ignore', 'inherit', 'inherit'],
    // GOTOOLCHAIN=local: use the installed Go, never download another one. -mod=readonly: go.sum is the pin.
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly -buildvcs=false', CGO_ENABLED: '0' },
  });
  if (result.status !== 0) throw new Error(`go ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

export interface Built {
  readonly dir: string;
  /** False when the cache already held this build. */
  readonly built: boolean;
  readonly seconds: number;
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
function withLock<T>(dir: string, log: (line: string) => void, work: () => T): T {
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
      if (!said) log(`waiting for another build of the control plane (pid ${owner})`);
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
export function buildControlPlane(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Built {
  const dir = controlPlaneDir();
  if (builtIn(dir)) return { dir, built: false, seconds: 0 };
  return withLock(dir, log, () => (builtIn(dir) ? { dir, built: false, seconds: 0 } : build(dir, log)));
}

function build(dir: string, log: (line: string) => void): Built {
  const started = Date.now();
  const version = kubernetesVersion();
  const [, major, minor] = /^v(\d+)\.(\d+)/.exec(version) ?? [];
  log(`building kube-apiserver ${version} and etcd into ${dir} (first time only; minutes on a cold Go cache)`);
  // A private folder per build, renamed into place at the end: two concurrent builds never see half a directory.
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    const versionFlags = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
      `-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`,
    ]);
    go(['build', '-trimpath', `-ldflags=-s -w ${versionFlags.join(' ')}`, '-o', join(staging, 'kube-apiserver'), 'k8s.io/kubernetes/cmd/kube-apiserver']);
    go(['build', '-trimpath', '-ldflags=-s -w', '-o', join(staging, 'etcd'), './etcd']);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    writeFileSync(join(staging, STAMP), `${version} built in ${seconds}s\n`);
    if (builtIn(dir)) {
      rmSync(staging, { recursive: true, force: true });
    } else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    }
    log(`built in ${seconds}s`);
    return { dir, built: true, seconds };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { dir } = buildControlPlane();
  process.stdout.write(`${dir}\n`);
}
