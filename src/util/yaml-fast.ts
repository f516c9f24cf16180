// A fast path for the YAML that Kubernetes tools print (block mappings and sequences, one-line plain or quoted
// scalars, `[]` and `{}`), beside the yaml package, which reads and prints about 1 MB/s: a 50 MB `kubectl get -o yaml`
// took a minute. Both directions answer exactly what the yaml package would, or `undefined` when the text or value
// holds anything else (anchors, tags, block scalars, multi-line scalars, flow collections, escapes...): the caller
// then uses the yaml package itself, so the fast path changes speed, never a result. Scalars are resolved and
// quoted by the yaml package's own schema tags.
import { Document, isScalar, stringify } from 'yaml';

interface ScalarTest {
  readonly tag: string;
  readonly test: RegExp;
  resolve?(value: string, onError: (message: string) => void, options: { intAsBigInt: boolean }): unknown;
}

function scalarTests(version: '1.1' | '1.2'): readonly ScalarTest[] {
  const schema = new Document(null, version === '1.1' ? { version } : { schema: 'core' }).schema;
  // What findScalarTagByTest (reading) and plainString (printing) consult: default tags with a test.
  return [...schema.tags, ...(schema.compat ?? [])].filter((tag): tag is typeof tag & ScalarTest =>
    tag.default === true && tag.tag !== 'tag:yaml.org,2002:str' && 'test' in tag && tag.test instanceof RegExp);
}

const CORE = scalarTests('1.2');
const YAML_1_1 = scalarTests('1.1');
const NO_VALUE = Symbol('no value');

