// Composition root: the only file that starts things. Command line → config → view → app → listen; signals.
import { EXIT_OK, EXIT_USAGE, parseCommand, runRewrite, TOP_USAGE, type Io } from './cli.ts';
import { serve } from './serve.ts';

export async function main(argv: readonly string[], io: Io = process, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const command = parseCommand(argv, env);
  switch (command.kind) {
    case 'help':
      io.stdout.write(command.text);
      return EXIT_OK;
    case 'usage-error':
      io.stderr.write(`shortcut-webhook: ${command.message}\n\n${TOP_USAGE}`);
      return EXIT_USAGE;
    case 'rewrite':
      return runRewrite(command.config, io);
    case 'serve':
      return serve(command.config);
  }
}
