// A small interpreter for the part of Go text/template, Sprig and Helm that charts/shortcut-webhook uses, so the tests
// can render the chart without helm (which cannot be installed on this machine). It follows Go's rules where a chart
// bug would hide: whitespace trimming ({{- and -}}), variable scope, truthiness, errors on fields of nil, the
// float64-versus-int comparison error (Helm values are float64), "<no value>" for missing keys, and Sprig's argument
// order. Any function it does not know is an error, so the chart cannot drift outside what is emulated here unseen.
// It is not Helm: genCA/genSignedCert return stand-in PEM blocks (readable JSON inside), and lookup finds nothing,
// as in `helm template`.
import { Buffer } from 'node:buffer';
import { stringify } from 'yaml';

export class TemplateError extends Error {}

// ---------------------------------------------------------------------------------------------------------------
// Values. Go ints are bigint here and float64s are number: Helm values parsed from YAML are float64, literals and
// the results of `int`, `len`, `mul` are ints, and Go refuses to compare the two kinds.
type Value = unknown;
type GoMap = { [key: string]: Value };

function isMap(value: Value): value is GoMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function truthy(value: Value): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (Array.isArray(value)) return value.length > 0;
  if (isMap(value)) return Object.keys(value).length > 0;
  return true;
}

// fmt's %v of a float64 (strconv 'g', shortest): exponent form when the exponent is < -4 or >= 6, so a value of
// 1000000 prints as 1e+06, as it does in Helm.
function formatFloat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
  if (value === 0) return '0';
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}

function goPrint(value: Value): string {
  if (value === undefined || value === null) return '<no value>';
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return formatFloat(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(goPrint).join(' ')}]`;
  if (isMap(value)) {
    return `map[${Object.keys(value).sort().map((key) => `${key}:${goPrint(value[key])}`).join(' ')}]`;
  }
  return String(value);
}

function typeName(value: Value): string {
  if (value === undefined || value === null) return '<nil>';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'float64';
  if (Array.isArray(value)) return '[]interface {}';
  if (isMap(value)) return 'map[string]interface {}';
  return typeof value;
}

// ---------------------------------------------------------------------------------------------------------------
// Lexing: text and actions, with the trim markers applied.
interface RawAction { readonly content: string; readonly line: number }
type Item = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'action'; readonly action: RawAction };

function isSpace(char: string | undefined): boolean {
  return char === ' ' || char === '\t' || char === '\r' || char === '\n';
}

function splitItems(source: string, file: string): Item[] {
  const items: Item[] = [];
  let position = 0;
  let trimNext = false;
  while (position <= source.length) {
    const open = source.indexOf('{{', position);
    let text = source.slice(position, open === -1 ? source.length : open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    if (open === -1) {
      items.push({ kind: 'text', text });
      break;
    }
    let start = open + 2;
    if (source[start] === '-' && isSpace(source[start + 1])) {
      text = text.replace(/[ \t\r\n]+$/, '');
      start += 1;
    }
    items.push({ kind: 'text', text });
    // Find the closing braces outside strings, raw strings and comments.
    let cursor = start;
    let close = -1;
    while (cursor < source.length) {
      const char = source[cursor];
      if (char === '"') {
        cursor += 1;
        while (cursor < source.length && source[cursor] !== '"') cursor += source[cursor] === '\\' ? 2 : 1;
        cursor += 1;
      } else if (char === '`') {
        cursor = source.indexOf('`', cursor + 1) + 1;
        if (cursor === 0) break;
      } else if (source.startsWith('/*', cursor)) {
        cursor = source.indexOf('*/', cursor + 2) + 2;
        if (cursor === 1) break;
      } else if (source.startsWith('}}', cursor)) {
        close = cursor;
        break;
      } else {
        cursor += 1;
      }
    }
    const line = source.slice(0, open).split('\n').length;
    if (close === -1) throw new TemplateError(`${file}:${line}: unclosed action`);
    let end = close;
    trimNext = false;
    if (source[close - 1] === '-' && isSpace(source[close - 2])) {
      end = close - 1;
      trimNext = true;
    }
    items.push({ kind: 'action', action: { content: source.slice(start, end).trim(), line } });
    position = close + 2;
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing actions into pipelines.
type Operand =
  | { readonly kind: 'field'; readonly chain: readonly string[] }
  | { readonly kind: 'var'; readonly name: string; readonly chain: readonly string[] }
  | { readonly kind: 'ident'; readonly name: string }
  | { readonly kind: 'literal'; readonly value: Value }
  | { readonly kind: 'pipe'; readonly pipe: Pipeline };
