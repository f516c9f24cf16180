// YAML or JSON text → documents, each named by origin and position so that every error can say where it is.
// Documents are read one at a time, when the caller reaches them; a List's items too (`kubectl get -o yaml` of a big
// cluster is one List of thousands), so that a big input is never held as a whole tree beside its text. The yaml
// package reads about 1 MB/s: what Kubernetes tools print goes through a fast path (yaml-fast.ts) that reads exactly
// as the yaml package does, which reads everything else.
import { Composer, isScalar, parseDocument, Parser, type Document as YamlDocument } from 'yaml';
import { failure, success, type Result } from '../core/result.ts';
import { errorMessage } from './errors.ts';
import { readFastYaml } from './yaml-fast.ts';

export interface Document {
  /** `file.yaml#2`, `stdin#1`: what messages call this document (1-based, as people count). */
  readonly name: string;
  readonly value: unknown;
}

/** A List document whose items are read one by one. */
export interface ListDocument {
  readonly name: string;
  /** The document with `items: []` where its items were: every other field, in its order. */
  readonly header: Readonly<Record<string, unknown>>;
  readonly length: number;
  /** Item `index`, read now (each one is read when asked, so only the one in hand is held). */
  item(index: number): Result<unknown>;
}

export type InputDocument =
  | { readonly kind: 'document'; readonly document: Document }
  | { readonly kind: 'list'; readonly list: ListDocument };

export type ParsedDocuments = Result<readonly Document[]>;

const YAML_OPTIONS = { schema: 'core', uniqueKeys: true, prettyErrors: false } as const;
const TO_JS = { maxAliasCount: 100 } as const;

