// The fast YAML path must change speed, never a result: what it reads is what the yaml package reads, what it prints
// is what the yaml package prints, byte for byte, and the documents' names are the yaml package's numbering.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseAllDocuments, stringify } from 'yaml';
import { parseDocuments } from '../../src/util/documents.ts';
import { printYaml, printYamlEntry, readFastYaml, YAML_OUTPUT } from '../../src/util/yaml-fast.ts';

/** Text that trips quoting and typing rules: YAML 1.1 and 1.2 booleans, numbers, dates, indicators, spaces. */
const awkward = fc.constantFrom('yes', 'No', 'on', 'OFF', 'y', 'n', 'true', 'False', 'null', '~', 'NULL', '', ' ', ' lead', 'trail ',
  '010', '0o17', '0x1F', '1e3', '1.5', '.5', '.inf', '-.inf', '.nan', '1_000', '1:20', '2025-07-06', '2025-07-06T20:16:16Z',
  '10.61.0.151', 'fe80::1', '-', '-a', '- a', '?', '? a', 'a: b', 'a:b', 'a #b', 'a#b', '#a', '&a', '*a', '!a', '|', '>', '%a',
  '@a', '`a', '"a"', "'a'", "it's", 'a,b', '[a]', '{a}', 'a]', '---', '...', '--- a', 'key:', 'http://x:80/y', '<<', '=',
  '__proto__', 'multi\nline', 'tab\there', 'ünïcode', '12345', '-1', '+1', '0', '-0');
const long = fc.tuple(fc.array(fc.oneof(awkward, fc.stringMatching(/^[a-z0-9.:]{1,12}$/)), { minLength: 50, maxLength: 200 }), fc.constantFrom(',', ' ', '"'))
  .map(([parts, separator]) => parts.join(separator));
const text = fc.oneof(awkward, fc.string({ maxLength: 12 }), fc.stringMatching(/^[a-z][a-z0-9./-]{0,10}$/), long);
const scalar = fc.oneof(text, fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null));
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(text, tie('value'), { maxKeys: 5 }),
})).value;
const document = fc.dictionary(text, json, { minKeys: 1, maxKeys: 6 });

const reference = (source: string) => parseAllDocuments(source, { schema: 'core', uniqueKeys: true }).map((d) => d.toJS({ maxAliasCount: 100 }));

test('printYaml prints what stringify prints, byte for byte', () => {
  fc.assert(fc.property(fc.oneof(document, fc.array(json, { minLength: 1, maxLength: 4 })), (value) => {
    assert.equal(printYaml(value), stringify(value, YAML_OUTPUT));
  }), { numRuns: 2000 });
});

test('printYamlEntry prints an entry as stringify prints it under a top-level key', () => {
  fc.assert(fc.property(json, (value) => {
    assert.equal(`items:\n${printYamlEntry(value)}`, stringify({ items: [value] }, YAML_OUTPUT));
  }), { numRuns: 1000 });
});

test('what the fast reader reads, it reads as the yaml package does, in either layout of sequences', () => {
  fc.assert(fc.property(document, fc.boolean(), (value, indentSeq) => {
    const source = stringify(value, { indentSeq, lineWidth: 0 });
    const fast = readFastYaml(source);
    if (fast !== undefined) assert.deepEqual(fast, reference(source)[0]);
  }), { numRuns: 2000 });
});

/** Documents shaped as Kubernetes writes them: plain names, DNS-like strings, addresses, ports, flags, nesting. */
const plainKey = fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}(\.[a-z]{1,6}\/[a-z-]{1,8}[a-z])?$/).map((k) => `k${k}`);
const plainScalar = fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z]$/).map((s) => `v${s}`), fc.ipV4(),
  fc.integer({ min: 0, max: 65535 }), fc.boolean(), fc.constant(''));
const plainValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, plainScalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(plainKey, tie('value'), { maxKeys: 5 }),
})).value;