type Command = readonly Operand[];
interface Pipeline {
  readonly decl: { readonly names: readonly string[]; readonly assign: boolean } | undefined;
  readonly commands: readonly Command[];
}

type Token =
  | { readonly kind: 'operand'; readonly operand: Operand; readonly attached?: boolean }
  | { readonly kind: 'punct'; readonly text: '(' | ')' | '|' | ',' | ':=' | '=' };

function tokenize(content: string, where: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const chainAt = (from: number): { chain: string[]; next: number } => {
    const chain: string[] = [];
    let cursor = from;
    while (content[cursor] === '.') {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(content.slice(cursor + 1));
      if (!match) break;
      chain.push(match[0]);
      cursor += 1 + match[0].length;
    }
    return { chain, next: cursor };
  };
  while (i < content.length) {
    const char = content[i] ?? '';
    if (isSpace(char)) {
      i += 1;
    } else if (char === '(' || char === ')' || char === '|' || char === ',') {
      tokens.push({ kind: 'punct', text: char });
      i += 1;
    } else if (content.startsWith(':=', i)) {
      tokens.push({ kind: 'punct', text: ':=' });
      i += 2;
    } else if (char === '=') {
      tokens.push({ kind: 'punct', text: '=' });
      i += 1;
    } else if (char === '"') {
      let j = i + 1;
      while (j < content.length && content[j] !== '"') j += content[j] === '\\' ? 2 : 1;
      tokens.push({ kind: 'operand', operand: { kind: 'literal', value: JSON.parse(content.slice(i, j + 1)) as string } });
      i = j + 1;
    } else if (char === '`') {
      const j = content.indexOf('`', i + 1);
      if (j === -1) throw new TemplateError(`${where}: unterminated raw string`);
      tokens.push({ kind: 'operand', operand: { kind: 'literal', value: content.slice(i + 1, j) } });
      i = j + 1;
    } else if (char === '$') {
      const match = /^\$[A-Za-z0-9_]*/.exec(content.slice(i));
      const name = match?.[0] ?? '$';
      const { chain, next } = chainAt(i + name.length);
      tokens.push({ kind: 'operand', operand: { kind: 'var', name, chain } });
      i = next;
    } else if (char === '.') {
      const { chain, next } = chainAt(i);
      // `(pipeline).Field` (no space before the dot) is a field of the parenthesised value.
      tokens.push({ kind: 'operand', operand: { kind: 'field', chain }, attached: content[i - 1] === ')' });
      i = chain.length === 0 ? i + 1 : next;
    } else if (/[-0-9]/.test(char)) {
      const match = /^-?[0-9]+(\.[0-9]+)?/.exec(content.slice(i));
      if (!match) throw new TemplateError(`${where}: bad number at ${content.slice(i)}`);
      const value: Value = match[1] === undefined ? BigInt(match[0]) : Number(match[0]);
      tokens.push({ kind: 'operand', operand: { kind: 'literal', value } });
      i += match[0].length;
    } else {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(content.slice(i));
      if (!match) throw new TemplateError(`${where}: unexpected ${JSON.stringify(content.slice(i, i + 10))}`);
      const word = match[0];
      const literals: Record<string, Value> = { true: true, false: false, nil: null };
      tokens.push({
        kind: 'operand',
        operand: word in literals ? { kind: 'literal', value: literals[word] } : { kind: 'ident', name: word },
      });
      i += word.length;
    }
  }
  return tokens;
}

