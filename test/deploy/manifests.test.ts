// The plain manifests (manifests/, manifests/hub/): what `kubectl apply -f` and `-k` would send (the real kubectl's
// kustomize, scripts/kube-tools.ts), checked offline.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import {
  assertHardenedDeployment,
  assertNoLiqoWebhookLabel,
  assertNoWildcards,
  assertSafeWebhook,
  containerOf,
  expectedLeafGrants,
  expectedLeaseGrants,
  grants,
  selectorMatches,
} from './support/checks.ts';
import {
  at,
  isRecord,
  listAt,
  only,
  parseManifests,
  readManifests,
  recordAt,
  stringAt,
  unknownFields,
  validateAgainstSchema,
  type KubeObject,
} from './support/kube.ts';
import { repoPath } from './support/paths.ts';
import { leaseName } from './support/spec.ts';
import { kubeTools } from '../../scripts/kube-tools.ts';

const manifestsDir = repoPath('manifests');
const hubDir = repoPath('manifests/hub');
const namespace = 'shortcut-webhook';

// What `kubectl apply -f DIR` reads: *.yaml, *.yml and *.json directly in DIR, not in subfolders.
function applyFiles(dir: string): string[] {
  return readdirSync(dir).filter((file) => /\.(ya?ml|json)$/.test(file) && statSync(join(dir, file)).isFile()).sort();
}

function load(dir: string): KubeObject[] {
  return applyFiles(dir).flatMap((file) => readManifests(join(dir, file)));
}

const objects = load(manifestsDir);
const hubObjects = load(hubDir);

function kustomizationResources(dir: string): string[] {
  const kustomization: unknown = parse(readFileSync(join(dir, 'Kustomization'), 'utf8'));
  assert.equal(at(kustomization, 'kind'), 'Kustomization');
  return listAt(kustomization, 'resources').map(String);
}

function deepCopy<T>(value: T): T {
  return structuredClone(value);
}

describe('manifests/ as kubectl reads them', () => {
  test('holds the objects of SPEC §7 and nothing kubectl could not apply', () => {
    const kinds = objects.map((object) => `${object.kind}/${object.metadata.name}`).sort();
    assert.deepEqual(kinds, [
      'ClusterRole/shortcut-webhook',
      'ClusterRoleBinding/shortcut-webhook',
      'CustomResourceDefinition/foreignclusterconnections.networking.liqo.io',
      'Deployment/shortcut-webhook',
      'MutatingWebhookConfiguration/shortcut-webhook',
      'Namespace/shortcut-webhook',
      'PodDisruptionBudget/shortcut-webhook',
      'Role/shortcut-webhook-leader-election',
      'RoleBinding/shortcut-webhook-leader-election',
      'Service/shortcut-webhook',
      'ServiceAccount/shortcut-webhook',
    ]);
  });

  test('keeps the CRD in a file of its own that sorts first, so it can be skipped where the operator installed it', () => {
    const first = applyFiles(manifestsDir)[0] ?? '';
    assert.equal(first, '00-crd-foreignclusterconnections.yaml');
    assert.deepEqual(readManifests(join(manifestsDir, first)).map((object) => object.kind), ['CustomResourceDefinition']);
    const namespaceFile = applyFiles(manifestsDir).find((file) => readManifests(join(manifestsDir, file)).some((object) => object.kind === 'Namespace'));
    assert.ok(namespaceFile && namespaceFile < '02', 'the Namespace is applied before the objects in it');
  });

  test('the Kustomization lists exactly the files `kubectl apply -f` reads, and is not itself one of them', () => {
    assert.deepEqual(kustomizationResources(manifestsDir).sort(), applyFiles(manifestsDir));
    assert.deepEqual(kustomizationResources(hubDir).sort(), applyFiles(hubDir));
    for (const dir of [manifestsDir, hubDir]) {
      assert.ok(!readdirSync(dir).some((file) => /^kustomization\.ya?ml$/i.test(file)), 'a kustomization.yaml would break apply -f');
    }
  });

  test('`kubectl kustomize` renders the same objects as `kubectl apply -f`', () => {
    for (const [dir, expected] of [[manifestsDir, objects], [hubDir, hubObjects]] as const) {
      const result = spawnSync(kubeTools().kubectl, ['kustomize', dir], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      const rendered = parseManifests(result.stdout, `kubectl kustomize ${dir}`);
      const names = (list: readonly KubeObject[]): string[] => list.map((object) => `${object.kind}/${object.metadata.name}`).sort();
      assert.deepEqual(names(rendered), names(expected));
    }
  });
});

describe('every object in manifests/', () => {
  test('is valid against the Kubernetes OpenAPI schema', () => {
    for (const object of [...objects, ...hubObjects]) {
      assert.doesNotThrow(() => validateAgainstSchema(object), `${object.kind} ${object.metadata.name}`);
    }
  });

  test('has no field unknown to Kubernetes', () => {
    for (const object of [...objects, ...hubObjects]) {
      assert.deepEqual(unknownFields(object), [], `${object.kind} ${object.metadata.name}`);
    }
  });

  test('the schema checks catch a wrong type and a misspelt field', () => {
    const deployment = deepCopy(only(objects, 'Deployment'));
    const container = containerOf(deployment);
    const ports = listAt(container, 'ports');
    const port = ports[0];
    assert.ok(isRecord(port));
    port['containerPort'] = 'webhook';
    assert.throws(() => validateAgainstSchema(deployment), /containerPort/);
    const security = recordAt(container, 'securityContext');
    security['readOnlyRootFileSystem'] = true;
    assert.deepEqual(unknownFields(deployment), ['.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem']);
  });

  test('lives in the shortcut-webhook namespace when namespaced, and nowhere when cluster-scoped', () => {
    const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'MutatingWebhookConfiguration']);
    for (const object of [...objects, ...hubObjects]) {
      if (clusterScoped.has(object.kind)) assert.equal(object.metadata.namespace, undefined, `${object.kind} ${object.metadata.name}`);
      else assert.equal(object.metadata.namespace, namespace, `${object.kind} ${object.metadata.name}`);
    }
  });

  test('never carries the liqo.io/webhook label (Liqo would overwrite our caBundle)', () => {
    assertNoLiqoWebhookLabel([...objects, ...hubObjects]);
    for (const file of [...applyFiles(manifestsDir).map((name) => join(manifestsDir, name)), ...applyFiles(hubDir).map((name) => join(hubDir, name))]) {
      const withoutComments = readFileSync(file, 'utf8').split('\n').filter((line) => !line.trimStart().startsWith('#')).join('\n');
      assert.ok(!withoutComments.includes('liqo.io/webhook'), file);
    }
  });

  test('the liqo.io/webhook check fails on a labelled object', () => {
    const configuration = deepCopy(only(objects, 'MutatingWebhookConfiguration'));
    const labelled = { ...configuration, metadata: { ...configuration.metadata, labels: { 'liqo.io/webhook': 'true' } } };
    assert.throws(() => assertNoLiqoWebhookLabel([labelled]), /liqo\.io\/webhook/);
  });
});

