// The process's entry: argv to one command of commands/ (a file each), each command's modules loaded only when it runs. `rewrite` and every
// `--help` never load the Kubernetes client, the HTTP server or the metrics registry.
import { EXIT_OK, EXIT_USAGE, parseCommand, type Io } from './cli.ts';

/**
 * `rewrite ... | head`: the reader has what it wanted and closed the pipe. Like a Unix tool, stop quietly instead of
 * crashing on the next write with a stack trace; any other error of stdout stays an error.
 */
function stopWhenReaderCloses(stdout: NodeJS.WriteStream): void {
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT_OK);
  });
}

export async function main(argv: readonly string[], io: Io = process, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const command = parseCommand(argv, env);
  // Not for serve: its stdout is the log, and a server whose log is gone says so by failing, not by exiting 0.
  if (io === process && command.kind !== 'serve') stopWhenReaderCloses(process.stdout);
  switch (command.kind) {
    case 'help':
      io.stdout.write(command.text);
      return EXIT_OK;
    case 'usage-error':
      io.stderr.write(`shortcut-webhook${command.command === undefined ? '' : ` ${command.command}`}: ${command.message}\n\n${command.hint}`);
      return EXIT_USAGE;
    case 'version':
      return (await import('./commands/version.ts')).runVersion(command.output, io);
    case 'rewrite':
      for (const warning of command.warnings) io.stderr.write(`shortcut-webhook: warning: ${warning}\n`);
      return (await import('./commands/rewrite.ts')).runRewrite(command.config, io);
    case 'explain':
      for (const warning of command.warnings) io.stderr.write(`shortcut-webhook: warning: ${warning}\n`);
      return (await import('./commands/explain.ts')).runExplain(command.config, io, env);
    case 'status':
      for (const warning of command.warnings) io.stderr.write(`shortcut-webhook: warning: ${warning}\n`);
      return (await import('./commands/status.ts')).runStatus(command.config, io, env);
    case 'serve':
      for (const warning of command.warnings) io.stderr.write(`shortcut-webhook: warning: ${warning}\n`);
      return (await import('./commands/serve.ts')).serve(command.config, env);
  }
}
