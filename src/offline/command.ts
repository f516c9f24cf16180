// `shortcut-webhook rewrite`: read the shortcut files and the input, rewrite every document, print the result.
import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { EXIT_INVALID_INPUT, EXIT_OK, type Io } from '../cli.ts';
import type { RewriteConfig } from '../config.ts';
import { buildSnapshot } from '../core/snapshot.ts';
import { parseDocuments } from '../util/documents.ts';
import { errorMessage } from '../util/errors.ts';
import { loadShortcutFiles } from '../view/shortcut-files.ts';
import { explain } from './explain.ts';
import { rewriteDocuments, type DocumentResult } from './rewrite-documents.ts';

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
  const loaded = await loadShortcutFiles({ shortcuts: config.shortcuts, hub: config.hub });
  if (!loaded.ok) return fail(loaded.message);
  for (const note of loaded.value.ignored) io.stderr.write(`shortcut-webhook rewrite: ignored ${note}\n`);
  const { fccs, tunnels, configurations, hub } = loaded.value;
  const snapshot = buildSnapshot({ version: 1, fccs, tunnels, configurations, hub });
  const origin = config.input === '-' ? 'stdin' : config.input;
  let text: string;
  try {
    text = await readInput(config.input, io.stdin);
  } catch (error) {
    return fail(`cannot read ${origin}: ${errorMessage(error)}`);
  }
  const documents = parseDocuments(text, origin);
  if (!documents.ok) return fail(documents.message);
  const rewritten = rewriteDocuments(documents.value, snapshot, { clusterId: config.clusterId });
  if (!rewritten.ok) return fail(rewritten.message);
  io.stdout.write(config.explain ? explain(rewritten.value, snapshot, config.clusterId) : render(rewritten.value, config.output));
  return EXIT_OK;
}