function parsePipeline(content: string, where: string): Pipeline {
  const tokens = tokenize(content, where);
  let position = 0;
  const parse = (inParens: boolean): Pipeline => {
    let decl: Pipeline['decl'];
    // `$a := ...`, `$a = ...`, `$i, $v := ...`
    const names: string[] = [];
    let look = position;
    while (true) {
      const token = tokens[look];
      if (token?.kind !== 'operand' || token.operand.kind !== 'var' || token.operand.chain.length > 0) break;
      names.push(token.operand.name);
      const after = tokens[look + 1];
      if (after?.kind === 'punct' && after.text === ',') {
        look += 2;
        continue;
      }
      if (after?.kind === 'punct' && (after.text === ':=' || after.text === '=')) {
        decl = { names, assign: after.text === '=' };
        position = look + 2;
      }
      break;
    }
    const commands: Operand[][] = [[]];
    while (position < tokens.length) {
      const token = tokens[position];
      if (token === undefined) break;
      if (token.kind === 'punct') {
        if (token.text === ')') {
          if (!inParens) throw new TemplateError(`${where}: unexpected )`);
          break;
        }
        if (token.text === '|') {
          commands.push([]);
          position += 1;
          continue;
        }
        if (token.text === '(') {
          position += 1;
          const inner = parse(true);
          const closing = tokens[position];
          if (closing?.kind !== 'punct' || closing.text !== ')') throw new TemplateError(`${where}: missing )`);
          position += 1;
          const next = tokens[position];
          if (next?.kind === 'operand' && next.attached === true) {
            throw new TemplateError(`${where}: fields of a parenthesised pipeline are not emulated`);
          }
          commands.at(-1)?.push({ kind: 'pipe', pipe: inner });
          continue;
        }
        throw new TemplateError(`${where}: unexpected ${token.text}`);
      }
      commands.at(-1)?.push(token.operand);
      position += 1;
    }
    if (commands.some((command) => command.length === 0)) throw new TemplateError(`${where}: empty command`);
    return { decl, commands };
  };
  const pipe = parse(false);
  if (position !== tokens.length) throw new TemplateError(`${where}: unexpected tokens after pipeline`);
  return pipe;
}

// ---------------------------------------------------------------------------------------------------------------
// The template tree.
interface BlockNode {
  readonly kind: 'if' | 'with' | 'range';
  readonly pipe: Pipeline;
  readonly body: readonly Node[];
  readonly otherwise: readonly Node[];
  readonly where: string;
}
type Node =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'action'; readonly pipe: Pipeline; readonly where: string }
  | BlockNode
  | { readonly kind: 'template'; readonly name: string; readonly pipe: Pipeline | undefined; readonly where: string };

interface ParsedList { readonly nodes: Node[]; readonly stop: 'end' | 'else' | 'eof'; readonly rest: string; readonly where: string }

class Parser {
  private position = 0;

  constructor(
    private readonly items: readonly Item[],
    private readonly file: string,
    private readonly defines: Map<string, readonly Node[]>,
  ) {}

  parseFile(): Node[] {
    const list = this.parseList();
    if (list.stop !== 'eof') throw new TemplateError(`${list.where}: unexpected {{${list.stop}}}`);
    return list.nodes;
  }

