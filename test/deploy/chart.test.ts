// charts/shortcut-webhook: metadata, values against their schema, and the rendered objects (through the Go template
// emulation in support/go-template.ts, since helm cannot be installed here), held to the same rules as manifests/.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  assertHardenedDeployment,
  assertNoLiqoWebhookLabel,
  assertNoWildcards,
  assertSafeWebhook,
  containerOf,
  envOf,
  expectedLeafGrants,
  expectedLeaseGrants,
  grants,
  selectorMatches,
} from './support/checks.ts';
import { chartDir, chartValues, loadTemplates, mergeValues, readYamlFile, renderChart, schemaErrors, type RenderedChart } from './support/chart.ts';
import { readFakePem } from './support/go-template.ts';
import {
  at,
  hasBuiltInSchema,
  isRecord,
  listAt,
  only,
  readManifests,
  recordAt,
  stringAt,
  unknownFields,
  validateAgainstSchema,
  type KubeObject,
} from './support/kube.ts';
import { repoPath } from './support/paths.ts';
import { apiServerMetrics, envNameOf, histogramMetrics, webhookMetrics } from './support/spec.ts';

const templatesDir = join(chartDir, 'templates');
const templateSources = readdirSync(templatesDir).map((file) => ({ file, text: readFileSync(join(templatesDir, file), 'utf8') }));

function manifestObjects(): KubeObject[] {
  const dir = repoPath('manifests');
  return readdirSync(dir).filter((file) => file.endsWith('.yaml')).flatMap((file) => readManifests(join(dir, file)));
}

/** Every object valid against the Kubernetes schema, with no unknown field; the CRD-backed kinds checked by shape. */
function assertValid(rendered: RenderedChart): void {
  for (const object of rendered.objects) {
    const name = `${object.kind} ${object.metadata.name}`;
    if (hasBuiltInSchema(object)) {
      assert.doesNotThrow(() => validateAgainstSchema(object), name);
      assert.deepEqual(unknownFields(object), [], name);
    } else {
      assert.ok(['cert-manager.io/v1', 'monitoring.coreos.com/v1'].includes(object.apiVersion), `unexpected ${object.apiVersion} ${name}`);
      assert.ok(isRecord(object['spec']), `${name} has a spec`);
    }
  }
  assertNoLiqoWebhookLabel(rendered.objects);
}

function webhookOf(objects: readonly KubeObject[]): Record<string, unknown> {
  return recordAt(listAt(only(objects, 'MutatingWebhookConfiguration'), 'webhooks'), '[0]');
}

function tlsSecretOf(deployment: KubeObject): string {
  const volume = listAt(deployment, 'spec.template.spec.volumes').find((item) => at(item, 'name') === 'tls');
  return stringAt(volume, 'secret.secretName');
}

