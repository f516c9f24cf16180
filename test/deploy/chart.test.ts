// charts/shortcut-webhook rendered by the real helm (v4 and v3, scripts/kube-tools.ts) for every value set users
// meet, each object held to the Kubernetes schema and to the rules manifests/ is held to; the default render compared
// with `kubectl kustomize manifests/` field by field; the TLS material helm generates checked with node:crypto.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { kubeTools } from '../../scripts/kube-tools.ts';
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
import { chartDir, chartValues, helmLines, helmRefusal, readYamlFile, renderChart, runHelm, type RenderedChart, type RenderOptions } from './support/chart.ts';
import {
  at,
  hasSchema,
  isCustomResource,
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
import { apiServerMetrics, envNameOf, histogramMetrics, webhookMetrics } from './support/spec.ts';

const templatesDir = join(chartDir, 'templates');
const templateSources = readdirSync(templatesDir).map((file) => ({ file, text: readFileSync(join(templatesDir, file), 'utf8') }));

/** manifests/ as `kubectl apply -k manifests/` sends it, rendered by the real kubectl. */
function kustomizedManifests(): KubeObject[] {
  const result = spawnSync(kubeTools().kubectl, ['kustomize', repoPath('manifests')], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return parseManifests(result.stdout, 'kubectl kustomize manifests/');
}

/** Every object valid against its schema (Kubernetes, or cert-manager's and the Prometheus Operator's CRDs), with no
 *  field unknown to Kubernetes. */
function assertValid(rendered: RenderedChart): void {
  for (const object of rendered.objects) {
    const name = `${object.kind} ${object.metadata.name}`;
    assert.ok(hasSchema(object), `no schema for ${object.apiVersion} ${name}`);
    assert.doesNotThrow(() => validateAgainstSchema(object), name);
    if (!isCustomResource(object)) assert.deepEqual(unknownFields(object), [], name);
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

/** Paths where two values differ, e.g. `.metadata.labels.helm.sh/chart`; lists compared item by item. */
function differences(left: unknown, right: unknown, path = ''): string[] {
  if (JSON.stringify(left) === JSON.stringify(right)) return [];
  if (typeof left === 'object' && left !== null && typeof right === 'object' && right !== null && Array.isArray(left) === Array.isArray(right)) {
    const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
    return [...keys].flatMap((key) => differences(Reflect.get(left, key), Reflect.get(right, key), `${path}.${key}`));
  }
  return [path];
}

/** The TLS Secret's certificate, key and CA, checked as the API server and the pods will use them. */
function assertChainsToCaBundle(rendered: RenderedChart, serviceHost: string): void {
  const secret = only(rendered.objects, 'Secret');
  assert.equal(at(secret, 'type'), 'kubernetes.io/tls');
  assert.equal(secret.metadata.name, tlsSecretOf(only(rendered.objects, 'Deployment')));
  const caBundle = stringAt(webhookOf(rendered.objects), 'clientConfig.caBundle');
  const data = recordAt(secret, 'data');
  assert.equal(data['ca.crt'], caBundle);
  const decode = (value: unknown): string => Buffer.from(String(value), 'base64').toString('utf8');
  const ca = new X509Certificate(decode(caBundle));
  const serving = new X509Certificate(decode(data['tls.crt']));
  assert.ok(ca.ca, 'the caBundle is a CA certificate');
  assert.ok(serving.checkIssued(ca), 'the serving certificate names the CA as its issuer');
  assert.ok(serving.verify(ca.publicKey), 'the serving certificate is signed by the CA key');
  assert.ok(!serving.ca);
  assert.ok(serving.checkPrivateKey(createPrivateKey(decode(data['tls.key']))), 'tls.key is the key of tls.crt');
  const [shortName, namespace] = serviceHost.split('.');
  const dnsNames = (serving.subjectAltName ?? '').split(', ').map((name) => name.replace(/^DNS:/, ''));
  assert.deepEqual(dnsNames.sort(), [shortName, `${shortName}.${namespace}`, serviceHost, `${serviceHost}.cluster.local`].sort());
  assert.equal(serving.checkHost(serviceHost), serviceHost);
  const days = (Date.parse(serving.validTo) - Date.parse(serving.validFrom)) / 86_400_000;
  assert.ok(Math.abs(days - Number(at(chartValues(), 'tls.helm.validityDays'))) <= 1, `valid ${days} days`);
}

describe('Chart.yaml', () => {
  const chart = readYamlFile(join(chartDir, 'Chart.yaml'));
  const pkg: unknown = JSON.parse(readFileSync(repoPath('package.json'), 'utf8'));

  test('is an apiVersion v2 application chart (Helm 3 and 4) named shortcut-webhook with a SemVer version', () => {
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

/** Every value set users meet; each is linted and rendered by both Helm lines. */
/** Every switch of docs/security.md on. */
const HARDENED = {
  networkPolicy: { enabled: true, webhookFrom: [{ ipBlock: { cidr: '10.0.0.10/32' } }], opsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
  admissionPolicy: { enabled: true },
  debugPairs: 'localhost',
  webhook: { maxReviewsInFlight: 16, maxReviewBytesInFlight: '120Mi' },
};

const valueSets: readonly [string, RenderOptions][] = [
  ['the defaults', {}],
  ['TLS from cert-manager', { values: { tls: { mode: 'certManager' } } }],
  ['TLS from cert-manager with an issuer', { values: { tls: { mode: 'certManager', certManager: { issuerRef: { name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' } } } } }],
  ['TLS from a Secret', { values: { tls: { mode: 'secret', secretName: 'my-tls', caBundle: 'Q0E=' } } }],
  ['FCCs from the hub', { values: { shortcuts: { source: 'hubKubeconfig', hubKubeconfigSecret: 'hub-access', namespace: 'default' } } }],
  ['FCCs mirrored into the leaf', { values: { shortcuts: { source: 'cluster' } } }],
  ['the controller off', { values: { controller: { enabled: false } } }],
  ['the shadow repair off', { values: { webhook: { shadowEndpointSlices: { enabled: false } } } }],
  ['ServiceMonitor and PrometheusRule on', { values: { metrics: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: true } } } }],
  ['another release name and namespace', { releaseName: 'edge', namespace: 'leaf-net' }],
  ['the hardening on', { values: HARDENED }],
];

describe('helm lint and helm template, for every value set', () => {
  const renders = new Map<string, RenderedChart>();
  const render = (options: RenderOptions): RenderedChart => {
    const key = JSON.stringify(options);
    const rendered = renders.get(key) ?? renderChart(options);
    renders.set(key, rendered);
    return rendered;
  };
  for (const [name, options] of valueSets) {
    for (const line of helmLines) {
      test(`${name}: Helm ${line} lints the chart (--strict) and renders valid objects`, () => {
        const lint = runHelm(['lint', chartDir, '--strict', '--namespace', options.namespace ?? 'shortcut-webhook'], { ...options, helm: line });
        assert.equal(lint.status, 0, lint.stdout + lint.stderr);
        assert.match(lint.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
        const rendered = render({ ...options, helm: line });
        assertValid(rendered);
        const namespace = options.namespace ?? 'shortcut-webhook';
        const serviceName = options.releaseName === undefined ? 'shortcut-webhook' : `${options.releaseName}-shortcut-webhook`;
        const shadows = name !== 'the shadow repair off';
        assertSafeWebhook(only(rendered.objects, 'MutatingWebhookConfiguration'), { serviceName, namespace, failurePolicy: 'Ignore', shadows });
        assertHardenedDeployment(only(rendered.objects, 'Deployment'), { tlsSecret: tlsSecretOf(only(rendered.objects, 'Deployment')) });
        for (const object of rendered.objects) {
          if (!['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(object.kind)) {
            assert.equal(object.metadata.namespace, namespace, `${object.kind} ${object.metadata.name} in the release namespace`);
          }
        }
      });
    }
    test(`${name}: Helm v3 renders what Helm v4 renders (less the generated TLS material)`, () => {
      // Sorted: Helm v4 orders the custom kinds (Certificate, Issuer) apart from where Helm v3 puts them.
      const strip = (rendered: RenderedChart): unknown[] => [...rendered.objects].sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`)).map((object) => {
        const copy: Record<string, unknown> = structuredClone(object);
        if (object.kind === 'Secret') delete copy['data'];
        if (object.kind === 'MutatingWebhookConfiguration') for (const webhook of listAt(copy, 'webhooks')) if (isRecord(webhook)) delete webhook['clientConfig'];
        return copy;
      });
      assert.deepEqual(strip(render({ ...options, helm: 'v3' })), strip(render({ ...options, helm: 'v4' })));
    });
  }
});

describe('values', () => {
  // Each is refused by helm itself, before anything renders; the pattern is what both Helm lines' messages name.
  const rejected: [string, Record<string, unknown>, RegExp][] = [
    ['failurePolicy Deny', { webhook: { failurePolicy: 'Deny' } }, /failurePolicy/],
    ['a timeout above the API server maximum of 30 s', { webhook: { timeoutSeconds: 31 } }, /timeoutSeconds/],
    ['an FCC source other than cluster or hubKubeconfig', { shortcuts: { source: 'files' } }, /source/],
    ['hubKubeconfig without its Secret', { shortcuts: { source: 'hubKubeconfig', hubKubeconfigSecret: '' } }, /hubKubeconfigSecret/],
    ['tls.mode secret without its caBundle', { tls: { mode: 'secret' } }, /caBundle/],
    ['the liqo.io/webhook label', { commonLabels: { 'liqo.io/webhook': 'true' } }, /commonLabels|liqo\.io\/webhook/],
    ['a misspelt key', { replicas: 3 }, /replicas/],
    ['a misspelt nested key', { controller: { resync: '5m' } }, /resync/],
    ['a duration that is not Go syntax', { controller: { resyncInterval: '5 minutes' } }, /resyncInterval/],
    ['an unknown pull policy', { image: { pullPolicy: 'Sometimes' } }, /pullPolicy/],
    ['zero replicas', { replicaCount: 0 }, /replicaCount/],
  ];
  for (const [name, values, names] of rejected) {
    for (const line of helmLines) {
      test(`Helm ${line} refuses ${name} against values.schema.json`, () => {
        const error = helmRefusal({ values, helm: line });
        assert.match(error, /values don't meet the specifications of the schema/);
        assert.match(error, names);
      });
    }
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

  test('every included template is defined in the chart', () => {
    const defined = new Set(templateSources.flatMap(({ text }) => [...text.matchAll(/\{\{-? *define "([^"]+)"/g)].map((match) => match[1] ?? '')));
    assert.ok(defined.size > 3);
    for (const { file, text } of templateSources) {
      for (const match of text.matchAll(/(?:include|template) "([^"]+)"/g)) assert.ok(defined.has(match[1] ?? ''), `${file}: ${match[1]}`);
    }
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
});

describe('the chart rendered with its defaults', () => {
  const rendered = renderChart();
  const plain = kustomizedManifests();

  test('makes the objects of manifests/ (less the Namespace, which Helm creates) plus the TLS Secret', () => {
    const names = (objects: readonly KubeObject[]): string[] => objects.map((object) => `${object.kind}/${object.metadata.name}`).sort();
    const expected = [...names(plain.filter((object) => object.kind !== 'Namespace')), 'Secret/shortcut-webhook-tls'].sort();
    assert.deepEqual(names(rendered.objects), expected);
  });

  test('is the objects of `kubectl kustomize manifests/` field for field, but for the differences named here', () => {
    // Helm's bookkeeping labels, and the version label manifests/ keeps on the Deployment only; the caBundle the chart
    // generates and manifests/ leaves to certs/install-secret.sh.
    const named = [
      /^\.metadata\.labels\.helm\.sh\/chart$/,
      /^\.metadata\.labels\.app\.kubernetes\.io\/managed-by$/,
      /^\.metadata\.labels\.app\.kubernetes\.io\/version$/,
      /^\.webhooks\.[01]\.clientConfig\.caBundle$/,
    ];
    const unnamed: string[] = [];
    const seen = new Set<RegExp>();
    for (const object of rendered.objects) {
      const counterpart = plain.find((item) => item.kind === object.kind && item.metadata.name === object.metadata.name);
      if (object.kind === 'Secret') continue; // made by the chart alone (above)
      assert.ok(counterpart, `${object.kind} ${object.metadata.name} is in manifests/`);
      for (const path of differences(object, counterpart)) {
        const allowed = named.find((pattern) => pattern.test(path));
        if (allowed === undefined) unnamed.push(`${object.kind} ${object.metadata.name}: ${path}`);
        else seen.add(allowed);
      }
    }
    assert.deepEqual(unnamed, []);
    assert.equal(seen.size, named.length, 'every named difference still occurs');
  });

  test('the webhook has the safety settings of SPEC §7 and the Deployment its hardening', () => {
    assertSafeWebhook(only(rendered.objects, 'MutatingWebhookConfiguration'), { serviceName: 'shortcut-webhook', namespace: 'shortcut-webhook', failurePolicy: 'Ignore' });
    assertHardenedDeployment(only(rendered.objects, 'Deployment'), { tlsSecret: 'shortcut-webhook-tls' });
  });

  test('fills the caBundle with the CA that signed the serving certificate in the mounted Secret', () => {
    assertChainsToCaBundle(rendered, 'shortcut-webhook.shortcut-webhook.svc');
  });

  test('the certificate check fails on a serving certificate from another CA', () => {
    const other = renderChart();
    const mixed: RenderedChart = {
      objects: [...rendered.objects.filter((object) => object.kind !== 'Secret'), only(other.objects, 'Secret')],
      text: '',
      notes: '',
    };
    assert.throws(() => assertChainsToCaBundle(mixed, 'shortcut-webhook.shortcut-webhook.svc'));
  });

  test('prints NOTES that say where shortcuts come from and how TLS is handled', () => {
    assert.match(rendered.notes, /Shortcuts are read from this cluster, all namespaces\.\n {2}\(FCCs mirrored into this leaf\. The shortcut operator keeps them on the hub/);
    assert.match(rendered.notes, /TLS: the chart generated a CA/);
    // The one warning of the defaults: their image name is no registry's (test/deploy/uninstall.test.ts).
    assert.deepEqual(rendered.notes.match(/WARNING[^\n]*/g), ['WARNING: image shortcut-webhook:0.2.0 is the chart\'s default name, which no registry serves: the pods cannot start.']);
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
    assertChainsToCaBundle(rendered, 'edge-shortcut-webhook.leaf-net.svc');
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
    const rendered = renderChart({ values: { shortcuts: { source: 'hubKubeconfig', hubKubeconfigSecret: 'hub-access', namespace: 'default' } } });
    assertValid(rendered);
    assert.deepEqual(grants(only(rendered.objects, 'ClusterRole')), expectedLeafGrants({ fccInCluster: false }));
    const deployment = only(rendered.objects, 'Deployment');
    const env = envOf(containerOf(deployment));
    assert.equal(env.get(envNameOf('shortcuts-kubeconfig')), '/etc/shortcut-webhook/hub/kubeconfig');
    assert.equal(env.get(envNameOf('shortcuts-namespace')), 'default');
    const volume = listAt(deployment, 'spec.template.spec.volumes').find((item) => at(item, 'secret.secretName') === 'hub-access');
    assert.deepEqual(at(volume, 'secret.items'), [{ key: 'kubeconfig', path: 'kubeconfig' }]);
    const mount = listAt(containerOf(deployment), 'volumeMounts').find((item) => at(item, 'name') === at(volume, 'name'));
    assert.equal(at(mount, 'mountPath'), '/etc/shortcut-webhook/hub');
    assert.match(rendered.notes, /kubeconfig in Secret hub-access/);
    assert.doesNotMatch(rendered.notes, /mirrored/);
  });

  test('shortcuts.hubs mounts one kubeconfig per hub, each reader bound to its hub, and hubNamespaces scopes them', () => {
    const rendered = renderChart({ values: { shortcuts: {
      source: 'hubKubeconfig', hubNamespaces: ['default', 'demo'],
      hubs: [{ clusterId: 'cluster1', kubeconfigSecret: 'hub-cluster1' }, { clusterId: 'cluster9', kubeconfigSecret: 'hub-cluster9', kubeconfigKey: 'config' }],
    } } });
    assertValid(rendered);
    const deployment = only(rendered.objects, 'Deployment');
    const env = envOf(containerOf(deployment));
    assert.equal(env.get(envNameOf('shortcuts-kubeconfig')), 'cluster1=/etc/shortcut-webhook/hubs/0/kubeconfig,cluster9=/etc/shortcut-webhook/hubs/1/kubeconfig');
    assert.equal(env.get(envNameOf('hub-namespace')), 'default,demo');
    const mounts = listAt(containerOf(deployment), 'volumeMounts');
    for (const [secret, key, dir] of [['hub-cluster1', 'kubeconfig', '/etc/shortcut-webhook/hubs/0'], ['hub-cluster9', 'config', '/etc/shortcut-webhook/hubs/1']]) {
      const volume = listAt(deployment, 'spec.template.spec.volumes').find((item) => at(item, 'secret.secretName') === secret);
      assert.deepEqual(at(volume, 'secret.items'), [{ key, path: 'kubeconfig' }]);
      assert.equal(at(mounts.find((item) => at(item, 'name') === at(volume, 'name')), 'mountPath'), dir);
    }
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

  test('webhook.excludeNamespaces adds to the own namespace in the exclusion, for both webhooks', () => {
    const rendered = renderChart({ values: { webhook: { excludeNamespaces: ['kube-system', 'liqo'] } } });
    const webhooks = listAt(only(rendered.objects, 'MutatingWebhookConfiguration'), 'webhooks');
    assert.equal(webhooks.length, 2);
    for (const webhook of webhooks) {
      assert.deepEqual(at(webhook, 'namespaceSelector.matchExpressions.[0].values'), ['shortcut-webhook', 'kube-system', 'liqo']);
    }
  });

  test('webhook.shadowEndpointSlices.enabled false drops the ShadowEndpointSlice webhook and its grant, and says so', () => {
    const on = renderChart();
    assert.equal(at(listAt(only(on.objects, 'MutatingWebhookConfiguration'), 'webhooks'), '[1].name'), 'shadowendpointslices.shortcut-webhook.liqo.io');
    assert.match(on.notes, /ShadowEndpointSlices of Liqo's direct connections/);
    const off = renderChart({ values: { webhook: { shadowEndpointSlices: { enabled: false } } } });
    assertSafeWebhook(only(off.objects, 'MutatingWebhookConfiguration'), { serviceName: 'shortcut-webhook', namespace: 'shortcut-webhook', failurePolicy: 'Ignore', shadows: false });
    assert.deepEqual(grants(only(off.objects, 'ClusterRole')), expectedLeafGrants({ fccInCluster: true, shadows: false }));
    assert.match(off.notes, /left as Liqo makes them/);
  });

  test('failurePolicy Fail applies to the EndpointSlice webhook only: the ShadowEndpointSlice one still fails open', () => {
    const rendered = renderChart({ values: { webhook: { failurePolicy: 'Fail' } } });
    const webhooks = listAt(only(rendered.objects, 'MutatingWebhookConfiguration'), 'webhooks');
    assert.deepEqual(webhooks.map((webhook) => at(webhook, 'failurePolicy')), ['Fail', 'Ignore']);
  });

  test('the CRD comes from crds/: installed where missing, skipped with --skip-crds, never a template Helm owns', () => {
    assert.ok(!readdirSync(templatesDir).some((file) => file.includes('crd')));
    const skipped = runHelm(['template', 'shortcut-webhook', chartDir, '--namespace', 'shortcut-webhook', '--skip-crds']);
    assert.equal(skipped.status, 0, skipped.stderr);
    assert.ok(!parseManifests(skipped.stdout, 'helm template --skip-crds').some((object) => object.kind === 'CustomResourceDefinition'));
    const crd = only(renderChart().objects, 'CustomResourceDefinition');
    assert.equal(crd.metadata.labels?.['app.kubernetes.io/managed-by'], undefined, 'crds/ files are not templated');
  });

  test('the schema check catches a mistyped field of a Certificate and of a ServiceMonitor', () => {
    const certificate = structuredClone(only(renderChart({ values: { tls: { mode: 'certManager' } } }).objects, 'Certificate', 'shortcut-webhook'));
    recordAt(certificate, 'spec')['dnsNames'] = 'shortcut-webhook.shortcut-webhook.svc';
    assert.throws(() => validateAgainstSchema(certificate), /dnsNames/);
    const monitor = structuredClone(only(renderChart({ values: { metrics: { serviceMonitor: { enabled: true } } } }).objects, 'ServiceMonitor'));
    recordAt(monitor, 'spec')['endpoints'] = { port: 'ops' };
    assert.throws(() => validateAgainstSchema(monitor), /endpoints/);
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
      'ShortcutWebhookGatewayStale',
      'ShortcutWebhookPeerOnHubPath',
      'ShortcutWebhookSlowFailover',
      'ShortcutWebhookUnusableShortcuts',
      'ShortcutWebhookViewStale',
    ]);
    // Every path: the view's path per peer, whichever path (FCC, stock, direct connections) decided it.
    assert.match(stringAt(byName.get('ShortcutWebhookPeerOnHubPath'), 'expr'), /shortcut_webhook_peer_path\{[^}]*path="hub", connection="Connected"\}/);
    assert.equal(stringAt(byName.get('ShortcutWebhookPeerOnHubPath'), 'for'), '10m');
    // A gateway that stopped reporting: the Connection's state as peer_path carries it.
    assert.match(stringAt(byName.get('ShortcutWebhookGatewayStale'), 'expr'), /shortcut_webhook_peer_path\{[^}]*connection="connection-stale"\}/);
    assert.equal(stringAt(byName.get('ShortcutWebhookGatewayStale'), 'for'), '1m');
    assert.match(stringAt(byName.get('ShortcutWebhookSlowFailover'), 'expr'), /shortcut_webhook_failover_seconds_bucket/);
    assert.match(stringAt(byName.get('ShortcutWebhookAdmissionErrors'), 'expr'), /shortcut_webhook_admission_requests_total\{[^}]*result="error"/);
    assert.match(stringAt(byName.get('ShortcutWebhookViewStale'), 'expr'), /time\(\) - max by \(namespace, pod\) \(shortcut_webhook_view_last_sync_timestamp_seconds/);
    // FCCs between two other leaves are normal, not an alert.
    assert.match(stringAt(byName.get('ShortcutWebhookUnusableShortcuts'), 'expr'), /shortcut_webhook_pairs\{[^}]*state!~"usable\|not-this-cluster"/);
    assert.match(stringAt(byName.get('ShortcutWebhookFailingOpen'), 'expr'), /apiserver_admission_webhook_fail_open_count\{name="endpointslices\.shortcut-webhook\.liqo\.io"\}/);
    assert.match(stringAt(byName.get('ShortcutWebhookDown'), 'expr'), /up\{job="shortcut-webhook", namespace="shortcut-webhook"\}/);
    const templated = rules.filter((rule) => stringAt(rule, 'annotations.description').includes('{{ $'));
    assert.equal(templated.length, 7, 'every alert with labels names them in its description');
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
    // crds/ is not templated: the CRD keeps its own labels.
    for (const object of rendered.objects.filter((item) => item.kind !== 'CustomResourceDefinition')) {
      assert.equal(object.metadata.labels?.['example.com/owner'], 'net', `${object.kind} ${object.metadata.name}`);
    }
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

  test('hubKubeconfig without a Secret name is refused by helm', () => {
    assert.match(helmRefusal({ values: { shortcuts: { source: 'hubKubeconfig' } } }), /hubKubeconfigSecret/);
  });

  test('the hardening is off by default: no NetworkPolicy, no admission policy, /debug/pairs for any client, the measured bounds', () => {
    const rendered = renderChart();
    assert.deepEqual(rendered.objects.filter((o) => ['NetworkPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(o.kind)), []);
    const env = envOf(containerOf(only(rendered.objects, 'Deployment')));
    assert.deepEqual([envNameOf('debug-pairs'), envNameOf('max-reviews-in-flight'), envNameOf('max-review-bytes-in-flight')].map((name) => env.get(name)), ['any', '64', '84Mi']);
  });

  test('the hardening on: the bounds and debugPairs reach the environment, the NetworkPolicy opens the two ports to the peers given', () => {
    const rendered = renderChart({ values: HARDENED, releaseName: 'edge', namespace: 'leaf-net' });
    const deployment = only(rendered.objects, 'Deployment');
    const env = envOf(containerOf(deployment));
    assert.deepEqual([envNameOf('debug-pairs'), envNameOf('max-reviews-in-flight'), envNameOf('max-review-bytes-in-flight')].map((name) => env.get(name)), ['localhost', '16', '120Mi']);
    const policy = only(rendered.objects, 'NetworkPolicy');
    assert.ok(selectorMatches(recordAt(policy, 'spec.podSelector.matchLabels'), recordAt(deployment, 'spec.template.metadata.labels')));
    assert.deepEqual(at(policy, 'spec.ingress'), [
      { ports: [{ port: 'webhook', protocol: 'TCP' }], from: HARDENED.networkPolicy.webhookFrom },
      { ports: [{ port: 'ops', protocol: 'TCP' }], from: HARDENED.networkPolicy.opsFrom },
    ]);
  });

  test('the admission policies are manifests/hardening/\'s, for the release\'s ServiceAccount and names', () => {
    const rendered = renderChart({ values: HARDENED, releaseName: 'edge', namespace: 'leaf-net' });
    const account = only(rendered.objects, 'ServiceAccount');
    const shipped = readManifests(repoPath('manifests/hardening/admission-policy.yaml'));
    const spec = (object: KubeObject): string => JSON.stringify(at(object, 'spec'))
      .replaceAll(`system:serviceaccount:${account.metadata.namespace}:${account.metadata.name}`, 'system:serviceaccount:shortcut-webhook:shortcut-webhook')
      .replaceAll('edge-shortcut-webhook-', 'shortcut-webhook-');
    const kinds = ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
    assert.deepEqual(rendered.objects.filter((o) => kinds.includes(o.kind)).map(spec).sort(), shipped.map(spec).sort());
    assert.ok(rendered.objects.filter((o) => kinds.includes(o.kind)).every((o) => o.metadata.name.startsWith('edge-shortcut-webhook-')));
  });

  test('networkPolicy on without the API server\'s addresses is refused by helm', () => {
    assert.match(helmRefusal({ values: { networkPolicy: { enabled: true } } }), /networkPolicy.webhookFrom must name the API server/);
  });
});