describe('the MutatingWebhookConfiguration', () => {
  const configuration = only(objects, 'MutatingWebhookConfiguration');

  test('has the safety settings of SPEC §7', () => {
    assertSafeWebhook(configuration, { serviceName: 'shortcut-webhook', namespace, failurePolicy: 'Ignore' });
  });

  test('leaves caBundle out, so that re-applying never resets the one install-secret.sh patched in', () => {
    for (const webhook of listAt(configuration, 'webhooks')) assert.equal(at(webhook, 'clientConfig.caBundle'), undefined);
  });

  test('reaches the container port named webhook through Service port 443', () => {
    const service = only(objects, 'Service', 'shortcut-webhook');
    const servicePort = listAt(service, 'spec.ports').find((port) => at(port, 'port') === 443);
    assert.equal(at(servicePort, 'targetPort'), 'webhook');
    const deployment = only(objects, 'Deployment');
    assert.ok(selectorMatches(at(service, 'spec.selector'), at(deployment, 'spec.template.metadata.labels')));
    const containerPort = listAt(containerOf(deployment), 'ports').find((port) => at(port, 'name') === 'webhook');
    assert.equal(at(containerPort, 'containerPort'), 9443);
  });

  test('the safety check fails on failurePolicy Fail or a missing objectSelector', () => {
    const failing = deepCopy(configuration);
    const webhook = recordAt(listAt(failing, 'webhooks'), '[0]');
    webhook['failurePolicy'] = 'Fail';
    assert.throws(() => assertSafeWebhook(failing, { serviceName: 'shortcut-webhook', namespace, failurePolicy: 'Ignore' }));
    const unselective = deepCopy(configuration);
    delete recordAt(listAt(unselective, 'webhooks'), '[0]')['objectSelector'];
    assert.throws(() => assertSafeWebhook(unselective, { serviceName: 'shortcut-webhook', namespace, failurePolicy: 'Ignore' }));
  });

  test('the safety check fails on a ShadowEndpointSlice webhook failing closed, at another timeout, or missing', () => {
    const closed = deepCopy(configuration);
    recordAt(listAt(closed, 'webhooks'), '[1]')['failurePolicy'] = 'Fail';
    assert.throws(() => assertSafeWebhook(closed, { serviceName: 'shortcut-webhook', namespace, failurePolicy: 'Ignore' }), /failurePolicy/);
    const slower = deepCopy(configuration);
    recordAt(listAt(slower, 'webhooks'), '[1]')['timeoutSeconds'] = 10;
    assert.throws(() => assertSafeWebhook(slower, { serviceName: 'shortcut-webhook', namespace, failurePolicy: 'Ignore' }));
    const one = deepCopy(configuration);
    listAt(one, 'webhooks').pop();
    assert.throws(() => assertSafeWebhook(one, { serviceName: 'shortcut-webhook', namespace, failurePolicy: 'Ignore' }), /one webhook per resource/);
  });

  test('reviews Liqo\'s ShadowEndpointSlices on /mutate/shadowendpointslices, failing open', () => {
    const webhook = recordAt(listAt(configuration, 'webhooks'), '[1]');
    assert.equal(webhook['name'], 'shadowendpointslices.shortcut-webhook.liqo.io');
    assert.equal(webhook['failurePolicy'], 'Ignore');
    assert.equal(at(webhook, 'clientConfig.service.path'), '/mutate/shadowendpointslices');
  });
});