/** `line L, column C` of an offset, as editors count (1-based). */
function position(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at >= 0 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

/** A document's first YAML error, naming where it is in `text` (`base`: where the parsed part starts in it). */
function yamlError(name: string, document: YamlDocument.Parsed, text: string, base: number): string | undefined {
  const [error] = document.errors;
  if (error === undefined) return undefined;
  return `${name}, ${position(text, base + error.pos[0])}: ${error.message.split('\n')[0] ?? 'invalid YAML'}`;
}

/**
 * A document with nothing in it: a trailing `---`, two in a row, or only a comment. yaml gives it an empty null
 * scalar rather than no contents; an explicit `null` or `~` is a document, and is refused later as not an object.
 */
function isEmptyDocument(contents: unknown): boolean {
  return contents === null || (isScalar(contents) && contents.value === null && contents.source === '');
}

/** The value of a parsed YAML document, an error, or undefined for an empty one. */
function yamlValue(name: string, document: YamlDocument.Parsed, text: string, base: number): Result<unknown> | undefined {
  const error = yamlError(name, document, text, base);
  if (error !== undefined) return failure(error);
  if (isEmptyDocument(document.contents)) return undefined;
  try {
    return success(document.toJS(TO_JS));
  } catch (caught) {
    return failure(`${name}: ${errorMessage(caught)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

interface Range { readonly start: number; readonly end: number }

/**
 * Concatenated JSON values (JSON Lines, or pretty objects one after another, as `--output json` and `jq` print
 * them), split at depth zero. Undefined when the text is not a sequence of objects or arrays.
 */
function splitJsonValues(text: string): Range[] | undefined {
  const values: Range[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++;
      else if (char === 0x22) inString = false;
      continue;
    }
    if (char === 0x22) { if (depth === 0) return undefined; inString = true; continue; }
    if (char === 0x7b || char === 0x5b) {
      if (depth++ === 0) start = i;
    } else if (char === 0x7d || char === 0x5d) {
      if (--depth < 0) return undefined;
      if (depth === 0) values.push({ start, end: i + 1 });
    } else if (depth === 0 && char !== 0x20 && char !== 0x0a && char !== 0x0d && char !== 0x09) {
      return undefined;
    }
  }
  return depth === 0 && values.length > 0 ? values : undefined;
}

/** The `items` array of the JSON object at `range`: where it is and each element's range; undefined if none (or two). */
function jsonItems(text: string, range: Range): { array: Range; items: Range[] } | undefined {
  let depth = 0;
  let found: { array: Range; items: Range[] } | undefined;
  let key: string | undefined;
  let itemStart = -1;
  let items: Range[] | undefined;
  let arrayStart = -1;
  const skipSpace = (at: number) => {
    while (at < range.end && /\s/.test(text[at] ?? '')) at++;
    return at;
  };
  for (let i = range.start; i < range.end; i++) {
    const char = text[i];
    if (char === '"') {
      const start = i;
      for (i++; i < range.end && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && text[skipSpace(i + 1)] === ':') key = text.slice(start + 1, i);
      if (items !== undefined && depth === 2 && itemStart < 0) itemStart = start;
      continue;
    }
    if (char === '{' || char === '[') {
      depth++;
      if (depth === 2 && char === '[' && key === 'items') {
        if (found !== undefined) return undefined;
        items = [];
        arrayStart = i;
        itemStart = -1;
      } else if (items !== undefined && depth === 3 && itemStart < 0) {
        itemStart = i;
      }
      continue;
    }
    if (char === '}' || char === ']') {
      if (items !== undefined && depth === 2) {
        if (itemStart >= 0) items.push({ start: itemStart, end: i });
        found = { array: { start: arrayStart, end: i + 1 }, items };
        items = undefined;
      }
      depth--;
      continue;
    }
    if (items === undefined || depth !== 2) continue;
    if (char === ',') {
      items.push({ start: itemStart, end: i });
      itemStart = -1;
    } else if (itemStart < 0 && !/\s/.test(char ?? '')) {
      itemStart = i;
    }
  }
  return found;
}

/**
 * JSON.parse's error, placed in the whole text: its `at position N` counts from the start of the parsed value, which
 * is not where the value starts in the file. Undefined when the message gives no position.
 */
function jsonError(name: string, text: string, base: number, error: unknown): string | undefined {
  const message = errorMessage(error);
  const at = / in JSON at position (\d+)/.exec(message);
  if (at === null) return undefined;
  return `${name}, ${position(text, base + Number(at[1]))}: ${message.slice(0, at.index)} in JSON`;
}

/**
 * A JSON value, or what the yaml package makes of the text (JSON is YAML: flow-style YAML lands here too). When
 * neither reads it, the JSON error is the one given: the text looks like JSON, and yaml places a missing comma at the
 * start of the key before it, a line above where a JSON reader (or jq, or an editor) points.
 */
function jsonOrYaml(name: string, text: string, range: Range): Result<unknown> {
  const source = text.slice(range.start, range.end);
  try {
    return success(JSON.parse(source));
  } catch (jsonFailure) {
    const value = yamlValue(name, parseDocument(source, YAML_OPTIONS), text, range.start);
    if (value !== undefined && !value.ok) return failure(jsonError(name, text, range.start, jsonFailure) ?? value.message);
    return value ?? failure(`${name}: empty document`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A header whose items may be read one at a time: a `…List` with an `items` array. */
function isListHeader(header: unknown): header is Record<string, unknown> {
  return isRecord(header) && Array.isArray(header.items) && header.items.length === 0
    && typeof header.kind === 'string' && header.kind.endsWith('List');
}

function* jsonDocuments(text: string, origin: string, values: readonly Range[]): Generator<Result<InputDocument>> {
  if (values.length > 1) {
    for (const [i, range] of values.entries()) {
      try {
        yield success({ kind: 'document', document: { name: `${origin}#${i + 1}`, value: JSON.parse(text.slice(range.start, range.end)) } });
      } catch (error) {
        yield failure(jsonError(`${origin}#${i + 1}`, text, range.start, error) ?? `${origin}#${i + 1}: ${errorMessage(error)}`);
        return;
      }
    }
    return;
  }
  const [range] = values;
  if (range === undefined) return;
  const name = `${origin}#1`;
  const split = jsonItems(text, range);
  if (split !== undefined) {
    let header: unknown;
    try {
      header = JSON.parse(`${text.slice(range.start, split.array.start)}[]${text.slice(split.array.end, range.end)}`);
    } catch {
      header = undefined;
    }
    if (isListHeader(header)) {
      const { items } = split;
      yield success({ kind: 'list', list: { name, header, length: items.length, item: (i) => jsonOrYaml(name, text, items[i] ?? { start: 0, end: 0 }) } });
      return;
    }
  }
  const value = jsonOrYaml(name, text, range);
  yield value.ok ? success({ kind: 'document', document: { name, value: value.value } }) : value;
}

