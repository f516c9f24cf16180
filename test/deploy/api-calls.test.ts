// The roles tested for what the product does with them: every call `serve` makes (support/api-calls.ts, held to the
// code's call sites here) is granted by the chart's rendered roles, whatever the release name and values, and by
// manifests/; every grant they give is one a call needs; the names the product looks up (its Lease, the Deployment an
// Event falls back to) are the ones the chart and manifests create.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { deploymentOf } from '../../src/controller/manager.ts';
import { API_CALLS, callSitesIn, type CallTarget, type Grant } from './support/api-calls.ts';
import { renderChart } from './support/chart.ts';
import { rulesOf, type PolicyRule } from './support/checks.ts';
import { at, listAt, only, readManifests, stringAt, type KubeObject } from './support/kube.ts';
import { repoPath } from './support/paths.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const describeGrant = (grant: Grant) => `${grant.verb} ${grant.group}/${grant.resource}${grant.name === undefined ? '' : `/${grant.name}`}`;

function allows(rules: readonly PolicyRule[], grant: Grant): boolean {
  return rules.some((rule) => rule.apiGroups.includes(grant.group) && rule.resources.includes(grant.resource) && rule.verbs.includes(grant.verb)
    && (rule.resourceNames === undefined || (grant.name !== undefined && rule.resourceNames.includes(grant.name))));
}

/** The rules bound to the ServiceAccount the Deployment runs as, from its (Cluster)RoleBindings. */
function rulesOfServiceAccount(objects: readonly KubeObject[]): PolicyRule[] {
  const deployment = objects.find((object) => object.kind === 'Deployment');
  const account = deployment === undefined ? undefined : stringAt(deployment, 'spec.template.spec.serviceAccountName');
  const namespace = deployment?.metadata.namespace;
  return objects.filter((object) => object.kind === 'RoleBinding' || object.kind === 'ClusterRoleBinding')
    .filter((binding) => listAt(binding, 'subjects').some((subject) => at(subject, 'kind') === 'ServiceAccount'
      && (account === undefined || at(subject, 'name') === account) && (namespace === undefined || at(subject, 'namespace') === namespace)))
    .flatMap((binding) => rulesOf(only(objects, stringAt(binding, 'roleRef.kind'), stringAt(binding, 'roleRef.name'))));
}

/** What `serve` asks of the API server `targets` name, with or without the shadow repair. */
function needed(targets: readonly CallTarget[], options: { readonly shadows: boolean }): Grant[] {
  return API_CALLS.filter((call) => call.identity === 'serve' && targets.includes(call.target))
    .flatMap((call) => call.grants).filter((grant) => options.shadows || grant.shadowsOnly !== true);
}

/** Every grant needed is given, none refused on purpose is, and every verb given is one a call needs. */
function assertRolesFit(rules: readonly PolicyRule[], grants: readonly Grant[], where: string): void {
  const missing = grants.filter((grant) => grant.refusedOnPurpose === undefined && !allows(rules, grant)).map(describeGrant);
  assert.deepEqual(missing, [], `${where}: calls the roles do not allow`);
  const given = grants.filter((grant) => grant.refusedOnPurpose !== undefined && allows(rules, grant)).map(describeGrant);
  assert.deepEqual(given, [], `${where}: grants the list says are refused on purpose`);
  const unused = rules.flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs
    .filter((verb) => !grants.some((grant) => grant.group === group && grant.resource === resource && grant.verb === verb))
    .map((verb) => `${verb} ${group}/${resource}`))));
  assert.deepEqual(unused, [], `${where}: grants no call needs`);
}

test('the list of API calls is the code\'s: each call site in src/, in each file, and nothing else', () => {
  const sites = sourceFiles(repoPath('src')).flatMap((path) => callSitesIn(readFileSync(path, 'utf8')).map((call) => `${relative(repoPath(), path)} ${call}`));
  assert.ok(sites.length > 10, 'the scan finds the call sites');
  assert.deepEqual(sites.sort(), API_CALLS.map((call) => `${call.file} ${call.call}`).sort());
});

test('the scan finds a client call, a watch and a lean-client request', () => {
  assert.deepEqual(callSitesIn([
    'await api.deleteNamespacedCustomObject({ name });',
    'new ListWatch({ watchPath: `/apis/x`, list });',
    'readonly watchPath: string;',
    'client.send({\n  method: \'DELETE\', path });',
  ].join('\n')), ['deleteNamespacedCustomObject', 'watch', 'send DELETE']);
});

const releases = [
  { name: 'default release', options: {}, shadows: true, targets: ['leaf', 'fccs'] },
  { name: 'another release name and namespace', options: { releaseName: 'edge', namespace: 'edge-system' }, shadows: true, targets: ['leaf', 'fccs'] },
  { name: 'shortcuts.source hubKubeconfig', options: { values: { shortcuts: { source: 'hubKubeconfig', hubKubeconfigSecret: 'hub-access', namespace: 'default' } } }, shadows: true, targets: ['leaf'] },
  { name: 'the shadow repair off', options: { values: { webhook: { shadowEndpointSlices: { enabled: false } } } }, shadows: false, targets: ['leaf', 'fccs'] },
] as const;

describe('the chart\'s rendered roles', () => {
  for (const release of releases) {
    test(`${release.name}: allow each call serve makes and nothing else, and name the Lease and the Deployment it looks up`, () => {
      const { objects } = renderChart(release.options);
      assertRolesFit(rulesOfServiceAccount(objects), needed(release.targets, { shadows: release.shadows }), release.name);
      assertNamesFit(objects);
    });
  }
});

/** The Deployment an Event falls back to is the one whose pods run serve: its name from a pod's, in its namespace. */
function assertNamesFit(objects: readonly KubeObject[]): void {
  const deployment = only(objects, 'Deployment');
  const { name, namespace } = deployment.metadata;
  assert.ok(namespace !== undefined, 'the Deployment has a namespace');
  assert.deepEqual(deploymentOf(`${name}-7c9d8f6b5d-x2x7q`, namespace), { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });
  const lease = rulesOfServiceAccount(objects).filter((rule) => rule.resources.includes('leases') && rule.resourceNames !== undefined);
  assert.ok(lease.length > 0, 'the Lease rule names the Lease');
  const role = objects.find((object) => object.kind === 'Role' && JSON.stringify(object).includes('"leases"'));
  assert.equal(role?.metadata.namespace, namespace, 'the Lease is in the pods\' namespace (POD_NAMESPACE)');
}

describe('manifests/', () => {
  const load = (dir: string) => readdirSync(dir).filter((file) => /\.ya?ml$/.test(file)).sort().flatMap((file) => readManifests(join(dir, file)));
  test('allow each call serve makes on the leaf and nothing else, and name the Lease and the Deployment it looks up', () => {
    const objects = load(repoPath('manifests'));
    assertRolesFit(rulesOfServiceAccount(objects), needed(['leaf', 'fccs'], { shadows: true }), 'manifests/');
    assertNamesFit(objects);
  });
  test('manifests/hub/ allows each call serve makes on the hub with a hub kubeconfig, and nothing else', () => {
    const objects = load(repoPath('manifests/hub'));
    assertRolesFit(rulesOfServiceAccount(objects), needed(['hub', 'fccs'], { shadows: true }), 'manifests/hub/');
  });
});
