// The README is what a newcomer decides from: its first screen says whether the webhook fits their Liqo, what it
// changes and how to undo it; maintainer material lives in docs/development.md.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
/** Everything before the first code block: the picture and the commands come after the decision. */
const firstScreen = readme.slice(0, readme.indexOf('```'));

test('the first screen answers: does it fit my Liqo, what does it need, what does it write, how do I undo it', () => {
  assert.ok(firstScreen.length > 0 && firstScreen.split('\n').length <= 45, `the decision comes before any code block, within 45 lines (${firstScreen.split('\n').length})`);
  for (const needed of [
    '## Does it fit your Liqo?',
    'Gabbe64/foreign_cluster_connector', 'ForeignClusterConnection', 'FCC path',
    'Stock Liqo', '`liqoctl network connect`', 'ips.ipam.liqo.io', 'manifests/hub/', 'stock IPAM path',
    'liqo.io/use-direct-connections', 'ShadowEndpointSlice repair', '[docs/liqo.md](docs/liqo.md)',
    '**What it writes.**', '`liqo.io/shortcut-addresses`', '`liqo.io/shortcut-original-addresses`', '**never denies**',
    '**How to undo it.**', 'docs/deploy.md#upgrade-rollback-uninstall',
  ]) assert.ok(firstScreen.includes(needed), needed);
});

test('the set-up commands are the literal ones, and maintainer material is in docs/development.md', () => {
  assert.match(readme, /^npm install && npm start +#/m);
  assert.match(readme, /^npm test +#/m);
  for (const internal of [/\bMISS\b/, /\bissue \d+/i, /source-stamp|bundle stamp/, /GOCACHE/, /stryker|npm run mutate/]) {
    assert.doesNotMatch(readme, internal);
  }
  assert.ok(readme.includes('[docs/development.md](docs/development.md)'));
});