  private parseList(): ParsedList {
    const nodes: Node[] = [];
    while (this.position < this.items.length) {
      const item = this.items[this.position];
      this.position += 1;
      if (item === undefined) break;
      if (item.kind === 'text') {
        if (item.text !== '') nodes.push({ kind: 'text', text: item.text });
        continue;
      }
      const { content, line } = item.action;
      const where = `${this.file}:${line}`;
      if (content.startsWith('/*')) {
        if (!content.endsWith('*/')) throw new TemplateError(`${where}: a comment must fill its action`);
        continue;
      }
      const keyword = /^[a-z]+/.exec(content)?.[0] ?? '';
      const rest = content.slice(keyword.length).trim();
      switch (keyword) {
        case 'end':
          return { nodes, stop: 'end', rest, where };
        case 'else':
          return { nodes, stop: 'else', rest, where };
        case 'if':
        case 'with':
        case 'range':
          nodes.push(this.parseBlock(keyword, rest, where));
          break;
        case 'define': {
          const name = /^"([^"]+)"$/.exec(rest)?.[1];
          if (name === undefined) throw new TemplateError(`${where}: define needs a quoted name`);
          const body = this.parseList();
          if (body.stop !== 'end') throw new TemplateError(`${where}: define without end`);
          if (this.defines.has(name)) throw new TemplateError(`${where}: template ${name} defined twice`);
          this.defines.set(name, body.nodes);
          break;
        }
        case 'template': {
          const match = /^"([^"]+)"\s*(.*)$/.exec(rest);
          if (!match?.[1]) throw new TemplateError(`${where}: template needs a quoted name`);
          nodes.push({ kind: 'template', name: match[1], pipe: match[2] ? parsePipeline(match[2], where) : undefined, where });
          break;
        }
        case 'block':
        case 'break':
        case 'continue':
          throw new TemplateError(`${where}: {{${keyword}}} is not emulated`);
        default:
          nodes.push({ kind: 'action', pipe: parsePipeline(content, where), where });
      }
    }
    return { nodes, stop: 'eof', rest: '', where: `${this.file}:end` };
  }

  private parseBlock(kind: 'if' | 'with' | 'range', rest: string, where: string): Node {
    const pipe = parsePipeline(rest, where);
    const body = this.parseList();
    let otherwise: Node[] = [];
    if (body.stop === 'else') {
      const chained = /^(if|with)\s+(.*)$/s.exec(body.rest);
      if (chained?.[1] === 'if' || chained?.[1] === 'with') {
        if (kind === 'range') throw new TemplateError(`${body.where}: else ${chained[1]} after range`);
        // `else if` shares the closing {{end}} of the whole chain.
        otherwise = [this.parseBlock(chained[1], chained[2] ?? '', body.where)];
      } else {
        if (body.rest !== '') throw new TemplateError(`${body.where}: unexpected else ${body.rest}`);
        const tail = this.parseList();
        if (tail.stop !== 'end') throw new TemplateError(`${where}: {{${kind}}} without end`);
        otherwise = tail.nodes;
      }
    } else if (body.stop !== 'end') {
      throw new TemplateError(`${where}: {{${kind}}} without end`);
    }
    return { kind, pipe, body: body.nodes, otherwise, where };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation.
class Scope {
  private readonly frames: Map<string, Value>[] = [];

  constructor(root: Value) {
    this.frames.push(new Map([['$', root]]));
  }

  push(): void {
    this.frames.push(new Map());
  }

  pop(): void {
    this.frames.pop();
  }

  declare(name: string, value: Value): void {
    this.frames.at(-1)?.set(name, value);
  }

  assign(name: string, value: Value, where: string): void {
    for (let i = this.frames.length - 1; i >= 0; i -= 1) {
      const frame = this.frames[i];
      if (frame?.has(name)) {
        frame.set(name, value);
        return;
      }
    }
    throw new TemplateError(`${where}: undefined variable ${name}`);
  }

  get(name: string, where: string): Value {
    for (let i = this.frames.length - 1; i >= 0; i -= 1) {
      const frame = this.frames[i];
      if (frame?.has(name)) return frame.get(name);
    }
    throw new TemplateError(`${where}: undefined variable ${name}`);
  }
}

function field(value: Value, name: string, where: string): Value {
  if (value === undefined || value === null) throw new TemplateError(`${where}: nil pointer evaluating interface {}.${name}`);
  if (!isMap(value)) throw new TemplateError(`${where}: can't evaluate field ${name} in type ${typeName(value)}`);
  return Object.hasOwn(value, name) ? value[name] : undefined;
}

function kindOf(value: Value): string {
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'float';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  return 'other';
}

function goEqual(left: Value, right: Value, where: string): boolean {
  if (left === undefined || left === null || right === undefined || right === null) {
    return (left === undefined || left === null) && (right === undefined || right === null);
  }
  if (kindOf(left) !== kindOf(right)) throw new TemplateError(`${where}: incompatible types for comparison`);
  if (kindOf(left) === 'other') throw new TemplateError(`${where}: non-comparable type ${typeName(left)}`);
  return left === right;
}

function goLess(left: Value, right: Value, where: string): boolean {
  const kind = kindOf(left);
  if (kind !== kindOf(right) || kind === 'bool' || kind === 'other') {
    throw new TemplateError(`${where}: incompatible types for comparison`);
  }
  return (left as number | bigint | string) < (right as number | bigint | string);
}

function toInt(value: Value): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(Math.trunc(value));
  if (typeof value === 'boolean') return value ? 1n : 0n;
  if (typeof value === 'string') return /^-?[0-9]+$/.test(value.trim()) ? BigInt(value.trim()) : 0n;
  return 0n;
}

