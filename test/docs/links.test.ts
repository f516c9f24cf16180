// Every relative link of the README, the changelog and docs/ leads somewhere: the file exists, and an anchor names a
// heading of that file as GitHub renders it. A renamed heading or a moved file is found here, not by a reader.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const DOCS = ['README.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped but hyphens and underscores, spaces to hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a Markdown file: its headings outside code blocks, numbered -1, -2 ... when repeated, as GitHub does. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Relative link targets of a Markdown file, outside code blocks and inline code. */
function links(markdown: string): string[] {
  const found: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] ?? '';
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) found.push(target);
    }
  }
  return found;
}

test('the slug and anchor rules read headings as GitHub does', () => {
  assert.equal(slug('Failover at the API server\'s pace, and the write path'), 'failover-at-the-api-servers-pace-and-the-write-path');
  assert.equal(slug('The write path: over HTTP/1.1, as clusters call webhooks'), 'the-write-path-over-http11-as-clusters-call-webhooks');
  assert.equal(slug('Skipping admission (`matchConditions`): not done'), 'skipping-admission-matchconditions-not-done');
  assert.deepEqual([...anchors('# A\n```\n# not a heading\n```\n## A\n### B b\n')], ['a', 'a-1', 'b-b']);
  assert.deepEqual(links('[a](b.md#c) `[x](y.md)` [web](https://example.com) [in](#here "title")\n```\n[z](nowhere.md)\n```\n'), ['b.md#c', '#here']);
});

for (const file of DOCS) {
  test(`every relative link of ${file} resolves, anchors included`, () => {
    const text = readFileSync(join(root, file), 'utf8');
    const broken: string[] = [];
    for (const target of links(text)) {
      const [path = '', anchor] = target.split('#', 2);
      const resolved = path === '' ? join(root, file) : join(root, dirname(file), decodeURIComponent(path));
      if (relative(root, resolved).startsWith('..') || !existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor === undefined || statSync(resolved).isDirectory() || !resolved.endsWith('.md')) continue;
      if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${target}: no heading for #${anchor}`);
    }
    assert.deepEqual(broken, [], `${file} links to what is not there`);
  });
}
