// `shortcut-webhook rewrite`: read the shortcut files and the input, rewrite every document, print the result.
import { randomUUID } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PatchOperation } from '../admission/patch.ts';
import { EXIT_INVALID_INPUT, EXIT_OK, type Io } from '../cli.ts';
import type { RewriteConfig } from '../config.ts';
import { buildSnapshot, type Snapshot } from '../core/snapshot.ts';
import { failure, success, type Result } from '../core/result.ts';
import { readDocuments, type ListDocument } from '../util/documents.ts';
import { errorMessage } from '../util/errors.ts';
import { printYaml, printYamlEntry } from '../util/yaml-fast.ts';
import { loadShortcutFiles } from '../view/shortcut-files.ts';
import { explain, explainJson, unusableNotes } from '../offline/explain.ts';
import { clusterOf, rewriteDocument, rewriteListItems, type DocumentResult, type OfflineOptions, type SliceReport } from '../offline/rewrite-documents.ts';

async function readInput(input: string, stdin: NodeJS.ReadableStream): Promise<string> {
  if (input !== '-') return readFile(input, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The inputs as the files to read, in order: a folder stands for its .yaml, .yml and .json files in name order (as
 * kubectl -f reads one), so reading a folder is never an EISDIR for the user.
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
    let entries;
    try {
      entries = await readdir(input, { withFileTypes: true });
    } catch (error) {
      // A folder that can be seen but not listed (EACCES as another user): a message, not a stack trace.
      return { message: `cannot read ${input}: ${errorMessage(error)}` };
    }
    const names = entries.filter((entry) => entry.isFile() && /\.(ya?ml|json)$/i.test(entry.name)).map((entry) => entry.name).sort();
    if (names.length === 0) return { message: `${input} is a folder without .yaml, .yml or .json files` };
    files.push(...names.map((name) => join(input, name)));
  }
  return { files };
}

/**
 * The printed output, built document by document as the input is read. Held as text until the end, because one
 * invalid document fails the run (exit 1) with nothing printed; the text is the input's size, not a tree of it.
 */
class Output {
  readonly chunks: string[] = [];
  /** `--explain` reads every document's traces at the end. */
  readonly explained: DocumentResult[] = [];
  /** The slices' clusters: whose unusable FCCs stderr names without --explain. */
  readonly clusters = new Set<string>();
  /** With `-o patch`, the document and objects of each line, said on stderr (stdout holds the arrays only). */
  readonly patchLines: string[] = [];
  private documents = 0;

  constructor(private readonly format: RewriteConfig['output'] | 'explain') {}

  get count(): number {
    return this.documents;
  }

  /** Slices left as they came for a reason the output alone does not show (said on stderr without --explain). */
  readonly leftAlone: string[] = [];

  private noteSlices(slices: readonly SliceReport[]): void {
    for (const slice of slices) {
      const cluster = clusterOf(slice);
      if (cluster !== undefined) this.clusters.add(cluster);
      else if ('skip' in slice.result && slice.result.skip === 'annotations-too-large') this.leftAlone.push(`${slice.name} left as it came: ${slice.result.detail}`);
    }
  }

  /**
   * A typo such as `10.63.0.999` is left exactly as it is (docs/reference.md, "The rewrite"), so the output alone looks like a clean run:
   * said once per document, with a few of the addresses, instead of once per address.
   */
  private noteGarbage(document: string, slices: readonly SliceReport[]): void {
    const found = slices.flatMap((slice) => {
      if (slice.kind !== 'endpointslice' || !('slice' in slice.result)) return [];
      const { family } = slice.result.slice;
      return slice.traces.filter((trace) => trace.reason === 'not-canonical').map((trace) => ({ slice: slice.name, family, input: trace.input }));
    });
    if (found.length === 0) return;
    const shown = found.slice(0, GARBAGE_SHOWN).map(({ slice, family, input }) => `${JSON.stringify(input)} in ${slice} (${family})`);
    const more = found.length > GARBAGE_SHOWN ? ` and ${found.length - GARBAGE_SHOWN} more` : '';
    this.leftAlone.push(`${document}: left exactly as written, not a canonical IP of the slice's family: ${shown.join(', ')}${more}`);
  }

  document(result: DocumentResult): void {
    this.documents++;
    this.noteSlices(result.slices);
    this.noteGarbage(result.name, result.slices);
    if (this.format === 'patch') this.patchLines.push(`${result.name} ${result.slices.map((slice) => slice.name).join(', ') || '(no slice)'}`);
    if (this.format === 'explain') this.explained.push(result);
    else if (this.format === 'patch') this.chunks.push(`${JSON.stringify(result.patch)}\n`);
    else if (this.format === 'json') this.chunks.push(`${JSON.stringify(result.output)}\n`);
    else this.chunks.push(`${this.documents > 1 ? '---\n' : ''}${printYaml(result.output)}`);
  }

