// Argument parsing: argv and environment to one command. The commands themselves are started by main.ts.
import {
  helpText, parseRewriteArgs, parseServeArgs, REWRITE_FLAGS, SERVE_FLAGS, UsageError, type RewriteConfig, type ServeConfig,
} from './config.ts';

export const EXIT_OK = 0;
export const EXIT_INVALID_INPUT = 1;
export const EXIT_USAGE = 2;

const SERVE_USAGE = 'Usage: shortcut-webhook serve [flags]\n\nServe the mutating admission webhook over HTTPS and keep stored slices in step.';
const REWRITE_USAGE = `Usage: shortcut-webhook rewrite --shortcuts PATH [--shortcuts PATH]... [flags] [FILE|-]

Rewrite EndpointSlices offline, exactly as the webhook would. Input: YAML or JSON, one or more documents, each an
EndpointSlice, a List of them, or an AdmissionReview (answered as the server would answer it).
Exit codes: 0 success, 1 unreadable or invalid input, 2 usage error.`;
export const TOP_USAGE = `Usage: shortcut-webhook <command> [flags]

Commands:
  serve     serve the admission webhook (HTTPS) with ops endpoints, and reconcile stored slices
  rewrite   rewrite EndpointSlices offline against ForeignClusterConnection files

Run 'shortcut-webhook <command> --help' for the flags of a command.
`;

export type Command =
  | { readonly kind: 'serve'; readonly config: ServeConfig }
  | { readonly kind: 'rewrite'; readonly config: RewriteConfig }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'usage-error'; readonly message: string; readonly hint: string };

export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const [name, ...rest] = argv;
  try {
    switch (name) {
      case 'serve': {
        const parsed = parseServeArgs(rest, env);
        return parsed.help ? { kind: 'help', text: helpText(SERVE_USAGE, SERVE_FLAGS) } : { kind: 'serve', config: parsed.config };
      }
      case 'rewrite': {
        const parsed = parseRewriteArgs(rest, env);
        return parsed.help ? { kind: 'help', text: helpText(REWRITE_USAGE, REWRITE_FLAGS) } : { kind: 'rewrite', config: parsed.config };
      }
      case 'help': case '--help': case '-h':
        return { kind: 'help', text: TOP_USAGE };
      case undefined:
        return { kind: 'usage-error', message: 'a command is required', hint: TOP_USAGE };
      default:
        return { kind: 'usage-error', message: `unknown command ${JSON.stringify(name)}`, hint: TOP_USAGE };
    }
  } catch (error) {
    if (error instanceof UsageError) {
      return { kind: 'usage-error', message: `${name}: ${error.message}`, hint: `Usage: see 'shortcut-webhook ${name} --help'.\n` };
    }
    throw error;
  }
}

export interface Io {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
}