describe('the Deployment', () => {
  const deployment = only(objects, 'Deployment');

  test('is hardened: non-root, read-only root, no capabilities, probes, resources, spread, graceful stop', () => {
    assertHardenedDeployment(deployment, { tlsSecret: 'shortcut-webhook-tls' });
  });

  test('the hardening check fails on a root user or a writable root filesystem', () => {
    const root = deepCopy(deployment);
    recordAt(root, 'spec.template.spec.securityContext')['runAsUser'] = 0;
    assert.throws(() => assertHardenedDeployment(root, { tlsSecret: 'shortcut-webhook-tls' }));
    const writable = deepCopy(deployment);
    recordAt(containerOf(writable), 'securityContext')['readOnlyRootFilesystem'] = false;
    assert.throws(() => assertHardenedDeployment(writable, { tlsSecret: 'shortcut-webhook-tls' }));
  });

  test('runs as the ServiceAccount that the bindings name', () => {
    assert.equal(at(deployment, 'spec.template.spec.serviceAccountName'), only(objects, 'ServiceAccount').metadata.name);
  });

  test('is versioned like package.json', () => {
    const pkg: unknown = JSON.parse(readFileSync(repoPath('package.json'), 'utf8'));
    const version = stringAt(pkg, 'version');
    assert.equal(deployment.metadata.labels?.['app.kubernetes.io/version'], version);
    assert.equal(stringAt(containerOf(deployment), 'image'), `shortcut-webhook:${version}`);
  });
});

describe('RBAC', () => {
  test('the ClusterRole grants exactly FCC, Connection and Configuration reads and EndpointSlice and ShadowEndpointSlice get/list/watch/patch', () => {
    const role = only(objects, 'ClusterRole');
    assertNoWildcards(role);
    assert.deepEqual(grants(role), expectedLeafGrants({ fccInCluster: true }));
  });

  test('the Role in the own namespace only creates Leases and reads and renews the controller Lease', () => {
    const role = only(objects, 'Role');
    assertNoWildcards(role);
    assert.deepEqual(grants(role), expectedLeaseGrants);
    assert.ok(JSON.stringify(grants(role)).includes(leaseName));
    assert.ok(!objects.some((object) => object.kind === 'Role' && JSON.stringify(object).includes('"events"')), 'no event recording');
  });

  test('every binding points at a role defined here and at the webhook ServiceAccount', () => {
    for (const binding of objects.filter((object) => object.kind.endsWith('Binding'))) {
      const roleKind = stringAt(binding, 'roleRef.kind');
      only(objects, roleKind, stringAt(binding, 'roleRef.name'));
      assert.deepEqual(at(binding, 'subjects'), [{ kind: 'ServiceAccount', name: 'shortcut-webhook', namespace }]);
    }
  });

  test('the wildcard check fails on a wildcard verb', () => {
    const role = deepCopy(only(objects, 'ClusterRole'));
    const rule = recordAt(listAt(role, 'rules'), '[0]');
    rule['verbs'] = ['*'];
    assert.throws(() => assertNoWildcards(role), /wildcard/);
  });
});