  /** A List, printed as `document` would print it whole: its other fields around the items, each item when it comes. */
  list(list: ListDocument, snapshot: Snapshot, options: OfflineOptions): Result<void> {
    if (list.length === 0) {
      this.document({ name: list.name, output: list.header, patch: [], slices: [] });
      return success(undefined);
    }
    this.documents++;
    const slices: SliceReport[] = [];
    const [before, after] = this.around(list.header);
    const format = this.format;
    this.chunks.push(before);
    let first = true;
    const names: string[] = [];
    const garbage: SliceReport[] = [];
    const error = rewriteListItems(list, snapshot, options, ({ output, patch, report }) => {
      this.noteSlices([report]);
      if (report.kind === 'endpointslice' && report.traces.some((trace) => trace.reason === 'not-canonical')) garbage.push(report);
      if (format === 'patch') names.push(report.name);
      if (format === 'explain') slices.push(report);
      else if (format === 'yaml') this.chunks.push(printYamlEntry(output));
      else if (format === 'json') this.chunks.push(`${first ? '' : ','}${JSON.stringify(output)}`);
      else if (patch.length > 0) this.chunks.push(`${first ? '' : ','}${patch.map(operationText).join(',')}`);
      if (format !== 'patch' || patch.length > 0) first = false;
    });
    if (error !== undefined) return failure(error);
    this.noteGarbage(list.name, garbage);
    if (format === 'patch') this.patchLines.push(`${list.name} ${names.join(', ')}`);
    this.chunks.push(after);
    if (format === 'explain') this.explained.push({ name: list.name, output: null, patch: [], slices });
    return success(undefined);
  }

  /** What comes before and after the items, as the whole List would print. */
  private around(header: Readonly<Record<string, unknown>>): [string, string] {
    if (this.format === 'explain') return ['', ''];
    if (this.format === 'patch') return ['[', ']\n'];
    if (this.format === 'json') {
      const fields = Object.entries(header).filter(([, value]) => value !== undefined)
        .map(([key, value]) => `${JSON.stringify(key)}:${key === 'items' ? '\0' : JSON.stringify(value)}`);
      const [before = '', after = ''] = `{${fields.join(',')}}`.split('"items":\0');
      return [`${before}"items":[`, `]${after}\n`];
    }
    // A unique plain string stands for the items, then the line it prints on becomes `items:` and the entries.
    const marker = `shortcut-webhook-items-${randomUUID()}`;
    const text = printYaml({ ...header, items: marker });
    const line = text.startsWith(`items: ${marker}\n`) ? 0 : text.indexOf(`\nitems: ${marker}\n`) + 1;
    const separator = this.documents > 1 ? '---\n' : '';
    return [`${separator}${text.slice(0, line)}items:\n`, text.slice(line + `items: ${marker}\n`.length)];
  }
}

/** How many of a document's non-canonical addresses its note quotes: enough to find the typo, never a flood. */
const GARBAGE_SHOWN = 3;

function operationText(operation: PatchOperation): string {
  return JSON.stringify(operation);
}

export async function runRewrite(config: RewriteConfig, io: Io): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`shortcut-webhook rewrite: ${message}\n`);
    return EXIT_INVALID_INPUT;
  };
  const loaded = await loadShortcutFiles({ shortcuts: config.shortcuts, hub: config.hub });
  if (!loaded.ok) return fail(loaded.message);
  for (const note of loaded.value.ignored) io.stderr.write(`shortcut-webhook rewrite: ignored ${note}\n`);
  const { fccs, tunnels, configurations, hubs, consumers } = loaded.value;
  const snapshot = buildSnapshot({ version: 1, fccs, tunnels, configurations, hubs, consumers });
  const expanded = await expandInputs(config.inputs);
  if ('message' in expanded) return fail(expanded.message);
  if (config.implicitStdin && 'isTTY' in io.stdin && io.stdin.isTTY === true) {
    // A bare `rewrite` in a terminal would otherwise wait in silence.
    io.stderr.write('shortcut-webhook rewrite: reading EndpointSlices from standard input (end with Ctrl-D; or name files with -f)\n');
  }
  const options = { clusterId: config.clusterId };
  const output = new Output(config.explain ? 'explain' : config.output);
  const origins: string[] = [];
  for (const input of expanded.files) {
    const origin = input === '-' ? 'stdin' : input;
    origins.push(origin);
    let text: string;
    try {
      text = await readInput(input, io.stdin);
    } catch (error) {
      return fail(`cannot read ${origin}: ${errorMessage(error)}`);
    }
    for (const read of readDocuments(text, origin)) {
      if (!read.ok) return fail(read.message);
      if (read.value.kind === 'list') {
        const listed = output.list(read.value.list, snapshot, options);
        if (!listed.ok) return fail(listed.message);
        continue;
      }
      const result = rewriteDocument(read.value.document, snapshot, options);
      if (typeof result === 'string') return fail(result);
      output.document(result);
    }
  }
  if (output.count === 0) return fail(`${origins.join(', ')} ${origins.length === 1 ? 'holds' : 'hold'} no document: the input is empty`);
  if (config.explain) {
    io.stdout.write(config.output === 'json'
      ? `${JSON.stringify(explainJson(output.explained, snapshot, config.clusterId))}\n`
      : explain(output.explained, snapshot, config.clusterId));
    return EXIT_OK;
  }
  // Without --explain, what kept a shortcut from being used is still said, one line each, on stderr.
  for (const note of unusableNotes(output.clusters, snapshot, config.clusterId)) io.stderr.write(`shortcut-webhook rewrite: ${note}\n`);
  for (const note of output.leftAlone) io.stderr.write(`shortcut-webhook rewrite: ${note}\n`);
  output.patchLines.forEach((line, i) => io.stderr.write(`shortcut-webhook rewrite: patch line ${i + 1} is ${line}\n`));
  for (const chunk of output.chunks) io.stdout.write(chunk);
  return EXIT_OK;
}