describe('Chart.yaml', () => {
  const chart = readYamlFile(join(chartDir, 'Chart.yaml'));
  const pkg: unknown = JSON.parse(readFileSync(repoPath('package.json'), 'utf8'));

  test('is a Helm 3 application chart named shortcut-webhook with a SemVer version', () => {
    assert.equal(at(chart, 'apiVersion'), 'v2');
    assert.equal(at(chart, 'name'), 'shortcut-webhook');
    assert.equal(at(chart, 'type'), 'application');
    assert.match(stringAt(chart, 'version'), /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    assert.ok(stringAt(chart, 'description').length > 20);
    assert.match(stringAt(chart, 'kubeVersion'), /^>=1\.\d+\.\d+-0$/);
  });

  test('ships the version of package.json as appVersion, which is the default image tag', () => {
    assert.equal(at(chart, 'appVersion'), stringAt(pkg, 'version'));
    assert.equal(at(chartValues(), 'image.tag'), '');
  });

  test('has a NOTES.txt and a values.schema.json', () => {
    assert.ok(templateSources.some((source) => source.file === 'NOTES.txt'));
    assert.ok(readFileSync(join(chartDir, 'values.schema.json'), 'utf8').length > 0);
  });
});

describe('values', () => {
  test('values.yaml is valid against values.schema.json', () => {
    assert.deepEqual(schemaErrors(chartValues()), []);
  });

  const rejected: [string, Record<string, unknown>][] = [
    ['failurePolicy Deny', { webhook: { failurePolicy: 'Deny' } }],
    ['a timeout above the API server maximum of 30 s', { webhook: { timeoutSeconds: 31 } }],
    ['an FCC source other than cluster or hubKubeconfig', { shortcuts: { source: 'files' } }],
    ['hubKubeconfig without its Secret', { shortcuts: { source: 'hubKubeconfig' } }],
    ['tls.mode secret without its caBundle', { tls: { mode: 'secret' } }],
    ['the liqo.io/webhook label', { commonLabels: { 'liqo.io/webhook': 'true' } }],
    ['a misspelt key', { replicas: 3 }],
    ['a misspelt nested key', { controller: { resync: '5m' } }],
    ['a duration that is not Go syntax', { controller: { resyncInterval: '5 minutes' } }],
    ['an unknown pull policy', { image: { pullPolicy: 'Sometimes' } }],
    ['zero replicas', { replicaCount: 0 }],
  ];
  for (const [name, overrides] of rejected) {
    test(`the schema rejects ${name}`, () => {
      assert.notDeepEqual(schemaErrors(mergeValues(chartValues(), overrides)), []);
    });
  }

  test('every .Values path in a template exists in values.yaml', () => {
    const values = chartValues();
    const missing: string[] = [];
    for (const { file, text } of templateSources) {
      for (const match of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        const path = (match[1] ?? '').slice(1).split('.');
        let node: unknown = values;
        for (const key of path) {
          if (!isRecord(node) || !(key in node)) {
            missing.push(`${file}: .Values.${path.join('.')}`);
            break;
          }
          node = node[key];
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  test('every value in values.yaml is used by a template', () => {
    const used = templateSources.map((source) => source.text).join('\n');
    const unused: string[] = [];
    const visit = (node: unknown, path: string[]): void => {
      const dotted = `.Values.${path.join('.')}`;
      // A value is used when its own path, or a parent handed whole to toYaml/with, appears in a template.
      if (path.length > 0 && new RegExp(`${dotted.replaceAll('.', '\\.')}(?![A-Za-z0-9_])`).test(used)) return;
      // $rule := .Values.metrics.prometheusRule, then $rule.errorRatio.
      const alias = [...used.matchAll(/(\$[A-Za-z]+) := (\.Values(?:\.[A-Za-z0-9_]+)+)/g)]
        .find((match) => dotted.startsWith(`${match[2] ?? ''}.`));
      if (alias?.[1] && alias[2] && used.includes(`${alias[1]}${dotted.slice(alias[2].length)}`)) return;
      if (isRecord(node) && Object.keys(node).length > 0) {
        for (const [key, child] of Object.entries(node)) visit(child, [...path, key]);
        return;
      }
      unused.push(dotted);
    };
    visit(chartValues(), []);
    assert.deepEqual(unused, []);
  });

  test('every included template is defined', () => {
    const defined = new Set(loadTemplates().definedNames());
    for (const { file, text } of templateSources) {
      for (const match of text.matchAll(/(?:include|template) "([^"]+)"/g)) assert.ok(defined.has(match[1] ?? ''), `${file}: ${match[1]}`);
    }
  });
});

describe('the chart rendered with its defaults', () => {
  const rendered = renderChart();
  const plain = manifestObjects();

  test('makes the objects of manifests/ (less the Namespace, which Helm creates) plus the TLS Secret', () => {
    const names = (objects: readonly KubeObject[]): string[] => objects.map((object) => `${object.kind}/${object.metadata.name}`).sort();
    const expected = [...names(plain.filter((object) => object.kind !== 'Namespace')), 'Secret/shortcut-webhook-tls'].sort();
    assert.deepEqual(names(rendered.objects), expected);
  });

  test('every object is valid, has no unknown field and no liqo.io/webhook label', () => {
    assertValid(rendered);
  });

  test('the Deployment, Service, budget, RBAC, CRD and webhook match manifests/ field for field', () => {
    const pairs: [string, string][] = [
      ['Deployment', 'spec'],
      ['Service', 'spec'],
      ['PodDisruptionBudget', 'spec'],
      ['ClusterRole', 'rules'],
      ['Role', 'rules'],
      ['RoleBinding', 'subjects'],
      ['ClusterRoleBinding', 'subjects'],
      ['CustomResourceDefinition', 'spec'],
    ];
    for (const [kind, field] of pairs) {
      assert.deepEqual(at(only(rendered.objects, kind), field), at(only(plain, kind), field), `${kind} ${field}`);
    }
    const { caBundle, ...renderedClient } = recordAt(webhookOf(rendered.objects), 'clientConfig');
    assert.ok(caBundle);
    assert.deepEqual({ ...webhookOf(rendered.objects), clientConfig: renderedClient }, webhookOf(plain));
  });

  test('the webhook has the safety settings of SPEC §7 and the Deployment its hardening', () => {
    assertSafeWebhook(only(rendered.objects, 'MutatingWebhookConfiguration'), { serviceName: 'shortcut-webhook', namespace: 'shortcut-webhook', failurePolicy: 'Ignore' });
    assertHardenedDeployment(only(rendered.objects, 'Deployment'), { tlsSecret: 'shortcut-webhook-tls' });
  });

  test('fills the caBundle with the CA that signed the serving certificate in the mounted Secret', () => {
    const secret = only(rendered.objects, 'Secret');
    assert.equal(at(secret, 'type'), 'kubernetes.io/tls');
    assert.equal(secret.metadata.name, tlsSecretOf(only(rendered.objects, 'Deployment')));
    const caBundle = stringAt(webhookOf(rendered.objects), 'clientConfig.caBundle');
    const data = recordAt(secret, 'data');
    assert.equal(data['ca.crt'], caBundle);
    const serving = readFakePem(Buffer.from(String(data['tls.crt']), 'base64').toString('utf8'));
    const ca = readFakePem(Buffer.from(caBundle, 'base64').toString('utf8'));
    assert.deepEqual(at(serving, 'issuer'), ca);
    assert.equal(at(serving, 'commonName'), 'shortcut-webhook.shortcut-webhook.svc');
    assert.ok(listAt(serving, 'alternateNames').includes('shortcut-webhook.shortcut-webhook.svc'));
    assert.ok(String(data['tls.key']).length > 0);
  });

  test('keeps the CRD on uninstall', () => {
    assert.equal(only(rendered.objects, 'CustomResourceDefinition').metadata.annotations?.['helm.sh/resource-policy'], 'keep');
  });

  test('prints NOTES that say where shortcuts come from and how TLS is handled', () => {
    assert.match(rendered.notes, /Shortcuts are read from this cluster, all namespaces\./);
    assert.match(rendered.notes, /TLS: the chart generated a CA/);
    assert.doesNotMatch(rendered.notes, /WARNING/);
  });
});

describe('the chart with other values', () => {
  test('another release name and namespace move the Service, the certificate and the namespace exclusion along', () => {
    const rendered = renderChart({ releaseName: 'edge', namespace: 'leaf-net' });
    assertValid(rendered);
    const webhook = assertSafeWebhook(only(rendered.objects, 'MutatingWebhookConfiguration'), {
      serviceName: 'edge-shortcut-webhook',
      namespace: 'leaf-net',
      failurePolicy: 'Ignore',
    });
    only(rendered.objects, 'Service', 'edge-shortcut-webhook');
    const data = recordAt(only(rendered.objects, 'Secret'), 'data');
    const serving = readFakePem(Buffer.from(String(data['tls.crt']), 'base64').toString('utf8'));
    assert.equal(at(serving, 'commonName'), 'edge-shortcut-webhook.leaf-net.svc');
    assert.ok(isRecord(webhook));
    for (const binding of rendered.objects.filter((object) => object.kind.endsWith('Binding'))) {
      assert.equal(at(binding, 'subjects.[0].namespace'), 'leaf-net');
    }
    const deployment = only(rendered.objects, 'Deployment');
    assert.ok(selectorMatches(at(only(rendered.objects, 'Service'), 'spec.selector'), at(deployment, 'spec.template.metadata.labels')));
  });

  test('tls.mode certManager issues the Secret the pods mount and lets cainjector fill the caBundle', () => {
    const rendered = renderChart({ values: { tls: { mode: 'certManager' } } });
    assertValid(rendered);
    assert.ok(!rendered.objects.some((object) => object.kind === 'Secret'), 'no chart-made Secret');
    const configuration = only(rendered.objects, 'MutatingWebhookConfiguration');
    assert.equal(at(webhookOf(rendered.objects), 'clientConfig.caBundle'), undefined);
    const certificate = only(rendered.objects, 'Certificate', 'shortcut-webhook');
    assert.equal(configuration.metadata.annotations?.['cert-manager.io/inject-ca-from'], `shortcut-webhook/${certificate.metadata.name}`);
    assert.equal(at(certificate, 'spec.secretName'), tlsSecretOf(only(rendered.objects, 'Deployment')));
    assert.ok(listAt(certificate, 'spec.dnsNames').includes('shortcut-webhook.shortcut-webhook.svc'));
    // The issuer chain: serving Certificate -> CA Issuer -> CA Certificate's Secret -> self-signed Issuer.
    const caIssuer = only(rendered.objects, 'Issuer', stringAt(certificate, 'spec.issuerRef.name'));
    const caCertificate = rendered.objects.find((object) => object.kind === 'Certificate' && at(object, 'spec.secretName') === at(caIssuer, 'spec.ca.secretName'));
    assert.ok(caCertificate, 'the CA Issuer reads a Secret that a Certificate issues');
    assert.equal(at(caCertificate, 'spec.isCA'), true);
    assert.deepEqual(at(only(rendered.objects, 'Issuer', stringAt(caCertificate, 'spec.issuerRef.name')), 'spec'), { selfSigned: {} });
    assert.match(rendered.notes, /cert-manager issues/);
  });

  test('tls.mode certManager with an issuerRef uses that issuer and creates none', () => {
    const issuerRef = { name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' };
    const rendered = renderChart({ values: { tls: { mode: 'certManager', certManager: { issuerRef } } } });
    assert.ok(!rendered.objects.some((object) => object.kind === 'Issuer'));
    assert.deepEqual(at(only(rendered.objects, 'Certificate'), 'spec.issuerRef'), issuerRef);
  });

  test('tls.mode secret uses the given Secret and caBundle', () => {
    const rendered = renderChart({ values: { tls: { mode: 'secret', secretName: 'my-tls', caBundle: 'Q0E=' } } });
    assertValid(rendered);
    assert.ok(!rendered.objects.some((object) => object.kind === 'Secret'));
    assert.equal(at(webhookOf(rendered.objects), 'clientConfig.caBundle'), 'Q0E=');
    assert.equal(tlsSecretOf(only(rendered.objects, 'Deployment')), 'my-tls');
  });

  test('shortcuts.source hubKubeconfig mounts the hub kubeconfig and drops the local FCC grant', () => {
    const rendered = renderChart({ values: { shortcuts: { source: 'hubKubeconfig', hubKubeconfigSecret: 'hub-access', namespace: 'liqo' } } });
    assertValid(rendered);
    assert.deepEqual(grants(only(rendered.objects, 'ClusterRole')), expectedLeafGrants({ fccInCluster: false }));
    const deployment = only(rendered.objects, 'Deployment');
    const env = envOf(containerOf(deployment));
    assert.equal(env.get(envNameOf('shortcuts-kubeconfig')), '/etc/shortcut-webhook/hub/kubeconfig');
    assert.equal(env.get(envNameOf('shortcuts-namespace')), 'liqo');
    const volume = listAt(deployment, 'spec.template.spec.volumes').find((item) => at(item, 'secret.secretName') === 'hub-access');
    assert.deepEqual(at(volume, 'secret.items'), [{ key: 'kubeconfig', path: 'kubeconfig' }]);
    const mount = listAt(containerOf(deployment), 'volumeMounts').find((item) => at(item, 'name') === at(volume, 'name'));
    assert.equal(at(mount, 'mountPath'), '/etc/shortcut-webhook/hub');
    assert.match(rendered.notes, /kubeconfig in Secret hub-access/);
  });

  test('the default source grants FCC reads in the cluster and sets no hub kubeconfig', () => {
    const rendered = renderChart();
    assert.deepEqual(grants(only(rendered.objects, 'ClusterRole')), expectedLeafGrants({ fccInCluster: true }));
    assert.deepEqual(grants(only(rendered.objects, 'Role')), expectedLeaseGrants);
    assertNoWildcards(only(rendered.objects, 'ClusterRole'));
    assert.equal(envOf(containerOf(only(rendered.objects, 'Deployment'))).get(envNameOf('shortcuts-kubeconfig')), undefined);
  });

  test('clusterId, logLevel and resyncInterval reach the environment', () => {
    const rendered = renderChart({ values: { clusterId: 'cluster2', logLevel: 'debug', controller: { resyncInterval: '90s' } } });
    const env = envOf(containerOf(only(rendered.objects, 'Deployment')));
    assert.equal(env.get(envNameOf('cluster-id')), 'cluster2');
    assert.equal(env.get(envNameOf('log-level')), 'debug');
    assert.equal(env.get(envNameOf('resync-interval')), '90s');
  });

  test('controller.enabled false passes --no-controller and says so in the NOTES', () => {
    const rendered = renderChart({ values: { controller: { enabled: false } } });
    const container = containerOf(only(rendered.objects, 'Deployment'));
    assert.deepEqual(at(container, 'args'), ['serve', '--no-controller']);
    assert.equal(envOf(container).get(envNameOf('resync-interval')), undefined);
    assert.match(rendered.notes, /controller is off/);
  });

  test('failurePolicy Fail is possible but warned about', () => {
    const rendered = renderChart({ values: { webhook: { failurePolicy: 'Fail' } } });
    assertSafeWebhook(only(rendered.objects, 'MutatingWebhookConfiguration'), { serviceName: 'shortcut-webhook', namespace: 'shortcut-webhook', failurePolicy: 'Fail' });
    assert.match(rendered.notes, /WARNING: failurePolicy Fail/);
  });

  test('webhook.excludeNamespaces adds to the own namespace in the exclusion', () => {
    const rendered = renderChart({ values: { webhook: { excludeNamespaces: ['kube-system', 'liqo'] } } });
    assert.deepEqual(at(webhookOf(rendered.objects), 'namespaceSelector.matchExpressions.[0].values'), ['shortcut-webhook', 'kube-system', 'liqo']);
  });

  test('crds.install false leaves the CRD to Liqo; crds.keep false lets Helm delete it', () => {
    assert.ok(!renderChart({ values: { crds: { install: false } } }).objects.some((object) => object.kind === 'CustomResourceDefinition'));
    const crd = only(renderChart({ values: { crds: { keep: false } } }).objects, 'CustomResourceDefinition');
    assert.equal(crd.metadata.annotations, undefined);
  });

  test('the ServiceMonitor scrapes the ops port of the Service', () => {
    const rendered = renderChart({ values: { metrics: { serviceMonitor: { enabled: true, labels: { release: 'prom' } } } } });
    assertValid(rendered);
    const monitor = only(rendered.objects, 'ServiceMonitor');
    const service = only(rendered.objects, 'Service');
    assert.ok(selectorMatches(at(monitor, 'spec.selector.matchLabels'), service.metadata.labels));
    assert.deepEqual(at(monitor, 'spec.namespaceSelector.matchNames'), ['shortcut-webhook']);
    const endpoint = recordAt(listAt(monitor, 'spec.endpoints'), '[0]');
    assert.equal(endpoint['path'], '/metrics');
    assert.ok(listAt(service, 'spec.ports').some((port) => at(port, 'name') === endpoint['port']));
    assert.equal(monitor.metadata.labels?.['release'], 'prom');
  });

  test('the PrometheusRule alerts on errors, a stale view, unusable shortcuts and failing open, with known metrics', () => {
    const rendered = renderChart({ values: { metrics: { prometheusRule: { enabled: true } } } });
    assertValid(rendered);
    const rules = listAt(only(rendered.objects, 'PrometheusRule'), 'spec.groups.[0].rules');
    const byName = new Map(rules.map((rule) => [stringAt(rule, 'alert'), rule]));
    assert.deepEqual([...byName.keys()].sort(), [
      'ShortcutWebhookAdmissionErrors',
      'ShortcutWebhookDown',
      'ShortcutWebhookFailingOpen',
      'ShortcutWebhookUnusableShortcuts',
      'ShortcutWebhookViewStale',
    ]);
    assert.match(stringAt(byName.get('ShortcutWebhookAdmissionErrors'), 'expr'), /shortcut_webhook_admission_requests_total\{[^}]*result="error"/);
    assert.match(stringAt(byName.get('ShortcutWebhookViewStale'), 'expr'), /time\(\) - max by \(namespace, pod\) \(shortcut_webhook_view_last_sync_timestamp_seconds/);
    // FCCs between two other leaves are normal, not an alert.
    assert.match(stringAt(byName.get('ShortcutWebhookUnusableShortcuts'), 'expr'), /shortcut_webhook_pairs\{[^}]*state!~"usable\|not-this-cluster"/);
    assert.match(stringAt(byName.get('ShortcutWebhookFailingOpen'), 'expr'), /apiserver_admission_webhook_fail_open_count\{name="endpointslices\.shortcut-webhook\.liqo\.io"\}/);
    assert.match(stringAt(byName.get('ShortcutWebhookDown'), 'expr'), /up\{job="shortcut-webhook", namespace="shortcut-webhook"\}/);
    const templated = rules.filter((rule) => stringAt(rule, 'annotations.description').includes('{{ $'));
    assert.equal(templated.length, 4, 'every alert with labels names them in its description');
    const known = new Set([...webhookMetrics.keys(), ...apiServerMetrics.keys(), 'up']);
    for (const rule of rules) {
      const expr = stringAt(rule, 'expr');
      for (const match of expr.matchAll(/\b([a-z_][a-z0-9_]*)\{/g)) {
        const metric = (match[1] ?? '').replace(/_(bucket|sum|count)$/, (suffix) => (histogramMetrics.has((match[1] ?? '').slice(0, -suffix.length)) ? '' : suffix));
        assert.ok(known.has(metric), `${stringAt(rule, 'alert')}: unknown metric ${metric}`);
      }
      // Prometheus' own templates must come through Helm untouched.
      const description = stringAt(rule, 'annotations.description');
      for (const match of description.matchAll(/\{\{[^}]*\}\}/g)) assert.match(match[0], /^\{\{ \$(labels\.[a-z]+|value)( \| humanize\w*)? \}\}$/);
      assert.ok(['warning', 'info', 'critical'].includes(stringAt(rule, 'labels.severity')));
    }
  });

  test('spread hard requires one replica per node; spread none drops the spreading', () => {
    const hard = renderChart({ values: { spread: 'hard' } });
    assertValid(hard);
    const hardPod = recordAt(only(hard.objects, 'Deployment'), 'spec.template.spec');
    assert.equal(at(hardPod, 'affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.[0].topologyKey'), 'kubernetes.io/hostname');
    assert.equal(at(hardPod, 'topologySpreadConstraints.[0].whenUnsatisfiable'), 'DoNotSchedule');
    const none = recordAt(only(renderChart({ values: { spread: 'none' } }).objects, 'Deployment'), 'spec.template.spec');
    assert.equal(none['affinity'], undefined);
    assert.equal(none['topologySpreadConstraints'], undefined);
  });

  test('scheduling, image and pod values are rendered where Kubernetes expects them', () => {
    const rendered = renderChart({
      values: {
        image: { repository: 'registry.example/shortcut-webhook', digest: `sha256:${'a'.repeat(64)}` },
        imagePullSecrets: [{ name: 'pull' }],
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
        priorityClassName: 'system-cluster-critical',
        podLabels: { team: 'net' },
        podAnnotations: { 'example.com/a': 'b' },
        commonLabels: { 'example.com/owner': 'net' },
        extraEnv: [{ name: 'EXTRA', value: '1' }],
        resources: { limits: { memory: '512Mi' } },
        replicaCount: 3,
      },
    });
    assertValid(rendered);
    const deployment = only(rendered.objects, 'Deployment');
    const pod = recordAt(deployment, 'spec.template.spec');
    assert.equal(at(containerOf(deployment), 'image'), `registry.example/shortcut-webhook@sha256:${'a'.repeat(64)}`);
    assert.deepEqual(pod['nodeSelector'], { 'kubernetes.io/os': 'linux' });
    assert.equal(at(pod, 'tolerations.[0].key'), 'dedicated');
    assert.equal(pod['priorityClassName'], 'system-cluster-critical');
    assert.deepEqual(pod['imagePullSecrets'], [{ name: 'pull' }]);
    assert.equal(at(deployment, 'spec.template.metadata.labels.team'), 'net');
    assert.deepEqual(recordAt(deployment, 'spec.template.metadata')['annotations'], { 'example.com/a': 'b' });
    assert.equal(envOf(containerOf(deployment)).get('EXTRA'), '1');
    assert.equal(at(containerOf(deployment), 'resources.limits.memory'), '512Mi');
    assert.equal(at(deployment, 'spec.replicas'), 3);
    for (const object of rendered.objects) assert.equal(object.metadata.labels?.['example.com/owner'], 'net', `${object.kind} ${object.metadata.name}`);
  });

  test('a single replica and no preStop pause still render, with a warning for the replica', () => {
    const rendered = renderChart({ values: { replicaCount: 1, preStopSleepSeconds: 0 } });
    assertValid(rendered);
    assert.equal(at(containerOf(only(rendered.objects, 'Deployment')), 'lifecycle'), undefined);
    assert.match(rendered.notes, /WARNING: replicaCount 1/);
  });

  test('rbac.create and serviceAccount.create false use an existing identity', () => {
    const rendered = renderChart({ values: { rbac: { create: false }, serviceAccount: { create: false, name: 'platform-sa' } } });
    assertValid(rendered);
    assert.ok(!rendered.objects.some((object) => ['ClusterRole', 'Role', 'ServiceAccount', 'ClusterRoleBinding', 'RoleBinding'].includes(object.kind)));
    assert.equal(at(only(rendered.objects, 'Deployment'), 'spec.template.spec.serviceAccountName'), 'platform-sa');
  });

  test('hubKubeconfig without a Secret name fails the render, as helm would', () => {
    assert.throws(() => renderChart({ values: { shortcuts: { source: 'hubKubeconfig' } } }), /values\.schema\.json|hubKubeconfigSecret/);
  });
});