function asString(value: Value, fn: string, where: string): string {
  if (typeof value !== 'string') throw new TemplateError(`${where}: ${fn} wants a string, got ${typeName(value)}`);
  return value;
}

function sprintf(format: string, args: readonly Value[]): string {
  let index = 0;
  return format.replace(/%([%sdvq])/g, (_match, verb: string) => {
    if (verb === '%') return '%';
    if (index >= args.length) return `%!${verb}(MISSING)`;
    const arg = args[index];
    index += 1;
    switch (verb) {
      case 's':
        return typeof arg === 'string' ? arg : `%!s(${typeName(arg)}=${goPrint(arg)})`;
      case 'd':
        return typeof arg === 'bigint' ? arg.toString() : `%!d(${typeName(arg)}=${goPrint(arg)})`;
      case 'q':
        return typeof arg === 'string' ? JSON.stringify(arg) : `%!q(${typeName(arg)}=${goPrint(arg)})`;
      default:
        return goPrint(arg);
    }
  });
}

function stringValue(value: Value): string {
  return typeof value === 'string' ? value : goPrint(value);
}

function toYaml(value: Value): string {
  if (value === undefined || value === null) return 'null';
  const plain = JSON.parse(JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? Number(item) : item))) as unknown;
  return stringify(plain, { sortMapEntries: true, indentSeq: false, lineWidth: 0 }).replace(/\n$/, '');
}

function indent(spaces: bigint, text: string): string {
  const pad = ' '.repeat(Number(spaces));
  return pad + text.replaceAll('\n', `\n${pad}`);
}

// Stand-ins for Sprig's generated certificates: PEM-shaped, with the request inside as JSON so tests can read it.
interface FakeCertificate { readonly Cert: string; readonly Key: string }
let certificateSerial = 0;
function fakePem(kind: string, body: object): string {
  const encoded = Buffer.from(JSON.stringify(body)).toString('base64');
  return `-----BEGIN ${kind}-----\n${encoded}\n-----END ${kind}-----\n`;
}
export function readFakePem(pem: string): unknown {
  const body = /-----BEGIN [A-Z ]+-----\n([A-Za-z0-9+/=]+)\n-----END/.exec(pem)?.[1];
  if (body === undefined) throw new TemplateError('not a stand-in PEM block');
  return JSON.parse(Buffer.from(body, 'base64').toString('utf8'));
}

export interface RenderContext {
  readonly Values: GoMap;
  readonly Release: GoMap;
  readonly Chart: GoMap;
  readonly Capabilities?: GoMap;
}

export class TemplateSet {
  private readonly defines = new Map<string, readonly Node[]>();
  private readonly files = new Map<string, readonly Node[]>();
  private depth = 0;

  add(file: string, source: string): void {
    this.files.set(file, new Parser(splitItems(source, file), file, this.defines).parseFile());
  }

  definedNames(): string[] {
    return [...this.defines.keys()];
  }

  render(file: string, data: RenderContext): string {
    const nodes = this.files.get(file);
    if (nodes === undefined) throw new TemplateError(`no template file ${file}`);
    // Helm replaces Go's "<no value>" (a missing map key) by nothing.
    return this.run(nodes, data, new Scope(data)).replaceAll('<no value>', '');
  }

