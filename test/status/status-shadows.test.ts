// `status` for a Service on Liqo's own direct connections, whose stored objects may be ShadowEndpointSlices alone (Liqo's
// writer keeps no EndpointSlice while it fails on the shadow): found by name, and its shadows counted out of step.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { runCli } from '../support/run-cli.ts';
import { startReadmeWorld, type ReadmeWorld } from './readme-world.ts';

let world: ReadmeWorld;
before(async () => {
  world = await startReadmeWorld();
  // A second shadow of Service api as the hub wrote it: a write that slipped past the webhook, out of step.
  const shadow = parse(readFileSync(new URL('../../examples/direct-connections/shadowendpointslice.yaml', import.meta.url), 'utf8')) as { metadata: Record<string, unknown> };
  await world.leaf.create({ ...shadow, metadata: { ...shadow.metadata, name: 'api-unreviewed' } });
});
after(async () => world.close());

test('status -n NS SERVICE finds a Service stored as ShadowEndpointSlices only, and counts a shadow out of step in OUT-OF-STEP', async () => {
  const run = await runCli(['status', '-n', 'demo', 'api', '--shortcuts-kubeconfig', await world.hub.kubeconfig()],
    { env: { KUBECONFIG: await world.leaf.kubeconfig() } });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout.split('\n').slice(0, 3).join('\n'), [
    'cluster cluster2',
    'SERVICE   PATH   PEERS              WHY                        SLICES  SHADOWS  DIRECT  HUB  NONE  OUT-OF-STEP',
    'demo/api  mixed  cluster3,cluster4  no-shortcut 2, repaired 2  0       2        2       2    0     1',
  ].join('\n'));
});

test('a leaf that refuses to list ShadowEndpointSlices (403) is exit 1 naming them, not a count without them and a "not served" note', async () => {
  world.leaf.failNext({ method: 'GET', pathIncludes: '/shadowendpointslices', watch: false }, 403);
  const run = await runCli(['status', '-n', 'demo', 'api', '--shortcuts-kubeconfig', await world.hub.kubeconfig()],
    { env: { KUBECONFIG: await world.leaf.kubeconfig() } });
  assert.equal(run.code, 1, run.stdout);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^shortcut-webhook status: cannot list shadowendpointslices\.offloading\.liqo\.io in namespace demo: HTTP 403/m);
});
