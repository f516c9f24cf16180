// Argument parsing and the offline `rewrite` command. `serve` is started by main.ts, the composition root.
import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import {
  helpText, parseRewriteArgs, parseServeArgs, REWRITE_FLAGS, SERVE_FLAGS, UsageError, type RewriteConfig, type ServeConfig,
} from './config.ts';
import { buildSnapshot } from './core/snapshot.ts';
import { parseDocuments } from './documents.ts';
import { errorMessage } from './errors.ts';
import { explain } from './explain.ts';
import { rewriteDocuments, type DocumentResult } from './offline.ts';
import { loadShortcutFiles } from './view/shortcut-files.ts';

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

async function readInput(input: string, stdin: NodeJS.ReadableStream): Promise<string> {
  if (input !== '-') return readFile(input, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function render(results: readonly DocumentResult[], format: RewriteConfig['output']): string {
  if (format === 'patch') return results.map((r) => `${JSON.stringify(r.patch)}\n`).join('');
  if (format === 'json') return results.map((r) => `${JSON.stringify(r.output)}\n`).join('');
  // YAML 1.1 quoting, as kubectl reads it: a label value "yes" or "2025-07-06" must stay a string.
  return results.map((r) => stringify(r.output, { lineWidth: 0, version: '1.1' })).join('---\n');
}

export async function runRewrite(config: RewriteConfig, io: Io): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`shortcut-webhook rewrite: ${message}\n`);
    return EXIT_INVALID_INPUT;
  };
  const loaded = await loadShortcutFiles(config.shortcuts);
  if (!loaded.ok) return fail(loaded.message);
  for (const note of loaded.value.ignored) io.stderr.write(`shortcut-webhook rewrite: ignored ${note}\n`);
  const snapshot = buildSnapshot({ version: 1, fccs: loaded.value.fccs });
  const origin = config.input === '-' ? 'stdin' : config.input;
  let text: string;
  try {
    text = await readInput(config.input, io.stdin);
  } catch (error) {
    return fail(`cannot read ${origin}: ${errorMessage(error)}`);
  }
  const documents = parseDocuments(text, origin);
  if (!documents.ok) return fail(documents.message);
  const rewritten = rewriteDocuments(documents.documents, snapshot, { clusterId: config.clusterId });
  if (!rewritten.ok) return fail(rewritten.message);
  io.stdout.write(config.explain ? explain(rewritten.results, snapshot, config.clusterId) : render(rewritten.results, config.output));
  return EXIT_OK;
}
