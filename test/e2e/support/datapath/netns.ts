// Network namespaces for the data-path tests, named `swdp-<run>-<name>`: created, used and removed by one test run,
// nothing in the root namespace (veth pairs are created inside the namespaces, never moved out of the root one).
// Everything a run made goes on `destroy()`, and on the process's exit even when a test throws or is interrupted; a
// run first removes the leftovers of earlier runs whose process is gone (a crash, a SIGKILL).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnLogged, stopChild } from '../control-plane.ts';

const run = promisify(execFile);
/** Every namespace and folder of these tests starts with it; nothing else on the machine may. */
export const PREFIX = 'swdp-';

export interface Skip {
  readonly reason: string;
}

/** Why the data path cannot be laid out here, or undefined when it can (root, /dev/net/tun, `ip` and `nft`). */
export function dataPathUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: network namespaces, veth pairs and nftables need root';
  if (!existsSync('/dev/net/tun')) return 'no /dev/net/tun: wireguard-go needs a TUN device';
  for (const [tool, args] of [['ip', ['-V']], ['nft', ['--version']]] as const) {
    try {
      execFileSync(tool, args, { stdio: 'ignore' });
    } catch {
      return `\`${tool}\` is missing: install iproute2 and nftables (scripts/install-net-tools.sh)`;
    }
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function listNamespaces(): string[] {
  const out = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return out.split('\n').map((line) => line.split(' ')[0] ?? '').filter((name) => name !== '');
}

/** Kills what runs in `name` and deletes it; synchronous, for the exit hook too. */
function removeNamespaceSync(name: string): void {
  try {
    const pids = execFileSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).split('\n').map(Number).filter((pid) => pid > 0);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  } catch {
    // Not there any more.
  }
  try {
    execFileSync('ip', ['netns', 'delete', name], { stdio: 'ignore' });
  } catch {
    // Not there any more.
  }
}

/** The run tag of a namespace or folder of ours, and the pid it encodes. */
function ownerOf(name: string): number | undefined {
  const match = /^swdp-([0-9a-z]+)-/.exec(name);
  return match === null ? undefined : Number.parseInt(match[1] ?? '', 36);
}

/** Removes namespaces and folders of earlier runs whose process is gone; a run still going is left alone. */
export function removeLeftovers(): string[] {
  const removed: string[] = [];
  for (const name of listNamespaces()) {
    if (!name.startsWith(PREFIX)) continue;
    const owner = ownerOf(name);
    if (owner !== undefined && owner !== process.pid && alive(owner)) continue;
    removeNamespaceSync(name);
    removed.push(name);
  }
  for (const name of readdirSync(tmpdir())) {
    const owner = name.startsWith(PREFIX) ? ownerOf(name) : undefined;
    if (owner === undefined || (owner !== process.pid && alive(owner))) continue;
    if (owner === process.pid && [...labs].some((lab) => lab.dir === join(tmpdir(), name))) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
    removed.push(join(tmpdir(), name));
  }
  return removed;
}

/** Removes a run's namespaces (killing what still runs in them) and its folder: `sh -c REAP reap DIR NS...`. */
const REAP = 'dir=$1; shift; for ns; do for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done; '
  + 'ip netns delete "$ns" 2>/dev/null; done; rm -rf "$dir"';

const labs = new Set<Lab>();
let hookInstalled = false;
function installExitHook(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  // control-plane.ts kills the process groups it started on exit and on SIGINT/SIGTERM (exit 130); the namespaces
  // go here, after them ('exit' listeners run in order of registration, and spawnLogged registered first).
  process.on('exit', () => {
    for (const lab of labs) lab.destroySync();
  });
}

export class Lab {
  /** This run's tag: the pid in base 36, so that a later run can tell whether its owner is still alive. */
  readonly tag = process.pid.toString(36);
  readonly dir: string;
  private readonly namespaces: string[] = [];
  private readonly children: ChildProcess[] = [];
  private readonly cleanups: (() => Promise<void>)[] = [];
  private destroyed = false;

  constructor() {
    this.dir = join(tmpdir(), `${PREFIX}${this.tag}-${Date.now().toString(36)}`);
    mkdirSync(this.dir, { recursive: true });
    labs.add(this);
    installExitHook();
  }

