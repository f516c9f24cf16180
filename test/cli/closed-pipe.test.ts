// `shortcut-webhook rewrite ... | head`: the reader closes the pipe after what it wanted; the command stops quietly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject, sliceObject } from '../support/builders.ts';
import { scratchDir } from '../support/scratch.ts';

const BIN = new URL('../../bin/shortcut-webhook.js', import.meta.url).pathname;

test('a reader that closes the pipe early ends rewrite quietly with exit 0, not with an EPIPE stack trace', async () => {
  const dir = scratchDir('shortcut-pipe-');
  writeFileSync(join(dir, 'fcc.yaml'), stringify(fccObject()));
  // Far more output than a pipe holds, so the command is still writing when the reader goes.
  writeFileSync(join(dir, 'slices.yaml'), Array.from({ length: 4000 }, (_, i) => stringify(sliceObject({ name: `s${i}` }))).join('---\n'));
  const child = spawn(process.execPath, [BIN, 'rewrite', '--shortcuts', join(dir, 'fcc.yaml'), '-o', 'json', join(dir, 'slices.yaml')]);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const first = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())));
  child.stdout.destroy();
  assert.match(first, /^\{"apiVersion"/);
  assert.equal(await exited, 0, stderr);
  assert.doesNotMatch(stderr, /EPIPE|Unhandled|at .*\.(ts|js|mjs):\d+/);
});
