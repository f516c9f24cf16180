// docs/deploy.md names files, values and flags; this keeps them real.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { chartValues, helmBinary, helmLines } from './support/chart.ts';
import { isRecord, listAt, only, readManifests } from './support/kube.ts';
import { repoPath } from './support/paths.ts';

const doc = readFileSync(repoPath('docs/deploy.md'), 'utf8');

describe('docs/deploy.md', () => {
  test('every file or folder of the repository it names exists', () => {
    const paths = new Set([...doc.matchAll(/\b((?:manifests|charts|certs|dashboards|docs)\/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])/g)].map((match) => match[1] ?? ''));
    assert.ok(paths.size > 5);
    for (const path of paths) {
      if (path.startsWith('certs/out')) continue; // generated
      assert.ok(existsSync(repoPath(path)), `${path} does not exist`);
    }
  });

  test('every Helm value it names exists in values.yaml', () => {
    const values = chartValues();
    const named = [...doc.matchAll(/`((?:image|shortcuts|controller|webhook|crds|tls|metrics|resources|spread|replicaCount|clusterId|logLevel|nodeSelector|tolerations|priorityClassName|affinity|topologySpreadConstraints|commonLabels|podLabels)(?:\.[A-Za-z]+)*)(?:=[^`]*)?`/g)].map((match) => match[1] ?? '');
    assert.ok(named.length > 10);
    for (const path of named) {
      let node: unknown = values;
      for (const key of path.split('.')) {
        assert.ok(isRecord(node) && key in node, `${path} is not a value of the chart`);
        node = node[key];
      }
    }
  });

  test('every flag it gives install-secret.sh is one the script knows', () => {
    const script = readFileSync(repoPath('certs/install-secret.sh'), 'utf8');
    const flags = [...doc.matchAll(/install-secret\.sh[^\n`]*/g)].flatMap((match) => [...match[0].matchAll(/(--[a-z-]+)/g)].map((flag) => flag[1] ?? ''));
    flags.push(...[...doc.matchAll(/`(--print-ca-bundle)`/g)].map((match) => match[1] ?? ''));
    assert.ok(flags.length > 0);
    for (const flag of flags) assert.ok(script.includes(`${flag})`), `install-secret.sh has no ${flag}`);
  });
});

describe('docs/deploy.md\'s RBAC table', () => {
  test('lists every rule of the hub reader (manifests/hub/), and no other hub rule', () => {
    const rows = [...doc.matchAll(/^\| hub \(`manifests\/hub\/`\) \| `([^`]+)` `([^`]+)` \| ([^|]+) \|/gm)]
      .map((match) => `${match[1]} ${match[2]}: ${(match[3] ?? '').trim()}`).sort();
    const role = only(readManifests(repoPath('manifests/hub/hub-reader.yaml')), 'ClusterRole');
    const rules = listAt(role, 'rules').flatMap((rule) => listAt(rule, 'apiGroups').flatMap((group) => listAt(rule, 'resources')
      .map((resource) => `${String(group)} ${String(resource)}: ${listAt(rule, 'verbs').map(String).join(', ')}`))).sort();
    assert.deepEqual(rows, rules);
  });
});

describe('the Helm versions the docs name', () => {
  test('are the ones the tests run, in docs/deploy.md and the README\'s deploy section', () => {
    const readme = readFileSync(repoPath('README.md'), 'utf8');
    const deploySection = readme.slice(readme.indexOf('## Deploy'));
    for (const line of helmLines) {
      const version = /^(v\d+\.\d+\.\d+)/.exec(execFileSync(helmBinary(line), ['version', '--short'], { encoding: 'utf8' }))?.[1];
      assert.ok(version?.startsWith(line), `helm ${line} reports ${version}`);
      assert.ok(doc.includes(`Helm ${version}`), `docs/deploy.md names Helm ${version}`);
      assert.ok(deploySection.includes(`Helm ${version}`), `README's deploy section names Helm ${version}`);
    }
  });
});