  /** The full name of this run's namespace `short`. */
  ns(short: string): string {
    return `${PREFIX}${this.tag}-${short}`;
  }

  /** A namespace with loopback up, forwarding on and reverse-path filtering off (gateways and nodes route). */
  async add(short: string): Promise<string> {
    const name = this.ns(short);
    await run('ip', ['netns', 'add', name]);
    this.namespaces.push(name);
    await this.ip(name, ['link', 'set', 'lo', 'up']);
    await this.exec(name, ['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1', 'net.ipv4.conf.all.rp_filter=0', 'net.ipv4.conf.default.rp_filter=0']);
    return name;
  }

  /** `ip -n ns ...` */
  async ip(ns: string, args: readonly string[]): Promise<string> {
    try {
      return (await run('ip', ['-n', ns, ...args])).stdout;
    } catch (error) {
      throw new Error(`ip -n ${ns} ${args.join(' ')}: ${(error as { stderr?: string }).stderr ?? String(error)}`);
    }
  }

  /** Runs a command inside `ns` and returns its stdout. */
  async exec(ns: string, args: readonly string[], input?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = execFile('ip', ['netns', 'exec', ns, ...args], { encoding: 'utf8', maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`in ${ns}: ${args.join(' ')}: ${stderr || error.message}`));
        else resolve(stdout);
      });
      if (input !== undefined) child.stdin?.end(input);
    });
  }

  /** A veth pair from `a` (interface `ifA`) to `b` (interface `ifB`), created inside `a`, both ends up. */
  async veth(a: string, ifA: string, b: string, ifB: string): Promise<void> {
    await this.ip(a, ['link', 'add', ifA, 'type', 'veth', 'peer', 'name', ifB, 'netns', b]);
    await this.ip(a, ['link', 'set', ifA, 'up']);
    await this.ip(b, ['link', 'set', ifB, 'up']);
  }

  /** Starts a long-running program inside `ns`, in a process group of its own, its output in `logFile`. */
  spawn(ns: string, argv: readonly string[], logFile: string, wrap: readonly string[] = []): ChildProcess {
    const [first, ...rest] = [...wrap, 'ip', 'netns', 'exec', ns, ...argv];
    const child = spawnLogged(first ?? 'ip', rest, logFile);
    this.children.push(child);
    return child;
  }

  /** Work for `destroy()` before the processes stop (closing the test's own servers). */
  onDestroy(cleanup: () => Promise<void>): void {
    this.cleanups.push(cleanup);
  }

  /** A process started elsewhere (in its own process group) that goes with this run. */
  adopt(child: ChildProcess): void {
    this.children.push(child);
  }

  async stop(child: ChildProcess): Promise<void> {
    await stopChild(child);
  }

  /** Stops every program, then removes every namespace (their links go with them) and the folder. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    for (const cleanup of this.cleanups.splice(0)) await cleanup().catch(() => undefined);
    await Promise.all(this.children.map((child) => stopChild(child)));
    this.destroyed = true;
    this.killChildren();
    await run('sh', ['-c', REAP, 'reap', this.dir, ...[...this.namespaces].reverse()]);
    labs.delete(this);
  }

  /**
   * For the exit hook: kills the processes, then hands the namespaces and the folder to a detached shell that removes
   * them even if this process is killed right after (a test runner may follow a SIGTERM with a SIGKILL).
   */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.killChildren();
    const reaper = spawn('sh', ['-c', REAP, 'reap', this.dir, ...[...this.namespaces].reverse()], { detached: true, stdio: 'ignore' });
    reaper.unref();
    labs.delete(this);
  }

  private killChildren(): void {
    for (const child of this.children) {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
  }

  /** The pids of the processes this run started (for the test's own check of its cleanup). */
  pids(): number[] {
    return this.children.flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  }

  /** Names of this run's namespaces that still exist (for the test's own check of its cleanup). */
  static existing(tag: string): string[] {
    return listNamespaces().filter((name) => name.startsWith(`${PREFIX}${tag}-`));
  }
}