/** A plain scalar as the core schema reads it; NO_VALUE when its resolver objects. */
function resolvePlain(text: string): unknown {
  const tag = CORE.find((candidate) => candidate.test.test(text));
  if (tag?.resolve === undefined) return text;
  let failed = false;
  const value = tag.resolve(text, () => { failed = true; }, { intAsBigInt: false });
  // Some resolvers (booleans) answer a Scalar node; toJS takes its value.
  return failed ? NO_VALUE : isScalar(value) ? value.value : value;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

class Bail extends Error {}
const bail = (): never => { throw new Bail(); };

/** Characters that may not start a plain scalar or key here (the fast path's rule, stricter than YAML's). */
const INDICATOR = /^[-?:,[\]{}#&*!|>'"%@`]/;

class Lines {
  readonly indents: number[] = [];
  readonly contents: string[] = [];

  constructor(text: string, start: number, end: number) {
    let at = start;
    while (at < end) {
      let next = text.indexOf('\n', at);
      if (next < 0 || next > end) next = end;
      const line = text.slice(at, next);
      at = next + 1;
      let indent = 0;
      while (line.charCodeAt(indent) === 32) indent++;
      const content = line.slice(indent);
      if (content === '' || content.startsWith('#')) continue;
      if (content.includes('\t') || content.includes('\r')) bail();
      this.indents.push(indent);
      this.contents.push(content);
    }
  }
}

/** `key: value` split: [key text, the value text after `: `]; undefined if the line is not a mapping entry. */
function splitEntry(content: string): [string, string] | undefined {
  let keyEnd: number;
  if (content.startsWith('"') || content.startsWith("'")) {
    keyEnd = content.indexOf(content[0] ?? '', 1) + 1;
    if (keyEnd === 0) bail();
    if (content[keyEnd] !== ':') return undefined;
  } else {
    keyEnd = content.indexOf(':');
    while (keyEnd >= 0 && keyEnd + 1 < content.length && content[keyEnd + 1] !== ' ') keyEnd = content.indexOf(':', keyEnd + 1);
    if (keyEnd < 0) return undefined;
  }
  if (keyEnd + 1 < content.length && content[keyEnd + 1] !== ' ') return undefined;
  return [content.slice(0, keyEnd), content.slice(keyEnd + 2)];
}

/** Keys recur in every object of a kind: each one's reading is decided once (a bounded memory). */
const readKeys = new Map<string, string | undefined>();

function readKey(text: string): string {
  let key = readKeys.get(text);
  if (key === undefined && !readKeys.has(text)) {
    try {
      key = readKeyText(text);
    } catch (error) {
      if (!(error instanceof Bail)) throw error;
    }
    if (readKeys.size >= 10_000) readKeys.clear();
    readKeys.set(text, key);
  }
  return key ?? bail();
}

/** A key: plain text that reads as a string, or a quoted one; anything else is left to the yaml package. */
function readKeyText(text: string): string {
  if (text.startsWith('"') || text.startsWith("'")) {
    const value = readScalar(text);
    return typeof value === 'string' ? value : bail();
  }
  if (text === '' || INDICATOR.test(text) || text.includes(' #') || text.endsWith(' ') || text === '__proto__') bail();
  if (CORE.some((tag) => tag.test.test(text))) bail();
  return text;
}

/** A one-line scalar after `key: ` or `- `, its comment removed. */
function readScalar(raw: string): unknown {
  const quote = raw[0];
  if (quote === '"' || quote === "'") {
    let end = raw.indexOf(quote, 1);
    if (quote === "'") while (end > 0 && raw[end + 1] === "'") end = raw.indexOf("'", end + 2);
    if (end < 0) bail();
    const rest = raw.slice(end + 1).trimEnd();
    if (rest !== '' && !rest.startsWith(' #') && !/^\s+#/.test(rest)) bail();
    const inner = raw.slice(1, end);
    if (quote === '"') return inner.includes('\\') ? bail() : inner;
    return inner.replaceAll("''", "'");
  }
  const hash = raw.indexOf(' #');
  const text = (hash >= 0 ? raw.slice(0, hash) : raw).trimEnd();
  if (text === '[]') return [];
  if (text === '{}') return {};
  if (text !== '' && INDICATOR.test(text)) bail();
  if (text.includes(': ') || text.endsWith(':')) bail();
  const value = resolvePlain(text);
  return value === NO_VALUE ? bail() : value;
}

class Reader {
  private at = 0;

  constructor(private readonly lines: Lines) {}

  done(): boolean {
    return this.at >= this.lines.indents.length;
  }

  private indent(): number {
    return this.lines.indents[this.at] ?? -1;
  }

  private content(): string {
    return this.lines.contents[this.at] ?? '';
  }

  /** The node whose first line is the current one, at its indent. */
  node(): unknown {
    const content = this.content();
    if (content === '-' || content.startsWith('- ')) return this.sequence(this.indent());
    if (splitEntry(content) !== undefined) return this.mapping(this.indent());
    return bail();
  }

  /** What follows `key:` or `-` with nothing after it: a deeper node, a sequence at `indent` (after a key), or null. */
  private childOf(indent: number, afterKey: boolean): unknown {
    if (this.done()) return null;
    if (this.indent() > indent) return this.node();
    if (afterKey && this.indent() === indent && (this.content() === '-' || this.content().startsWith('- '))) return this.sequence(indent);
    return null;
  }

  /** A value given on its own line: nothing may continue it on deeper lines. */
  private inline(raw: string, indent: number): unknown {
    const value = readScalar(raw);
    if (!this.done() && this.indent() > indent) bail();
    return value;
  }

  private mapping(indent: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    while (!this.done() && this.indent() === indent) {
      const entry = splitEntry(this.content());
      if (entry === undefined) bail();
      const [keyText, raw] = entry ?? ['', ''];
      const key = readKey(keyText);
      if (Object.hasOwn(map, key)) bail();
      this.at++;
      const value = raw.trim() === '' || raw.trimStart().startsWith('#') ? this.childOf(indent, true) : this.inline(raw, indent);
      map[key] = value;
    }
    if (!this.done() && this.indent() > indent) bail();
    return map;
  }

  private sequence(indent: number): unknown[] {
    const items: unknown[] = [];
    while (!this.done() && this.indent() === indent && (this.content() === '-' || this.content().startsWith('- '))) {
      const rest = this.content().slice(1);
      const trimmed = rest.trimStart();
      if (trimmed === '' || trimmed.startsWith('#')) {
        this.at++;
        items.push(this.childOf(indent, false));
        continue;
      }
      const column = indent + 1 + (rest.length - trimmed.length);
      if (trimmed === '-' || trimmed.startsWith('- ') || splitEntry(trimmed) !== undefined) {
        // Compact notation: what follows the dash is the first line of a node at its own column.
        this.lines.indents[this.at] = column;
        this.lines.contents[this.at] = trimmed;
        items.push(this.node());
        continue;
      }
      this.at++;
      items.push(this.inline(trimmed, indent));
    }
    return items;
  }
}

/**
 * The value of one YAML document, or of one block-sequence entry when `entry` is set (its first line starts with
 * `- `), as the yaml package's core schema reads it; undefined for anything outside the fast path, errors included.
 * `start`/`end` bound the text read, so nothing is copied.
 */
export function readFastYaml(text: string, options: { readonly start?: number; readonly end?: number; readonly entry?: boolean } = {}): unknown {
  try {
    const lines = new Lines(text, options.start ?? 0, options.end ?? text.length);
    if (lines.indents.length === 0) return undefined;
    const reader = new Reader(lines);
    const value = reader.node();
    if (!reader.done()) return undefined;
    if (options.entry !== true) return value;
    return Array.isArray(value) && value.length === 1 ? value[0] : undefined;
  } catch (error) {
    if (error instanceof Bail) return undefined;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Writing: what `stringify(value, { lineWidth: 0, version: '1.1' })` prints.

/** The yaml package's own printing, for the few scalars the fast path does not decide itself. */
export type ScalarPrinter = (value: string | number, asKey: boolean) => string;

const ALWAYS_QUOTED = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;

const plainKeys = new Map<string, boolean>();

/** True when the yaml package prints `text` plain: the rules of its plainString for one-line text. */
function printsPlain(text: string, asKey: boolean): boolean {
  const known = asKey ? plainKeys.get(text) : undefined;
  if (known !== undefined) return known;
  const plain = text !== '' && !ALWAYS_QUOTED.test(text) && !YAML_1_1.some((tag) => tag.test.test(text));
  if (asKey) {
    if (plainKeys.size >= 10_000) plainKeys.clear();
    plainKeys.set(text, plain);
  }
  return plain;
}

class Writer {
  private readonly seen = new Set<object>();

  constructor(private readonly print: ScalarPrinter, private readonly out: string[]) {}

  private scalar(value: unknown, asKey: boolean): string {
    if (value === null) return 'null';
    if (value === true) return 'true';
    if (value === false) return 'false';
    if (typeof value === 'number') return Number.isSafeInteger(value) && !Object.is(value, -0) ? String(value) : this.print(value, false);
    if (typeof value !== 'string') return bail();
    // Multi-line text, long keys (explicit `? ` keys) and document markers are printed by rules of their own.
    if (value.includes('\n') || (asKey && value.length > 1000) || /^(?:---|\.\.\.)/.test(value)) bail();
    return printsPlain(value, asKey) ? value : this.print(value, asKey);
  }

  private collection(value: object): void {
    // The yaml package prints an object met twice as an anchor and an alias.
    if (this.seen.has(value)) bail();
    this.seen.add(value);
  }

  /** A non-empty map or sequence as block lines at `indent`. */
  block(value: unknown, indent: string): void {
    if (Array.isArray(value)) {
      this.collection(value);
      for (const item of value) {
        const before = this.out.length;
        this.value(item, `${indent}  `, `${indent}- `);
        const first = this.out[before];
        if (first !== undefined && first.startsWith(`${indent}  `) && before < this.out.length && isNested(item)) {
          this.out[before] = `${indent}- ${first.slice(indent.length + 2)}`;
        }
      }
      return;
    }
    if (typeof value !== 'object' || value === null) return bail();
    this.collection(value);
    for (const [key, child] of Object.entries(value)) {
      if (child === undefined) continue;
      if (typeof child === 'function' || typeof child === 'symbol' || typeof child === 'bigint') bail();
      this.value(child, `${indent}  `, `${indent}${this.scalar(key, true)}:`);
    }
  }

  /** One value after `lead` (`key:` or `- `): inline when scalar or empty, else as a block at `indent`. */
  private value(value: unknown, indent: string, lead: string): void {
    const sep = lead.endsWith(':') ? ' ' : '';
    if (Array.isArray(value)) {
      if (value.length === 0) { this.out.push(`${lead}${sep}[]`); return; }
      if (sep === '') { this.block(value, indent); return; }
      this.out.push(lead);
      this.block(value, indent);
      return;
    }
    if (typeof value === 'object' && value !== null) {
      if (Object.values(value).every((child) => child === undefined)) { this.out.push(`${lead}${sep}{}`); return; }
      if (sep === '') { this.block(value, indent); return; }
      this.out.push(lead);
      this.block(value, indent);
      return;
    }
    this.out.push(`${lead}${sep}${this.scalar(value, false)}`);
  }
}

const isNested = (value: unknown): boolean => typeof value === 'object' && value !== null &&
  (Array.isArray(value) ? value.length > 0 : Object.values(value).some((child) => child !== undefined));

/**
 * `value` (a non-empty object or array, as the rewrite prints) as `stringify(value, { lineWidth: 0, version: '1.1' })`
 * of the yaml package prints it, indented by `indent`, without the final newline; undefined for a value the fast path
 * does not print (multi-line text, an object met twice, anything not JSON).
 */
export function writeFastYaml(value: unknown, print: ScalarPrinter, indent = ''): string | undefined {
  if (!isNested(value)) return undefined;
  const out: string[] = [];
  try {
    new Writer(print, out).block(value, indent);
  } catch (error) {
    if (error instanceof Bail) return undefined;
    throw error;
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Printing through the fast path, the yaml package deciding the rest.

/** YAML 1.1 quoting, as kubectl reads it: a label value "yes" or "2025-07-06" must stay a string. No folding. */
export const YAML_OUTPUT = { lineWidth: 0, version: '1.1' } as const;

const printed = new Map<string, string>();

/** The yaml package's printing of one scalar as a map value or key, remembered: the same few recur in every slice. */
const packageScalar: ScalarPrinter = (value, asKey) => {
  const key = `${asKey ? 'k' : 'v'}${typeof value}:${value}`;
  let text = printed.get(key);
  if (text === undefined) {
    text = asKey
      ? stringify({ [String(value)]: null }, YAML_OUTPUT).slice(0, -': null\n'.length)
      : stringify({ k: value }, YAML_OUTPUT).slice('k: '.length, -1);
    // Short ones recur (timestamps, quoted numbers); long ones (an originals annotation) are each slice's own.
    if (key.length > 200) return text;
    if (printed.size >= 10_000) printed.clear();
    printed.set(key, text);
  }
  return text;
};

/** Exactly `stringify(value, YAML_OUTPUT)`. */
export function printYaml(value: unknown): string {
  const fast = writeFastYaml(value, packageScalar);
  return fast === undefined ? stringify(value, YAML_OUTPUT) : `${fast}\n`;
}

/** `value` as an entry of a sequence under a top-level key: the lines `stringify({ key: [value] })` prints after `key:`. */
export function printYamlEntry(value: unknown): string {
  const fast = writeFastYaml([value], packageScalar, '  ');
  return fast === undefined ? stringify({ items: [value] }, YAML_OUTPUT).slice('items:\n'.length) : `${fast}\n`;
}
