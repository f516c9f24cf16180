// Install and uninstall with Helm as the chart's NOTES and docs/deploy.md tell it, checked with the real helm: where
// the image comes from, the namespace's Pod Security level, and the restore before `helm uninstall`, whose values
// must make the Deployment's own command line serve restore-only with the controller on and its view unchanged.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseCommand } from '../../src/cli.ts';
import { renderChart } from './support/chart.ts';
import { containerOf } from './support/checks.ts';
import { isRecord, listAt, only, readManifests, stringAt, type KubeObject } from './support/kube.ts';
import { repoPath } from './support/paths.ts';

const deployDoc = readFileSync(repoPath('docs/deploy.md'), 'utf8');
const IMAGE = { repository: 'registry.example/shortcut-webhook' };

/** The argv and environment the Deployment's container starts with (downward API values filled in). */
function startup(deployment: KubeObject): { argv: string[]; env: NodeJS.ProcessEnv } {
  const container = containerOf(deployment);
  const env: NodeJS.ProcessEnv = {};
  for (const item of listAt(container, 'env')) {
    const name = stringAt(item, 'name');
    env[name] = isRecord(item) && typeof item['value'] === 'string' ? item['value'] : `from-${name.toLowerCase()}`;
  }
  return { argv: listAt(container, 'args').map(String), env };
}

/** `--set a.b=c` and `--set-json 'k=JSON'` of a helm command line, applied over `values` as `--reuse-values` does. */
function applySets(command: string, values: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = structuredClone(values);
  const put = (path: string, value: unknown): void => {
    const keys = path.split('.');
    let node = merged;
    for (const key of keys.slice(0, -1)) {
      const next = node[key];
      node[key] = isRecord(next) ? next : {};
      const child = node[key];
      assert.ok(isRecord(child));
      node = child;
    }
    node[keys.at(-1) ?? ''] = value;
  };
  // As helm reads --set values: true and false are booleans, the rest (here) strings.
  const typed = (text: string): unknown => (text === 'true' ? true : text === 'false' ? false : text);
  for (const match of command.matchAll(/--set (\S+?)=(\S*)/g)) put(match[1] ?? '', typed(match[2] ?? ''));
  for (const match of command.matchAll(/--set-json '([^=]+)=([^']*)'/g)) put(match[1] ?? '', JSON.parse(match[2] ?? 'null'));
  return merged;
}

function restoreCommand(notes: string): string {
  const line = notes.split('\n').find((text) => text.trim().startsWith('helm upgrade '));
  assert.ok(line !== undefined, `the NOTES give the restore command:\n${notes}`);
  return line.trim();
}