  private run(nodes: readonly Node[], dot: Value, scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      switch (node.kind) {
        case 'text':
          out += node.text;
          break;
        case 'action': {
          const value = this.pipeline(node.pipe, dot, scope, node.where);
          if (node.pipe.decl === undefined) out += goPrint(value);
          break;
        }
        case 'template':
          out += this.include(node.name, node.pipe ? this.pipeline(node.pipe, dot, scope, node.where) : undefined, node.where);
          break;
        case 'if':
        case 'with': {
          scope.push();
          const value = this.pipeline(node.pipe, dot, scope, node.where);
          if (truthy(value)) out += this.run(node.body, node.kind === 'with' ? value : dot, scope);
          scope.pop();
          if (!truthy(value)) out += this.runScoped(node.otherwise, dot, scope);
          break;
        }
        case 'range':
          out += this.range(node, dot, scope);
          break;
      }
    }
    return out;
  }

  private runScoped(nodes: readonly Node[], dot: Value, scope: Scope): string {
    scope.push();
    try {
      return this.run(nodes, dot, scope);
    } finally {
      scope.pop();
    }
  }

  private range(node: BlockNode, dot: Value, scope: Scope): string {
    const names = node.pipe.decl?.names ?? [];
    const collection = this.pipeline({ decl: undefined, commands: node.pipe.commands }, dot, scope, node.where);
    let entries: [Value, Value][];
    if (collection === undefined || collection === null) entries = [];
    else if (Array.isArray(collection)) entries = collection.map((item, index) => [BigInt(index), item]);
    else if (isMap(collection)) entries = Object.keys(collection).sort().map((key) => [key, collection[key]]);
    else if (typeof collection === 'bigint') entries = Array.from({ length: Number(collection) }, (_v, i) => [BigInt(i), BigInt(i)]);
    else throw new TemplateError(`${node.where}: range can't iterate over ${goPrint(collection)}`);
    if (entries.length === 0) return this.runScoped(node.otherwise, dot, scope);
    let out = '';
    for (const [key, item] of entries) {
      scope.push();
      if (names.length === 1 && names[0] !== undefined) scope.declare(names[0], item);
      if (names.length === 2 && names[0] !== undefined && names[1] !== undefined) {
        scope.declare(names[0], key);
        scope.declare(names[1], item);
      }
      out += this.run(node.body, item, scope);
      scope.pop();
    }
    return out;
  }

  private include(name: string, data: Value, where: string): string {
    const nodes = this.defines.get(name);
    if (nodes === undefined) throw new TemplateError(`${where}: no template "${name}"`);
    this.depth += 1;
    if (this.depth > 100) throw new TemplateError(`${where}: include nested too deep`);
    try {
      return this.run(nodes, data, new Scope(data));
    } finally {
      this.depth -= 1;
    }
  }

  private pipeline(pipe: Pipeline, dot: Value, scope: Scope, where: string): Value {
    let value: Value;
    let piped = false;
    for (const command of pipe.commands) {
      value = this.command(command, dot, scope, where, piped ? [value] : []);
      piped = true;
    }
    if (pipe.decl !== undefined) {
      const [name] = pipe.decl.names;
      if (name === undefined || pipe.decl.names.length !== 1) throw new TemplateError(`${where}: bad declaration`);
      if (pipe.decl.assign) scope.assign(name, value, where);
      else scope.declare(name, value);
    }
    return value;
  }

  private operand(operand: Operand, dot: Value, scope: Scope, where: string): Value {
    switch (operand.kind) {
      case 'literal':
        return operand.value;
      case 'field':
        return operand.chain.reduce((value, name) => field(value, name, where), dot);
      case 'var':
        return operand.chain.reduce((value, name) => field(value, name, where), scope.get(operand.name, where));
      case 'pipe':
        return this.pipeline(operand.pipe, dot, scope, where);
      case 'ident':
        return this.call(operand.name, [], where);
    }
  }

  private command(command: Command, dot: Value, scope: Scope, where: string, pipedIn: Value[]): Value {
    const [head, ...rest] = command;
    if (head === undefined) throw new TemplateError(`${where}: empty command`);
    if (head.kind === 'ident') {
      const args = rest.map((operand) => this.operand(operand, dot, scope, where));
      return this.call(head.name, [...args, ...pipedIn], where);
    }
    if (rest.length > 0 || pipedIn.length > 0) throw new TemplateError(`${where}: can't give argument to non-function`);
    return this.operand(head, dot, scope, where);
  }

  private call(name: string, args: Value[], where: string): Value {
    const arity = (min: number, max = min): void => {
      if (args.length < min || args.length > max) {
        throw new TemplateError(`${where}: wrong number of args for ${name}: want ${min}${max !== min ? `..${max}` : ''} got ${args.length}`);
      }
    };
    const arg = (index: number): Value => args[index];
    switch (name) {
      case 'include':
        arity(2);
        return this.include(asString(arg(0), name, where), arg(1), where);
      case 'toYaml':
        arity(1);
        return toYaml(arg(0));
      case 'toJson':
        arity(1);
        return JSON.stringify(arg(0) ?? null);
      case 'nindent':
        arity(2);
        return `\n${indent(toInt(arg(0)), stringValue(arg(1)))}`;
      case 'indent':
        arity(2);
        return indent(toInt(arg(0)), stringValue(arg(1)));
      case 'quote':
        return args.filter((item) => item !== undefined && item !== null).map((item) => JSON.stringify(stringValue(item))).join(' ');
      case 'squote':
        return args.filter((item) => item !== undefined && item !== null).map((item) => `'${stringValue(item)}'`).join(' ');
      case 'default':
        arity(1, 2);
        return args.length === 2 && truthy(arg(1)) ? arg(1) : arg(0);
      case 'required': {
        arity(2);
        const value = arg(1);
        if (value === undefined || value === null || value === '') throw new TemplateError(`${where}: ${goPrint(arg(0))}`);
        return value;
      }
      case 'fail':
        arity(1);
        throw new TemplateError(`${where}: ${goPrint(arg(0))}`);
      case 'printf':
        if (args.length < 1) arity(1);
        return sprintf(asString(arg(0), name, where), args.slice(1));
      case 'print':
        return args.map(stringValue).join('');
      case 'eq':
        if (args.length < 2) arity(2);
        return args.slice(1).some((other) => goEqual(arg(0), other, where));
      case 'ne':
        arity(2);
        return !goEqual(arg(0), arg(1), where);
      case 'lt':
        arity(2);
        return goLess(arg(0), arg(1), where);
      case 'le':
        arity(2);
        return goLess(arg(0), arg(1), where) || goEqual(arg(0), arg(1), where);
      case 'gt':
        arity(2);
        return goLess(arg(1), arg(0), where);
      case 'ge':
        arity(2);
        return goLess(arg(1), arg(0), where) || goEqual(arg(0), arg(1), where);
      case 'and': {
        if (args.length < 1) arity(1);
        for (const item of args) if (!truthy(item)) return item;
        return args.at(-1);
      }
      case 'or': {
        if (args.length < 1) arity(1);
        for (const item of args) if (truthy(item)) return item;
        return args.at(-1);
      }
      case 'not':
        arity(1);
        return !truthy(arg(0));
      case 'empty':
        arity(1);
        return !truthy(arg(0));
      case 'len': {
        arity(1);
        const value = arg(0);
        if (typeof value === 'string' || Array.isArray(value)) return BigInt(value.length);
        if (isMap(value)) return BigInt(Object.keys(value).length);
        throw new TemplateError(`${where}: len of ${typeName(value)}`);
      }
      case 'int':
        arity(1);
        return toInt(arg(0));
      case 'mul':
        if (args.length < 1) arity(1);
        return args.reduce<bigint>((product, item) => product * toInt(item), 1n);
      case 'ternary':
        arity(3);
        if (typeof arg(2) !== 'boolean') throw new TemplateError(`${where}: ternary wants a bool condition`);
        return arg(2) === true ? arg(0) : arg(1);
      case 'contains':
        arity(2);
        return stringValue(arg(1)).includes(stringValue(arg(0)));
      case 'trunc': {
        arity(2);
        const count = Number(toInt(arg(0)));
        const text = stringValue(arg(1));
        if (count < 0 && text.length + count > 0) return text.slice(text.length + count);
        return count >= 0 && text.length > count ? text.slice(0, count) : text;
      }
      case 'trimSuffix': {
        arity(2);
        const suffix = stringValue(arg(0));
        const text = stringValue(arg(1));
        return suffix !== '' && text.endsWith(suffix) ? text.slice(0, -suffix.length) : text;
      }
      case 'replace':
        arity(3);
        return stringValue(arg(2)).replaceAll(stringValue(arg(0)), stringValue(arg(1)));
      case 'lower':
        arity(1);
        return stringValue(arg(0)).toLowerCase();
      case 'upper':
        arity(1);
        return stringValue(arg(0)).toUpperCase();
      case 'b64enc':
        arity(1);
        return Buffer.from(stringValue(arg(0))).toString('base64');
      case 'list':
        return [...args];
      case 'dict': {
        const map: GoMap = {};
        for (let i = 0; i < args.length; i += 2) map[stringValue(args[i])] = args[i + 1] ?? '';
        return map;
      }
      case 'hasKey': {
        arity(2);
        const map = arg(0);
        if (!isMap(map)) throw new TemplateError(`${where}: hasKey wants a map`);
        return Object.hasOwn(map, asString(arg(1), name, where));
      }
      case 'index': {
        if (args.length < 1) arity(1);
        return args.slice(1).reduce((value: Value, key) => {
          if (Array.isArray(value)) return value[Number(toInt(key))];
          if (isMap(value)) return value[asString(key, name, where)];
          throw new TemplateError(`${where}: can't index item of type ${typeName(value)}`);
        }, arg(0));
      }
      case 'dig': {
        if (args.length < 3) arity(3);
        let value: Value = args.at(-1);
        if (!isMap(value)) throw new TemplateError(`${where}: dig wants a map last`);
        for (const key of args.slice(0, -2)) {
          if (!isMap(value) || !Object.hasOwn(value, asString(key, name, where))) return args.at(-2);
          value = value[asString(key, name, where)];
        }
        return value;
      }
      case 'lookup':
        arity(4);
        return {};
      case 'genCA': {
        arity(2);
        const commonName = asString(arg(0), name, where);
        if (typeof arg(1) !== 'bigint') throw new TemplateError(`${where}: genCA wants int days, got ${typeName(arg(1))}`);
        certificateSerial += 1;
        const ca: FakeCertificate = {
          Cert: fakePem('CERTIFICATE', { commonName, ca: true, serial: certificateSerial }),
          Key: fakePem('RSA PRIVATE KEY', { of: commonName, serial: certificateSerial }),
        };
        return ca;
      }
      case 'genSignedCert': {
        arity(5);
        const commonName = asString(arg(0), name, where);
        const ips = arg(1);
        const alternateNames = arg(2);
        const ca = arg(4);
        if (ips !== null && !Array.isArray(ips)) throw new TemplateError(`${where}: genSignedCert wants a list of IPs or nil`);
        if (!Array.isArray(alternateNames) || !alternateNames.every((item) => typeof item === 'string')) {
          throw new TemplateError(`${where}: genSignedCert wants a list of DNS names`);
        }
        if (typeof arg(3) !== 'bigint') throw new TemplateError(`${where}: genSignedCert wants int days`);
        if (!isMap(ca) || typeof ca['Cert'] !== 'string') throw new TemplateError(`${where}: genSignedCert wants a CA`);
        certificateSerial += 1;
        const issuer = readFakePem(ca['Cert']);
        const cert: FakeCertificate = {
          Cert: fakePem('CERTIFICATE', { commonName, alternateNames, issuer, serial: certificateSerial }),
          Key: fakePem('RSA PRIVATE KEY', { of: commonName, serial: certificateSerial }),
        };
        return cert;
      }
      default:
        throw new TemplateError(`${where}: function "${name}" not defined (or not emulated)`);
    }
  }
}
