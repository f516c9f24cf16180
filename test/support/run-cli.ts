// Runs the command line in-process, exactly as bin/shortcut-webhook.js does, with captured streams.
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../src/main.ts';

export interface CliRun { readonly code: number; readonly stdout: string; readonly stderr: string }

export async function runCli(argv: readonly string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk));
  stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]);
  const code = await main(argv, { stdout, stderr, stdin }, options.env ?? {});
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}