describe('the Service, PodDisruptionBudget and Namespace', () => {
  test('the Service selects the pods and exposes 443 and the ops port', () => {
    const service = only(objects, 'Service');
    const deployment = only(objects, 'Deployment');
    assert.ok(selectorMatches(at(service, 'spec.selector'), at(deployment, 'spec.template.metadata.labels')));
    assert.deepEqual(listAt(service, 'spec.ports').map((port) => [at(port, 'port'), at(port, 'targetPort')]), [[443, 'webhook'], [8080, 'ops']]);
  });

  test('the PodDisruptionBudget keeps one replica and lets unready ones be evicted', () => {
    const budget = only(objects, 'PodDisruptionBudget');
    assert.equal(at(budget, 'spec.minAvailable'), 1);
    assert.equal(at(budget, 'spec.unhealthyPodEvictionPolicy'), 'AlwaysAllow');
    assert.ok(selectorMatches(at(budget, 'spec.selector.matchLabels'), at(only(objects, 'Deployment'), 'spec.template.metadata.labels')));
  });

  test('the Namespace enforces the restricted Pod Security Standard', () => {
    assert.equal(only(objects, 'Namespace').metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  });
});

describe('manifests/hub/', () => {
  test('gives one ServiceAccount list and watch on FCCs and on the hub\'s Liqo IPs and Configurations, and nothing else', () => {
    const role = only(hubObjects, 'ClusterRole');
    assertNoWildcards(role);
    assert.deepEqual(grants(role), {
      'networking.liqo.io/foreignclusterconnections': ['list', 'watch'],
      'ipam.liqo.io/ips': ['list', 'watch'],
      'networking.liqo.io/configurations': ['list', 'watch'],
    });
    const binding = only(hubObjects, 'ClusterRoleBinding');
    assert.equal(at(binding, 'roleRef.name'), role.metadata.name);
    const account = only(hubObjects, 'ServiceAccount');
    assert.deepEqual(at(binding, 'subjects'), [{ kind: 'ServiceAccount', name: account.metadata.name, namespace: account.metadata.namespace }]);
  });

  test('has a token Secret for that ServiceAccount to build the leaves\' kubeconfig from', () => {
    const token = only(hubObjects, 'Secret');
    assert.equal(at(token, 'type'), 'kubernetes.io/service-account-token');
    assert.equal(token.metadata.annotations?.['kubernetes.io/service-account.name'], only(hubObjects, 'ServiceAccount').metadata.name);
  });

  test('is not applied by `kubectl apply -f manifests/` (no recursion) ', () => {
    assert.ok(!objects.some((object) => object.metadata.name.includes('reader')));
  });
});

describe('manifests/hardening/', () => {
  const hardeningDir = repoPath('manifests/hardening');
  const hardening = load(hardeningDir);

  test('is valid against the Kubernetes OpenAPI schema, with no unknown field, its Kustomization listing every file', () => {
    for (const object of hardening) {
      assert.doesNotThrow(() => validateAgainstSchema(object), `${object.kind} ${object.metadata.name}`);
      assert.deepEqual(unknownFields(object), [], `${object.kind} ${object.metadata.name}`);
    }
    assert.deepEqual(kustomizationResources(hardeningDir).sort(), applyFiles(hardeningDir));
  });

  test('the admission policies bind to the ServiceAccount the Deployment runs as, for its two resources, and deny', () => {
    const account = only(objects, 'ServiceAccount');
    const username = `system:serviceaccount:${account.metadata.namespace}:${account.metadata.name}`;
    const policies = hardening.filter((object) => object.kind === 'ValidatingAdmissionPolicy');
    assert.deepEqual(policies.map((policy) => listAt(recordAt(policy, 'spec'), 'matchConstraints.resourceRules').flatMap((rule) => listAt(rule, 'resources'))),
      [['endpointslices'], ['shadowendpointslices']]);
    for (const policy of policies) {
      assert.deepEqual(at(policy, 'spec.matchConditions'), [{ name: 'shortcut-webhook-service-account', expression: `request.userInfo.username == '${username}'` }]);
      const binding = hardening.find((object) => object.kind === 'ValidatingAdmissionPolicyBinding' && at(object, 'spec.policyName') === policy.metadata.name);
      assert.ok(binding, `a binding for ${policy.metadata.name}`);
      assert.deepEqual(at(binding, 'spec.validationActions'), ['Deny']);
    }
  });

  test('the NetworkPolicy selects the Deployment\'s pods and opens only its two named ports', () => {
    const policy = only(hardening, 'NetworkPolicy');
    const deployment = only(objects, 'Deployment');
    assert.ok(selectorMatches(recordAt(policy, 'spec.podSelector.matchLabels'), recordAt(deployment, 'spec.template.metadata.labels')));
    const ports = listAt(recordAt(policy, 'spec'), 'ingress').map((rule) => listAt(rule, 'ports').map((port) => at(port, 'port')));
    assert.deepEqual(ports, [['webhook'], ['ops']]);
    assert.deepEqual(listAt(containerOf(deployment), 'ports').map((port) => at(port, 'name')), ['webhook', 'ops']);
    for (const rule of listAt(recordAt(policy, 'spec'), 'ingress')) assert.ok(listAt(rule, 'from').length > 0, 'an empty from would let everyone in');
  });

  test('is not applied by `kubectl apply -f manifests/` (no recursion)', () => {
    assert.ok(!objects.some((object) => object.kind === 'NetworkPolicy' || object.kind === 'ValidatingAdmissionPolicy'));
  });
});
