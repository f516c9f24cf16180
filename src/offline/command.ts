// `shortcut-webhook rewrite`: read the shortcut files and the input, rewrite every document, print the result.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { EXIT_INVALID_INPUT, EXIT_OK, type Io } from '../cli.ts';
import type { RewriteConfig } from '../config.ts';
import { buildSnapshot } from '../core/snapshot.ts';
import { parseDocuments } from '../util/documents.ts';
import { errorMessage } from '../util/errors.ts';
import { loadShortcutFiles } from '../view/shortcut-files.ts';
import { explain, explainJson, unusableNotes } from './explain.ts';
import { rewriteDocuments, type DocumentResult } from './rewrite-documents.ts';

async function readInput(input: string, stdin: NodeJS.ReadableStream): Promise<string> {
  if (input !== '-') return readFile(input, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The inputs as the files to read, in order: a folder stands for its .yaml, .yml and .json files in name order (as
 * kubectl -f reads one), so reading a folder is never an EISDIR for the user. Undefined entries are unreadable:
 * the message says why.
 */
async function expandInputs(inputs: readonly string[]): Promise<{ files: string[] } | { message: string }> {
  const files: string[] = [];
  for (const input of inputs) {
    if (input === '-') {
      files.push(input);
      continue;
    }
    let folder = false;
    try {
      folder = (await stat(input)).isDirectory();
    } catch (error) {
      return { message: `cannot read ${input}: ${errorMessage(error)}` };
    }
    if (!folder) {
      files.push(input);
      continue;
    }
    const names = (await readdir(input, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && /\.(ya?ml|json)$/i.test(entry.name)).map((entry) => entry.name).sort();
    if (names.length === 0) return { message: `${input} is a folder without .yaml, .yml or .json files` };
    files.push(...names.map((name) => join(input, name)));
  }
  return { files };
}

function render(results: readonly DocumentResult[], format: RewriteConfig['output']): string {
  // One line per document: which document and objects the operations belong to (a List's items are /items/<i>).
  // The contract's format: one JSON Patch array a line, nothing else, so `jq` and kubectl read it as it is. Which
  // object each line belongs to is said on stderr (patchNames).
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
  const expanded = await expandInputs(config.inputs);
  if ('message' in expanded) return fail(expanded.message);
  if (config.implicitStdin && 'isTTY' in io.stdin && io.stdin.isTTY === true) {
    // A bare `rewrite` in a terminal would otherwise wait in silence.
    io.stderr.write('shortcut-webhook rewrite: reading EndpointSlices from standard input (end with Ctrl-D; or name files with -f)\n');
  }
  const all = [];
  for (const input of expanded.files) {
    const origin = input === '-' ? 'stdin' : input;
    let text: string;
    try {
      text = await readInput(input, io.stdin);
    } catch (error) {
      return fail(`cannot read ${origin}: ${errorMessage(error)}`);
    }
    const documents = parseDocuments(text, origin);
    if (!documents.ok) return fail(documents.message);
    all.push(...documents.value);
  }
  const rewritten = rewriteDocuments(all, snapshot, { clusterId: config.clusterId });
  if (!rewritten.ok) return fail(rewritten.message);
  if (config.explain) {
    io.stdout.write(config.output === 'json'
      ? `${JSON.stringify(explainJson(rewritten.value, snapshot, config.clusterId))}\n`
      : explain(rewritten.value, snapshot, config.clusterId));
    return EXIT_OK;
  }
  // Without --explain, what kept a shortcut from being used is still said, one line each, on stderr.
  for (const note of unusableNotes(rewritten.value, snapshot, config.clusterId)) io.stderr.write(`shortcut-webhook rewrite: ${note}\n`);
  if (config.output === 'patch') {
    rewritten.value.forEach((r, i) => io.stderr.write(`shortcut-webhook rewrite: patch line ${i + 1} is ${r.name} ${r.slices.map((slice) => slice.name).join(', ') || '(no slice)'}\n`));
  }
  io.stdout.write(render(rewritten.value, config.output));
  return EXIT_OK;
}
