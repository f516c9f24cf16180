// The hub readers on the command line and in the environment: bound ID=FILE, unbound FILE, one per hub.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCommand } from '../../src/cli.ts';

function usage(argv: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  const parsed = parseCommand(argv, env);
  return parsed.kind === 'usage-error' ? parsed.message : `parsed as ${parsed.kind}`;
}

test('--shortcuts-kubeconfig takes one reader per hub, bound ID=FILE or unbound FILE, from flags or a comma list', () => {
  const flags = parseCommand(['serve', '--shortcuts-kubeconfig', 'cluster1=/h1', '--shortcuts-kubeconfig', 'cluster9=/h9', '--hub-namespace', 'default'], {});
  assert.ok(flags.kind === 'serve');
  assert.deepEqual(flags.config.shortcutsKubeconfigs, [{ hub: 'cluster1', value: '/h1' }, { hub: 'cluster9', value: '/h9' }]);
  assert.deepEqual(flags.config.hubNamespaces, ['default']);
  const env = parseCommand(['status'], { SHORTCUT_WEBHOOK_SHORTCUTS_KUBECONFIG: 'cluster1=/h1,/h', SHORTCUT_WEBHOOK_HUB_NAMESPACE: 'a,b' });
  assert.ok(env.kind === 'status');
  assert.deepEqual(env.config.shortcutsKubeconfigs, [{ hub: 'cluster1', value: '/h1' }, { hub: undefined, value: '/h' }]);
  assert.deepEqual(env.config.hubNamespaces, ['a', 'b']);
});

test('two readers for one hub, two unbound readers, or --hub-namespace without a reader are usage errors', () => {
  assert.match(usage(['serve', '--shortcuts-kubeconfig', 'cluster1=/a', '--shortcuts-kubeconfig', 'cluster1=/b']), /binds two readers to cluster1: one per hub/);
  assert.match(usage(['serve', '--shortcuts-kubeconfig', '/a', '--shortcuts-kubeconfig', '/b']), /given twice without a cluster ID: bind each hub's reader/);
  assert.match(usage(['serve', '--shortcuts-kubeconfig', 'cluster1=']), /the reader of cluster1 needs a file/);
  assert.match(usage(['serve', '--hub-namespace', 'default']), /goes with --shortcuts-kubeconfig/);
});

test('--hub takes several paths per hub, bound or not, kept as given for the files to attribute', () => {
  const parsed = parseCommand(['rewrite', '--shortcuts', 'leaf.yaml', '--hub', 'cluster1=a.yaml', '--hub', 'cluster1=b.yaml', '--hub', '=c=d.yaml'], {});
  assert.ok(parsed.kind === 'rewrite');
  assert.deepEqual(parsed.config.hub, ['cluster1=a.yaml', 'cluster1=b.yaml', '=c=d.yaml']);
  assert.match(usage(['rewrite', '--shortcuts', 'leaf.yaml', '--hub', 'cluster9=']), /the files of cluster9 need a path/);
});