// ---------------------------------------------------------------------------------------------------------------
// YAML

/**
 * Where each document starts and ends, found from its `---` lines, as the yaml package numbers them (the part before
 * the first `---` is a document only if it holds something). Undefined when the text has anything that makes the
 * boundaries the parser's business: directives, `...`, content after a `---`.
 */
function yamlSegments(text: string): Range[] | undefined {
  if (text.includes('\r') || /^(?:%|\.\.\.(?:[ \t]|$)|---[ \t]+[^\s#])/m.test(text)) return undefined;
  const segments: Range[] = [];
  const marker = /^---[ \t]*(?:#.*)?$/gm;
  let start = 0;
  let first = true;
  for (let match = marker.exec(text); match !== null; match = marker.exec(text)) {
    if (!first || hasContent(text, start, match.index)) segments.push({ start, end: match.index });
    first = false;
    start = match.index + match[0].length + 1;
  }
  if (!first || hasContent(text, start, text.length)) segments.push({ start: Math.min(start, text.length), end: text.length });
  return segments;
}

function hasContent(text: string, start: number, end: number): boolean {
  return /^[ \t]*[^\s#]/m.test(text.slice(start, end));
}

/** Anchors and aliases tie items together: such a List is read whole. */
const ANCHOR_OR_ALIAS = /(?:^|[\s[{,])[&*][^\s,\]}]/;

/** The `items:` of a List document at column 0, split into its entries; undefined when it is not that plain. */
function yamlItems(text: string, segment: Range): { header: string; items: Range[] } | undefined {
  const part = text.slice(segment.start, segment.end);
  const key = /^items:[ \t]*$/gm;
  const found = key.exec(part);
  if (found === null || key.exec(part) !== null || ANCHOR_OR_ALIAS.test(part)) return undefined;
  const lineEnd = found.index + found[0].length;
  const items: Range[] = [];
  let indent = -1;
  let at = lineEnd + 1;
  let end = part.length;
  while (at < part.length) {
    const next = part.indexOf('\n', at);
    const lineStop = next < 0 ? part.length : next;
    const line = part.slice(at, lineStop);
    let spaces = 0;
    while (line.charCodeAt(spaces) === 32) spaces++;
    const content = line.slice(spaces);
    if (content !== '' && !content.startsWith('#')) {
      const isEntry = content === '-' || content.startsWith('- ');
      // The first line after `items:` is an entry, and its column is the sequence's.
      if (indent < 0) {
        if (!isEntry) return undefined;
        indent = spaces;
      }
      if (spaces === indent && isEntry) items.push({ start: segment.start + at, end: segment.start + lineStop });
      else if (spaces < indent || (spaces === 0 && indent === 0)) { end = at; break; }
      else if (spaces === indent) return undefined;
    }
    at = lineStop + 1;
  }
  if (items.length === 0) return undefined;
  // Each entry runs to the next; the last to where the sequence ends.
  const ranges = items.map((item, i) => ({ start: item.start, end: items[i + 1]?.start ?? segment.start + end }));
  return { header: `${part.slice(0, found.index)}items: []\n${part.slice(end)}`, items: ranges };
}

/** One document's text: the fast path, else the yaml package. Undefined for an empty document. */
function yamlDocument(name: string, text: string, segment: Range): Result<unknown> | undefined {
  const fast = readFastYaml(text, segment);
  if (fast !== undefined) return success(fast);
  return yamlValue(name, parseDocument(text.slice(segment.start, segment.end), YAML_OPTIONS), text, segment.start);
}

/** One entry of a List's block sequence, read alone: its dash becomes a space, so columns (and messages) stay. */
function yamlItem(name: string, text: string, range: Range): Result<unknown> {
  const fast = readFastYaml(text, { ...range, entry: true });
  if (fast !== undefined) return success(fast);
  const source = text.slice(range.start, range.end);
  const dash = source.indexOf('-');
  const value = yamlValue(name, parseDocument(`${source.slice(0, dash)} ${source.slice(dash + 1)}`, YAML_OPTIONS), text, range.start);
  return value ?? success(null);
}

function* yamlDocuments(text: string, origin: string): Generator<Result<InputDocument>> {
  const segments = yamlSegments(text);
  if (segments === undefined) {
    yield* composedDocuments(text, origin);
    return;
  }
  for (const [i, segment] of segments.entries()) {
    const name = `${origin}#${i + 1}`;
    const split = hasContent(text, segment.start, segment.end) ? yamlItems(text, segment) : undefined;
    if (split !== undefined) {
      let header = readFastYaml(split.header);
      if (header === undefined) {
        const parsed = parseDocument(split.header, YAML_OPTIONS);
        header = parsed.errors.length === 0 ? parsed.toJS(TO_JS) : undefined;
      }
      if (isListHeader(header)) {
        const { items } = split;
        yield success({ kind: 'list', list: { name, header, length: items.length,
          item: (index) => yamlItem(name, text, items[index] ?? { start: 0, end: 0 }) } });
        continue;
      }
    }
    const value = yamlDocument(name, text, segment);
    if (value === undefined) continue;
    if (!value.ok) { yield value; return; }
    yield success({ kind: 'document', document: { name, value: value.value } });
  }
}

/** The yaml package's own reading, one document at a time: for texts whose boundaries only it can tell. */
function* composedDocuments(text: string, origin: string): Generator<Result<InputDocument>> {
  const composer = new Composer(YAML_OPTIONS);
  let i = 0;
  for (const document of composer.compose(new Parser().parse(text))) {
    const name = `${origin}#${++i}`;
    const value = yamlValue(name, document, text, 0);
    if (value === undefined) continue;
    if (!value.ok) { yield value; return; }
    yield success({ kind: 'document', document: { name, value: value.value } });
  }
}

/**
 * The documents of a YAML or JSON text, one at a time; an error ends them. JSON is YAML, so the yaml package reads
 * whatever the JSON reader does not. Aliases are bounded so that a small file cannot expand without limit.
 */
export function readDocuments(text: string, origin: string): Generator<Result<InputDocument>> {
  const values = /^\s*[[{]/.test(text) ? splitJsonValues(text) : undefined;
  return values !== undefined ? jsonDocuments(text, origin, values) : yamlDocuments(text, origin);
}

/** Every document at once, a List's items in it: for small inputs such as the shortcut files. */
export function parseDocuments(text: string, origin: string): ParsedDocuments {
  const documents: Document[] = [];
  for (const read of readDocuments(text, origin)) {
    if (!read.ok) return read;
    if (read.value.kind === 'document') { documents.push(read.value.document); continue; }
    const { list } = read.value;
    const items: unknown[] = [];
    for (let i = 0; i < list.length; i++) {
      const item = list.item(i);
      if (!item.ok) return item;
      items.push(item.value);
    }
    documents.push({ name: list.name, value: { ...list.header, items } });
  }
  return success(documents);
}
