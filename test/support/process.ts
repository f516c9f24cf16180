// The real executable as a child process: what the kubelet runs, signals included.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { errorMessage } from '../../src/util/errors.ts';
import { waitFor } from './wait-for.ts';

const bin = new URL('../../bin/shortcut-webhook.js', import.meta.url).pathname;

export interface RunningServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: string[];
  readonly webhookPort: number;
  readonly opsPort: number;
  readonly exited: Promise<number | null>;
}

interface Serving { webhook?: { port: number }[]; ops?: { port: number }[]; msg?: string }

export async function startServer(args: readonly string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<RunningServer> {
  return launch(['--host', '127.0.0.1', '--port', '0', '--ops-port', '0', ...args], env, cwd);
}

/** As the Deployment runs it: no --host, so on every interface. */
export async function startServerOnEveryInterface(args: readonly string[]): Promise<RunningServer> {
  return launch(['--port', '0', '--ops-port', '0', ...args], {});
}

/** A child's stdout as whole lines, stderr chunks marked as such, and its exit code once it exits. */
export function collectOutput(child: ChildProcessWithoutNullStreams): { lines: string[]; exited: Promise<number | null> } {
  const lines: string[] = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.on('data', (chunk: Buffer) => lines.push(`stderr: ${chunk.toString()}`));
  // 'close', not 'exit': at 'exit' the child's last lines may still be unread in the pipe.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { lines, exited };
}

async function launch(args: readonly string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<RunningServer> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    ...(cwd === undefined ? {} : { cwd }),
  });
  const { lines, exited } = collectOutput(child);
  let exitCode: number | null | undefined;
  void exited.then((code) => { exitCode = code; });
  const serving = await waitFor((): Serving | undefined => {
    const line = lines.find((l) => l.includes('"msg":"serving"'));
    if (line !== undefined) return JSON.parse(line) as Serving;
    return exitCode === undefined ? undefined : {};
  }, { timeoutMs: 20_000, description: 'the server says it is serving' }).catch((error: unknown) => {
    // The caller never gets the child to stop: left running, it would keep the test file's process alive for good.
    child.kill('SIGKILL');
    throw new Error(`${errorMessage(error)}; it printed:\n${lines.join('\n')}`, { cause: error });
  });
  if (serving.msg === undefined) throw new Error(`server exited early with code ${exitCode}:\n${lines.join('\n')}`);
  return { child, lines, exited, webhookPort: serving.webhook?.[0]?.port ?? 0, opsPort: serving.ops?.[0]?.port ?? 0 };
}

/** The exit code, or a failure if the process is still running after `ms`: a hung shutdown fails the test. */
export function exitWithin(server: RunningServer, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`still running ${ms} ms after the signal`)), ms);
  });
  return Promise.race([server.exited, late]).finally(() => clearTimeout(timer));
}
