// A chart change bumps the chart's version (Helm's rule: a published version never changes content). The chart's
// files, its version line aside, are hashed; each released version records its hash here. Changing the chart without
// a new version fails with the hash to record next to the new one.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const chartDir = new URL('../../charts/shortcut-webhook/', import.meta.url).pathname;

/** Every released chart version with the hash of its content. */
const RELEASED: Readonly<Record<string, string>> = {
  '0.2.0': '207bafa279a365a9',
  '0.3.0': '9c50ebc4545281d2',
  '0.4.0': '368b705017115b3b',
  '0.5.0': '59b8ec57cc872c67',
};

function files(dir: string): string[] {
  // The chart's own sources only: nothing a tool may leave beside them (dot files, packaged .tgz) changes the hash.
  return readdirSync(dir).filter((name) => !name.startsWith('.')).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return /\.(ya?ml|json|tpl|txt|md)$/.test(name) ? [path] : [];
  });
}

function contentHash(): string {
  const hash = createHash('sha256');
  for (const file of files(chartDir)) {
    let text = readFileSync(file, 'utf8');
    if (relative(chartDir, file) === 'Chart.yaml') text = text.replace(/^version: .*$/m, '');
    hash.update(relative(chartDir, file)).update('\0').update(text).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

test('the chart\'s content matches the hash recorded for its version: a chart change bumps the version', () => {
  const version = /^version: (\S+)$/m.exec(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'))?.[1] ?? '';
  const hash = contentHash();
  assert.ok(RELEASED[version] !== undefined, `chart version ${version} has no recorded hash: add '${version}': '${hash}' to RELEASED`);
  assert.equal(hash, RELEASED[version], `the chart changed since ${version} was recorded: bump version in Chart.yaml and record '<new version>': '${hash}'`);
});
