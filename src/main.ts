// The process's entry: argv to a command, each command's modules loaded only when it runs. `rewrite` and every
// `--help` never load the Kubernetes client, the HTTP server or the metrics registry.
import { EXIT_OK, EXIT_USAGE, parseCommand, type Io } from './cli.ts';

export async function main(argv: readonly string[], io: Io = process, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const command = parseCommand(argv, env);
  switch (command.kind) {
    case 'help':
      io.stdout.write(command.text);
      return EXIT_OK;
    case 'usage-error':
      io.stderr.write(`shortcut-webhook: ${command.message}\n\n${command.hint}`);
      return EXIT_USAGE;
    case 'rewrite':
      return (await import('./offline/command.ts')).runRewrite(command.config, io);
    case 'serve':
      return (await import('./serve.ts')).serve(command.config, env);
  }
}
