// The docs a stranger reads are complete and true: each command marked `<!-- runs -->` in README.md and
// docs/reference.md runs as printed (exit 0), its `<!-- output -->` block is what it prints, every flag of every
// command is in the reference, and nothing points outside the repository.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { EXPLAIN_FLAGS, REWRITE_FLAGS, SERVE_FLAGS, VERSION_FLAGS } from '../../src/config.ts';
import { runCli } from '../support/run-cli.ts';

const root = new URL('../..', import.meta.url).pathname;
const read = (path: string): string => readFileSync(`${root}${path}`, 'utf8');
const DOCS = ['README.md', ...readdirSync(`${root}docs`).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

interface Example { readonly file: string; readonly commands: readonly string[]; readonly output: string | undefined }

/** `<!-- runs -->` then a ```sh block: one command a line; an `<!-- output -->` block right after is its output. */
function examples(file: string): Example[] {
  const text = read(file);
  const found: Example[] = [];
  const marker = /<!-- runs -->\n```sh\n([\s\S]*?)```\n(?:\n<!-- output -->\n```\w*\n([\s\S]*?)```\n)?/g;
  for (const match of text.matchAll(marker)) {
    found.push({ file, commands: (match[1] ?? '').split('\n').filter((line) => line.trim() !== ''), output: match[2] });
  }
  return found;
}

/** The arguments of `shortcut-webhook ...`, `npx shortcut-webhook ...` or `node bin/shortcut-webhook.js ...`. */
function argv(command: string): string[] {
  const words = command.trim().split(/\s+/);
  const start = words.findIndex((word) => word === 'shortcut-webhook' || word.endsWith('bin/shortcut-webhook.js'));
  assert.ok(start >= 0, `a shortcut-webhook command: ${command}`);
  return words.slice(start + 1);
}

const all = DOCS.flatMap(examples);

test('the reference has runnable examples', () => {
  assert.ok(all.filter((example) => example.file === 'docs/reference.md').length >= 3);
});

for (const example of all) {
  test(`${example.file}: ${example.commands.join(' && ')}`, async () => {
    const previous = process.cwd();
    process.chdir(root);
    try {
      let stdout = '';
      for (const command of example.commands) {
        const run = await runCli(argv(command));
        assert.equal(run.code, 0, `${command}\n${run.stderr}`);
        stdout += run.stdout;
      }
      if (example.output !== undefined) assert.equal(stdout, example.output);
    } finally {
      process.chdir(previous);
    }
  });
}

test('the reference names every flag of every command, with its short form', () => {
  const reference = read('docs/reference.md');
  for (const table of [SERVE_FLAGS, REWRITE_FLAGS, EXPLAIN_FLAGS, VERSION_FLAGS]) {
    for (const [flag, spec] of Object.entries(table)) {
      assert.ok(reference.includes(`--${flag}`), `--${flag}`);
      if ('short' in spec) assert.ok(reference.includes(`-${spec.short}`), `-${spec.short}`);
    }
  }
});

test('README and docs/ stand alone: no ../shared, no SPEC section numbers', () => {
  for (const file of DOCS) {
    const text = read(file);
    assert.doesNotMatch(text, /\.\.\/shared|SPEC(\.md| §)/, file);
  }
});