// The awkward documents above may fall back; these must not, or the fast path would quietly be the slow one.
test('plain Kubernetes-shaped documents are always read by the fast path, as the yaml package reads them', () => {
  fc.assert(fc.property(fc.dictionary(plainKey, plainValue, { minKeys: 1, maxKeys: 6 }), fc.boolean(), (value, indentSeq) => {
    const source = stringify(value, { indentSeq, lineWidth: 0 });
    const fast = readFastYaml(source);
    assert.notEqual(fast, undefined, `the fast path fell back on:\n${source}`);
    assert.deepEqual(fast, reference(source)[0]);
  }), { numRuns: 1000 });
});

test('the fast reader leaves to the yaml package what it does not read itself', () => {
  for (const source of ['a: &x 1\nb: *x\n', 'a: |\n  text\n', 'a: "esc\\n"\n', 'a: [1, 2]\n', 'a: b\n  c\n', 'a: 1\na: 2\n', 'a: !!str 1\n',
    'a:\tb\n', '? a\n: b\n', 'a: b: c\n', '- a\nb: 1\n', 'a: "open\n  close"\n', '"a\\u0041": 1\n']) {
    assert.equal(readFastYaml(source), undefined, JSON.stringify(source));
  }
});

/** A YAML stream of these documents, joined as people write them: separators, comments, empty documents. */
const stream = fc.array(fc.oneof(document.map((value) => stringify(value, { lineWidth: 0 })),
  document.map((value) => stringify(value, { indentSeq: false, lineWidth: 0 })),
  fc.constantFrom('', '# only a comment\n', '\n')), { minLength: 1, maxLength: 5 })
  .chain((parts) => fc.tuple(fc.constant(parts), fc.boolean(), fc.boolean()))
  .map(([parts, leading, trailing]) => `${leading ? '---\n' : ''}${parts.join('---\n')}${trailing ? '---\n' : ''}`);

test('documents are numbered and read as the yaml package numbers and reads them', () => {
  fc.assert(fc.property(stream, (source) => {
    const parsed = parseDocuments(source, 'in');
    assert.ok(parsed.ok);
    const expected = parseAllDocuments(source, { schema: 'core', uniqueKeys: true });
    const names = expected.flatMap((d, i) => (d.contents === null || (d.contents as { source?: string }).source === '' ? [] : [`in#${i + 1}`]));
    assert.deepEqual(parsed.value.map((d) => d.name), names);
    assert.deepEqual(parsed.value.map((d) => d.value), reference(source).filter((_, i) => names.includes(`in#${i + 1}`)));
  }), { numRuns: 500 });
});

test('a List is read item by item as the yaml package reads it whole, in YAML of either layout and in JSON', () => {
  const list = fc.array(fc.oneof(document, json), { maxLength: 6 }).map((items) => ({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } }));
  fc.assert(fc.property(list, fc.constantFrom('yaml', 'kubectl', 'json', 'json-pretty'), (value, layout) => {
    const source = layout === 'yaml' ? stringify(value, { lineWidth: 0 }) : layout === 'kubectl' ? stringify(value, { indentSeq: false, lineWidth: 0 })
      : JSON.stringify(value, null, layout === 'json' ? undefined : 4);
    const parsed = parseDocuments(source, 'in');
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
    assert.deepEqual(parsed.value.map((d) => d.value), reference(source));
  }), { numRuns: 500 });
});

test('YAML errors name the document, the line and the column, in a List item too', () => {
  const broken = parseDocuments('a: 1\n---\nb: 1\nb: 2\n', 'file.yaml');
  assert.ok(!broken.ok);
  assert.match(broken.message, /^file\.yaml#2, line 4, column 1: Map keys must be unique/);
  const item = parseDocuments('apiVersion: v1\nkind: List\nitems:\n- a: 1\n- a: [1\n  b: 2\n', 'list.yaml');
  assert.ok(!item.ok);
  assert.match(item.message, /^list\.yaml#1, line 6, column \d+: /);
});
