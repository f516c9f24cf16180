// Argument parsing: argv and environment to one command. The commands themselves are started by main.ts.
import {
  environmentWarnings, EXPLAIN_FLAGS, helpText, nearest, parseExplainArgs, parseRewriteArgs, parseServeArgs, parseVersionArgs,
  parseStatusArgs, REWRITE_FLAGS, SERVE_FLAGS, STATUS_FLAGS, UsageError, VERSION_FLAGS, type ExplainConfig, type RewriteConfig,
  type ServeConfig, type StatusConfig, type VersionFormat,
} from './config.ts';

export const EXIT_OK = 0;
export const EXIT_INVALID_INPUT = 1;
export const EXIT_USAGE = 2;

const SERVE_USAGE = 'Usage: shortcut-webhook serve [flags]\n\nServe the mutating admission webhook over HTTPS and keep stored slices in step.';
const REWRITE_USAGE = `Usage: shortcut-webhook rewrite --shortcuts PATH [--shortcuts PATH]... [flags] [-f FILE|DIR|-]... [FILE|DIR|-]...

Rewrite EndpointSlices offline, exactly as the webhook would. Input: YAML or JSON, one or more documents, each an
EndpointSlice, a List of them, or an AdmissionReview (answered as the server would answer it); standard input when
no input is named. The FCC path reads ForeignClusterConnections from --shortcuts; the stock-Liqo path needs no FCC,
only the leaf's Liqo Configurations and Connections (--shortcuts) and the hub's IPs and Configurations (--hub).
FCCs that cannot be used, and addresses that are not canonical IPs, are said on stderr.
Exit codes: 0 success, 1 unreadable or invalid input, 2 usage error.`;
const VERSION_USAGE = `Usage: shortcut-webhook version [-o json]

Print the version, the git commit it was built from (when known) and the Node.js version.`;
const EXPLAIN_USAGE = `Usage: shortcut-webhook explain [-n NS] NAME | -l SELECTOR [flags]

Explain stored EndpointSlices (or with --shadows ShadowEndpointSlices) on a live cluster: read the slice(s) and the
views serve reads (FCCs, the leaf's Liqo Connections and Configurations, the hub's Liqo IPs and Configurations
through --shortcuts-kubeconfig), wait for them to sync, and print per address what the webhook does and why, as
rewrite --explain does. Read-only. Exit codes: 0 success, 1 unreachable cluster or no such slice, 2 usage error.`;
const STATUS_USAGE = `Usage: shortcut-webhook status [flags]
       shortcut-webhook status -n NS [SERVICE] | -A [--addresses] [flags]

Which path traffic takes now, read from the cluster: without arguments one line per peer cluster (the path in use:
direct, hub, mixed or none; why; the leaf's Liqo Connection state and since when; how many stored EndpointSlices,
ShadowEndpointSlices, Services and addresses take each path, and how many objects are out of step with the view).
With -n or -A one line per Service, and with --addresses one per address, decided as explain decides them.
Read-only. Exit codes: 0 success, 1 unreachable cluster, access refused or no such Service, 2 usage error.`;
export const TOP_USAGE = `Usage: shortcut-webhook <command> [flags]

Commands:
  serve     serve the admission webhook (HTTPS) with ops endpoints, and reconcile stored slices
  rewrite   rewrite EndpointSlices offline against files: FCCs, or the leaf's and the hub's Liqo objects
  explain   explain what the webhook does to slices stored in a cluster, and why (read-only)
  status    which path each peer's (or Service's) traffic takes now: direct, hub, mixed or none (read-only)
  version   print the version, commit and Node.js version (also: --version)

Run 'shortcut-webhook <command> --help' for the flags of a command.
`;

const COMMANDS = ['serve', 'rewrite', 'explain', 'status', 'version', 'help'] as const;

export type Command =
  | { readonly kind: 'serve'; readonly config: ServeConfig; readonly warnings: readonly string[] }
  | { readonly kind: 'rewrite'; readonly config: RewriteConfig; readonly warnings: readonly string[] }
  | { readonly kind: 'explain'; readonly config: ExplainConfig; readonly warnings: readonly string[] }
  | { readonly kind: 'status'; readonly config: StatusConfig; readonly warnings: readonly string[] }
  | { readonly kind: 'version'; readonly output: VersionFormat }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'usage-error'; readonly command: string | undefined; readonly message: string; readonly hint: string };

/** Variables are checked against every command's flags: one of serve's set while running rewrite is no typo. */
function warnings(env: NodeJS.ProcessEnv): string[] {
  return environmentWarnings(env, [SERVE_FLAGS, REWRITE_FLAGS, EXPLAIN_FLAGS, STATUS_FLAGS, VERSION_FLAGS]);
}

export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const [name, ...rest] = argv;
  try {
    switch (name) {
      case 'serve': {
        const parsed = parseServeArgs(rest, env);
        return parsed.help ? { kind: 'help', text: helpText(SERVE_USAGE, SERVE_FLAGS) } : { kind: 'serve', config: parsed.config, warnings: warnings(env) };
      }
      case 'rewrite': {
        const parsed = parseRewriteArgs(rest, env);
        return parsed.help ? { kind: 'help', text: helpText(REWRITE_USAGE, REWRITE_FLAGS) } : { kind: 'rewrite', config: parsed.config, warnings: warnings(env) };
      }
      case 'explain': {
        const parsed = parseExplainArgs(rest, env);
        return parsed.help ? { kind: 'help', text: helpText(EXPLAIN_USAGE, EXPLAIN_FLAGS) } : { kind: 'explain', config: parsed.config, warnings: warnings(env) };
      }
      case 'status': {
        const parsed = parseStatusArgs(rest, env);
        return parsed.help ? { kind: 'help', text: helpText(STATUS_USAGE, STATUS_FLAGS) } : { kind: 'status', config: parsed.config, warnings: warnings(env) };
      }
      case 'version': case '--version': {
        const parsed = parseVersionArgs(rest, env);
        return parsed.help ? { kind: 'help', text: helpText(VERSION_USAGE, VERSION_FLAGS) } : { kind: 'version', output: parsed.config.output };
      }
      case 'help': case '--help': case '-h':
        return { kind: 'help', text: TOP_USAGE };
      case undefined:
        return { kind: 'usage-error', command: undefined, message: 'a command is required', hint: TOP_USAGE };
      default: {
        const guess = nearest(name.replace(/^-+/, ''), COMMANDS);
        return { kind: 'usage-error', command: undefined, message: `unknown command ${JSON.stringify(name)}${guess === undefined ? '' : ` (did you mean ${guess}?)`}`, hint: TOP_USAGE };
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const command = name === '--version' ? 'version' : name;
      return { kind: 'usage-error', command, message: error.message, hint: `See 'shortcut-webhook ${command} --help'.\n` };
    }
    throw error;
  }
}

export interface Io {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
}