describe('the chart\'s NOTES', () => {
  test('say that the default image is no registry\'s and where the image must come from', () => {
    const defaults = renderChart().notes;
    assert.match(defaults, /WARNING: image shortcut-webhook:0\.2\.0 is the chart's default name, which no registry serves/);
    assert.match(defaults, /Build the image from the repository's Dockerfile, push it to a registry this cluster pulls from/);
    assert.match(defaults, /docs\/deploy\.md, "Build the image"/);
    assert.ok(deployDoc.includes('### Build the image'));
    const own = renderChart({ values: { image: { ...IMAGE, tag: '0.2.0-rc1' } } }).notes;
    assert.match(own, /^Image: registry\.example\/shortcut-webhook:0\.2\.0-rc1 \(built from the repository's Dockerfile/m);
    assert.doesNotMatch(own, /WARNING: image/);
  });

  test('give the command that makes the namespace enforce Pod Security `restricted`, with the labels the plain manifests carry', () => {
    const notes = renderChart({ values: { image: IMAGE }, namespace: 'leaf-net' }).notes;
    const labels = only(readManifests(repoPath('manifests/01-namespace.yaml')), 'Namespace').metadata.labels ?? {};
    const podSecurity = Object.entries(labels).filter(([key]) => key.startsWith('pod-security.kubernetes.io/'));
    assert.equal(podSecurity.length, 3);
    assert.match(notes, /kubectl label namespace leaf-net /);
    for (const [key, value] of podSecurity) assert.ok(notes.includes(`${key}=${value}`), `${key}=${value}`);
  });

  test('say how to restore the hub addresses before uninstalling, through the chart\'s values', () => {
    const notes = renderChart({ values: { image: IMAGE }, releaseName: 'edge', namespace: 'leaf-net' }).notes;
    const command = restoreCommand(notes);
    assert.match(command, /^helm upgrade edge charts\/shortcut-webhook -n leaf-net --reuse-values /);
    assert.doesNotMatch(notes, /kubectl (-n \S+ )?set env/);
    const order = ['helm upgrade edge', 'rollout status deployment/edge-shortcut-webhook', 'shortcut-addresses', 'helm uninstall edge -n leaf-net'];
    let from = notes.indexOf('Uninstalling');
    for (const text of order) {
      const index = notes.indexOf(text, from);
      assert.ok(from >= 0 && index > from, `after 'Uninstalling', in this order: ${order.join(', ')}\n${notes}`);
      from = index;
    }
  });
});

describe('the restore before uninstalling', () => {
  // Installed as docs/deploy.md installs it (the hub source, one namespace), or with the controller off: the restore's
  // values must turn restore-only and the controller on and leave the view's sources as they were, so that the records
  // the webhook wrote are still vouched for (an empty view vouches for none).
  const installs: readonly [string, Record<string, unknown>][] = [
    ['the hub source, one FCC namespace', { image: IMAGE, shortcuts: { source: 'hubKubeconfig', hubKubeconfigSecret: 'shortcut-webhook-hub', namespace: 'default' } }],
    ['the leaf source, the controller off', { image: IMAGE, controller: { enabled: false } }],
  ];
  for (const [what, values] of installs) {
    test(`after an install with ${what}, the Deployment serves restore-only with the controller on and the same view sources`, () => {
      const before = startup(only(renderChart({ values }).objects, 'Deployment'));
      const command = restoreCommand(renderChart({ values }).notes);
      const restored = renderChart({ values: applySets(command, values) });
      const { argv, env } = startup(only(restored.objects, 'Deployment'));
      const parsed = parseCommand(argv, env);
      const original = parseCommand(before.argv, before.env);
      assert.equal(parsed.kind, 'serve', JSON.stringify(parsed));
      assert.equal(original.kind, 'serve', JSON.stringify(original));
      if (parsed.kind !== 'serve' || original.kind !== 'serve') return;
      assert.equal(original.config.restoreOnly, false);
      assert.equal(parsed.config.restoreOnly, true);
      assert.equal(parsed.config.controller, true);
      assert.equal(parsed.config.source, original.config.source);
      assert.deepEqual(parsed.config.shortcuts, original.config.shortcuts);
      assert.deepEqual(parsed.config.shortcutsKubeconfigs, original.config.shortcutsKubeconfigs);
      assert.equal(parsed.config.shortcutsNamespace, original.config.shortcutsNamespace);
    });
  }

  test('docs/deploy.md gives the NOTES\' commands, and no `kubectl set env` on a Helm release', () => {
    const notes = renderChart({ values: { image: IMAGE } }).notes;
    assert.ok(deployDoc.includes(restoreCommand(notes)), 'the same helm upgrade line');
    assert.ok(deployDoc.includes('helm uninstall shortcut-webhook -n shortcut-webhook'));
    assert.doesNotMatch(deployDoc, /kubectl -n \S+ set env/);
  });

  test('docs/deploy.md installs into a namespace that enforces `restricted`, not one of --create-namespace', () => {
    const helmSection = deployDoc.slice(deployDoc.indexOf('### Option B: Helm chart'));
    const install = /```sh\n([\s\S]*?)```/.exec(helmSection)?.[1] ?? '';
    assert.match(install, /^kubectl apply -f manifests\/01-namespace\.yaml/m);
    assert.doesNotMatch(install, /--create-namespace/);
  });
});
