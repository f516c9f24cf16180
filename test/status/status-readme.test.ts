// The README's "Is my traffic direct?" blocks are what `status` prints against the examples' objects, served live.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { runCli } from '../support/run-cli.ts';
import { startReadmeWorld, type ReadmeWorld } from './readme-world.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The command on the line after `marker` (a ```sh block), and the output block after that. */
function example(marker: string): { args: string[]; output: string } {
  const start = readme.indexOf(marker);
  assert.ok(start >= 0, `README has ${marker}`);
  const blocks = [...readme.slice(start).matchAll(/```\w*\n([\s\S]*?)```/g)].slice(0, 2).map((match) => match[1] ?? '');
  const [command = '', output = ''] = blocks;
  const line = command.trim();
  assert.match(line, /^shortcut-webhook status( |$)/, 'the first block is the command');
  return { args: line.split(/\s+/).slice(1), output };
}

let world: ReadmeWorld;
before(async () => {
  world = await startReadmeWorld();
});
after(async () => world.close());

for (const marker of ['<!-- status-peers-example', '<!-- status-services-example']) {
  test(`the README's ${marker.slice(5)} is what status prints on the examples' leaf and hub`, async () => {
    const { args, output } = example(marker);
    // The README names the hub's kubeconfig hub.kubeconfig and takes the leaf's from KUBECONFIG.
    const leaf = await world.leaf.kubeconfig();
    const hub = await world.hub.kubeconfig();
    const run = await runCli(args.map((arg) => (arg === 'hub.kubeconfig' ? hub : arg)), { env: { KUBECONFIG: leaf } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, output);
  });
}
