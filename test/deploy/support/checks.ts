// Assertions shared by the plain manifests and the rendered chart, so both are held to the same rules.
import assert from 'node:assert/strict';
import { at, isRecord, listAt, recordAt, stringAt, type KubeObject } from './kube.ts';
import { envNameOf, liqoWebhookLabel, reflectionLabel, serveFlags, shadowWebhookPath, webhookPath } from './spec.ts';

export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

function stringList(value: unknown, what: string): string[] {
  assert.ok(Array.isArray(value) && value.every((item) => typeof item === 'string'), `${what} must be a list of strings`);
  return value.map(String);
}

export function rulesOf(role: KubeObject): PolicyRule[] {
  return listAt(role, 'rules').map((rule, index) => {
    assert.ok(isRecord(rule), `rule ${index}`);
    const names = rule['resourceNames'];
    return {
      apiGroups: stringList(rule['apiGroups'], `rule ${index} apiGroups`),
      resources: stringList(rule['resources'], `rule ${index} resources`),
      verbs: stringList(rule['verbs'], `rule ${index} verbs`),
      ...(names === undefined ? {} : { resourceNames: stringList(names, `rule ${index} resourceNames`) }),
    };
  });
}

/** `group/resource[/name]` → sorted verbs, for comparing whole rule sets. */
export function grants(role: KubeObject): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const rule of rulesOf(role)) {
    assert.ok(!('nonResourceURLs' in rule), 'no non-resource URLs');
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        for (const name of rule.resourceNames ?? ['']) {
          const key = `${group}/${resource}${name ? `/${name}` : ''}`;
          result[key] = [...new Set([...(result[key] ?? []), ...rule.verbs])].sort();
        }
      }
    }
  }
  return result;
}

export function assertNoWildcards(role: KubeObject): void {
  for (const rule of rulesOf(role)) {
    for (const item of [...rule.apiGroups, ...rule.resources, ...rule.verbs, ...(rule.resourceNames ?? [])]) {
      assert.ok(!item.includes('*'), `${role.kind} ${role.metadata.name} grants a wildcard: ${item}`);
    }
  }
}

export function assertNoLiqoWebhookLabel(objects: readonly KubeObject[]): void {
  for (const object of objects) {
    const labels = { ...(object.metadata.labels ?? {}) };
    const template = at(object, 'spec');
    if (isRecord(template) && isRecord(template['template'])) Object.assign(labels, at(template, 'template.metadata.labels'));
    assert.ok(!(liqoWebhookLabel in labels), `${object.kind} ${object.metadata.name} carries ${liqoWebhookLabel}`);
  }
}

export interface WebhookExpectations {
  readonly serviceName: string;
  readonly namespace: string;
  /** The EndpointSlice webhook's; the ShadowEndpointSlice webhook always fails open. */
  readonly failurePolicy: 'Ignore' | 'Fail';
  /** Whether the second webhook, for Liqo's ShadowEndpointSlices (SPEC §9), is there; it is unless switched off. */
  readonly shadows?: boolean;
}

/** What each webhook of the configuration reviews, in order: the resource's rule and the server's path for it. */
const webhookResources = [
  { path: webhookPath, rule: { apiGroups: ['discovery.k8s.io'], apiVersions: ['v1'], resources: ['endpointslices'] } },
  { path: shadowWebhookPath, rule: { apiGroups: ['offloading.liqo.io'], apiVersions: ['v1beta1'], resources: ['shadowendpointslices'] } },
] as const;

/**
 * The safety settings of SPEC §7 and §9, on a MutatingWebhookConfiguration: one webhook per resource, each with the
 * same settings but for its name, rule and path, and the second always failing open. Returns the first.
 */
export function assertSafeWebhook(configuration: KubeObject, expected: WebhookExpectations): Record<string, unknown> {
  const webhooks = listAt(configuration, 'webhooks');
  const resources = expected.shadows === false ? webhookResources.slice(0, 1) : webhookResources;
  assert.equal(webhooks.length, resources.length, `one webhook per resource: ${resources.map((r) => r.rule.resources[0]).join(', ')}`);
  const names = new Set<string>();
  const shared: string[] = [];
  resources.forEach((resource, index) => {
    const webhook = recordAt(webhooks, `[${index}]`);
    const name = stringAt(webhook, 'name');
    assert.match(name, /^[a-z0-9-]+(\.[a-z0-9-]+){2,}$/, 'a DNS-like name of at least three segments');
    names.add(name);
    assert.equal(webhook['failurePolicy'], index === 0 ? expected.failurePolicy : 'Ignore', `${name} failurePolicy`);
    assert.equal(webhook['sideEffects'], 'None');
    assert.equal(webhook['timeoutSeconds'], 5);
    assert.deepEqual(webhook['admissionReviewVersions'], ['v1']);
    assert.equal(webhook['reinvocationPolicy'], 'IfNeeded');
    assert.equal(webhook['matchPolicy'], 'Equivalent');
    assert.deepEqual(webhook['rules'], [{ ...resource.rule, operations: ['CREATE', 'UPDATE'], scope: 'Namespaced' }]);
    assert.deepEqual(webhook['objectSelector'], { matchLabels: { [reflectionLabel.key]: reflectionLabel.value } });
    const expressions = listAt(webhook, 'namespaceSelector.matchExpressions');
    assert.ok(
      expressions.some((expression) => isRecord(expression)
        && expression['key'] === 'kubernetes.io/metadata.name'
        && expression['operator'] === 'NotIn'
        && Array.isArray(expression['values'])
        && expression['values'].includes(expected.namespace)),
      'the webhook never sees its own namespace',
    );
    assert.equal(at(webhook, 'clientConfig.url'), undefined, 'a Service reference, not a URL');
    assert.deepEqual(recordAt(webhook, 'clientConfig.service'), {
      name: expected.serviceName,
      namespace: expected.namespace,
      path: resource.path,
      port: 443,
    });
    // Everything else the same as the first: a setting changed on one webhook only is a mistake.
    const { name: _name, rules: _rules, failurePolicy: _policy, clientConfig, ...rest } = webhook;
    const { service: _service, ...client } = isRecord(clientConfig) ? clientConfig : {};
    shared.push(JSON.stringify({ ...rest, client }));
  });
  assert.equal(names.size, resources.length, 'distinct webhook names');
  assert.equal(new Set(shared).size, 1, 'the webhooks share every other setting');
  assertNoLiqoWebhookLabel([configuration]);
  return recordAt(webhooks, '[0]');
}

export interface ContainerPort { readonly name: string; readonly containerPort: number }

export function podSpecOf(deployment: KubeObject): Record<string, unknown> {
  return recordAt(deployment, 'spec.template.spec');
}

export function containerOf(deployment: KubeObject): Record<string, unknown> {
  const containers = listAt(deployment, 'spec.template.spec.containers');
  assert.equal(containers.length, 1, 'one container');
  return recordAt(containers, '[0]');
}

export function envOf(container: Record<string, unknown>): Map<string, unknown> {
  const env = new Map<string, unknown>();
  for (const item of listAt(container, 'env')) {
    const name = stringAt(item, 'name');
    assert.ok(!env.has(name), `env ${name} set twice`);
    env.set(name, isRecord(item) && 'value' in item ? item['value'] : item);
  }
  return env;
}

function quantity(text: unknown, unit: 'cpu' | 'memory'): number {
  assert.equal(typeof text, 'string', `${unit} quantity`);
  const match = /^([0-9.]+)(m|Ki|Mi|Gi)?$/.exec(String(text));
  assert.ok(match?.[1], `${unit} quantity ${String(text)}`);
  const scale: Record<string, number> = { '': 1, m: 0.001, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };
  return Number(match[1]) * (scale[match[2] ?? ''] ?? Number.NaN);
}

/** The pod hardening of SPEC §7 and the brief: probes, resources, non-root, read-only root, spread, shutdown. */
export function assertHardenedDeployment(deployment: KubeObject, options: { readonly tlsSecret: string }): void {
  const pod = podSpecOf(deployment);
  const container = containerOf(deployment);
  assert.equal(at(deployment, 'spec.replicas'), 2, 'two replicas');

  const podSecurity = recordAt(pod, 'securityContext');
  assert.equal(podSecurity['runAsNonRoot'], true);
  assert.ok(Number.isInteger(podSecurity['runAsUser']) && Number(podSecurity['runAsUser']) > 0, 'numeric non-root user');
  assert.equal(at(podSecurity, 'seccompProfile.type'), 'RuntimeDefault');
  const security = recordAt(container, 'securityContext');
  assert.equal(security['allowPrivilegeEscalation'], false);
  assert.equal(security['readOnlyRootFilesystem'], true);
  assert.notEqual(security['privileged'], true);
  assert.deepEqual(at(security, 'capabilities.drop'), ['ALL']);
  assert.equal(at(security, 'capabilities.add'), undefined);
  assert.notEqual(pod['hostNetwork'], true);
  // Service links would put SHORTCUT_WEBHOOK_PORT=tcp://... into the environment (Service shortcut-webhook).
  assert.equal(pod['enableServiceLinks'], false);

  for (const kind of ['requests', 'limits'] as const) {
    for (const unit of ['cpu', 'memory'] as const) assert.ok(at(container, `resources.${kind}.${unit}`), `${kind}.${unit}`);
  }
  for (const unit of ['cpu', 'memory'] as const) {
    assert.ok(quantity(at(container, `resources.limits.${unit}`), unit) >= quantity(at(container, `resources.requests.${unit}`), unit));
  }
  const memoryLimit = quantity(at(container, 'resources.limits.memory'), 'memory');
  assert.ok(memoryLimit >= 160 * 1024 ** 2, 'room above the 120 MB working set');
  const env = envOf(container);
  const heap = /--max-old-space-size=(\d+)/.exec(String(env.get('NODE_OPTIONS') ?? ''));
  if (heap?.[1]) assert.ok(Number(heap[1]) * 1024 ** 2 < memoryLimit, 'the V8 heap cap fits in the memory limit');

  const ports = listAt(container, 'ports').map((port) => ({ name: stringAt(port, 'name'), containerPort: Number(at(port, 'containerPort')) }));
  assert.deepEqual(ports.map((port) => port.name).sort(), ['ops', 'webhook']);
  const opsPort = ports.find((port) => port.name === 'ops')?.containerPort;
  const webhookPort = ports.find((port) => port.name === 'webhook')?.containerPort;
  assert.equal(env.get(envNameOf('port')), String(webhookPort), 'the server listens where the Service sends');
  assert.equal(env.get(envNameOf('ops-port')), String(opsPort), 'the ops server listens where the probes look');

  assert.deepEqual(recordAt(container, 'startupProbe.httpGet'), { path: '/healthz', port: 'ops' });
  assert.deepEqual(recordAt(container, 'livenessProbe.httpGet'), { path: '/healthz', port: 'ops' });
  assert.deepEqual(recordAt(container, 'readinessProbe.httpGet'), { path: '/readyz', port: 'ops' });
  // A frozen or cut-off replica leaves the Service within about 4 s (docs/deploy.md): the probes it misses, each
  // timed out, one period apart.
  const ready = recordAt(container, 'readinessProbe');
  const outAfter = Number(ready['periodSeconds']) * (Number(ready['failureThreshold']) - 1) + Number(ready['timeoutSeconds']);
  assert.ok(outAfter <= 5, `a frozen replica is out of the Service within 5 s, not ${outAfter} s`);

  const preStop = listAt(container, 'lifecycle.preStop.exec.command').map(String);
  const pauseMs = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(preStop.join(' '))?.[1]);
  assert.equal(preStop[0], 'node', 'the distroless image has no sleep binary; node waits');
  assert.ok(pauseMs >= 1000, 'a preStop pause of at least a second');
  const grace = Number(pod['terminationGracePeriodSeconds']);
  assert.ok(grace * 1000 > pauseMs + 5000, 'the grace period covers the pause and one review timeout');

  for (const name of ['POD_NAME', 'POD_NAMESPACE']) {
    const source = env.get(name);
    assert.equal(at(source, 'valueFrom.fieldRef.fieldPath'), name === 'POD_NAME' ? 'metadata.name' : 'metadata.namespace');
  }
  for (const name of env.keys()) {
    if (!name.startsWith('SHORTCUT_WEBHOOK_')) continue;
    assert.ok(serveFlags.some((flag) => envNameOf(flag) === name), `${name} is not the variable of a serve flag`);
  }
  assert.equal(listAt(container, 'args')[0], 'serve');
  const image = stringAt(container, 'image');
  assert.ok(/[:@]/.test(image.split('/').at(-1) ?? '') && !image.endsWith(':latest'), `image ${image} is pinned`);

  const mounts = listAt(container, 'volumeMounts');
  const volumes = listAt(pod, 'volumes');
  const tlsMount = mounts.find((mount) => at(mount, 'mountPath') === '/etc/shortcut-webhook/tls');
  assert.ok(tlsMount, 'TLS mounted at /etc/shortcut-webhook/tls');
  assert.equal(at(tlsMount, 'subPath'), undefined, 'no subPath: Secret updates must reach the pod');
  assert.equal(at(tlsMount, 'readOnly'), true);
  const tlsVolume = volumes.find((volume) => at(volume, 'name') === at(tlsMount, 'name'));
  assert.equal(at(tlsVolume, 'secret.secretName'), options.tlsSecret);
  assert.equal(env.get(envNameOf('tls-cert')), '/etc/shortcut-webhook/tls/tls.crt');
  assert.equal(env.get(envNameOf('tls-key')), '/etc/shortcut-webhook/tls/tls.key');
  const tmpMount = mounts.find((mount) => at(mount, 'mountPath') === '/tmp');
  const tmpVolume = volumes.find((volume) => at(volume, 'name') === at(tmpMount, 'name'));
  assert.ok(isRecord(at(tmpVolume, 'emptyDir')), 'a writable /tmp on the read-only root');

  const podLabels = recordAt(deployment, 'spec.template.metadata.labels');
  const selects = (selector: unknown): boolean => isRecord(selector)
    && Object.entries(recordAt(selector, 'matchLabels')).every(([key, value]) => podLabels[key] === value);
  assert.ok(selects(at(deployment, 'spec.selector')), 'the selector matches the pod labels');
  const spread = listAt(pod, 'topologySpreadConstraints');
  assert.ok(spread.some((item) => at(item, 'topologyKey') === 'kubernetes.io/hostname' && selects(at(item, 'labelSelector'))));
  const antiAffinity = listAt(pod, 'affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution');
  assert.ok(antiAffinity.some((item) => at(item, 'podAffinityTerm.topologyKey') === 'kubernetes.io/hostname'
    && selects(at(item, 'podAffinityTerm.labelSelector'))));
  assert.equal(at(deployment, 'spec.strategy.rollingUpdate.maxUnavailable'), 0, 'rollouts keep every replica serving');
}

/** Least privilege for the leaf: exactly these grants, no wildcard (SPEC §7 and the brief). */
export function expectedLeafGrants(options: { readonly fccInCluster: boolean; readonly shadows?: boolean }): Record<string, string[]> {
  return {
    // FCCs and Connections are only listed and watched; nothing reads one by name.
    ...(options.fccInCluster ? { 'networking.liqo.io/foreignclusterconnections': ['list', 'watch'] } : {}),
    'networking.liqo.io/connections': ['list', 'watch'],
    'networking.liqo.io/configurations': ['list', 'watch'],
    'discovery.k8s.io/endpointslices': ['get', 'list', 'patch', 'watch'],
    // The controller's shadow pass (SPEC §9), unless the shadow repair is switched off.
    ...(options.shadows === false ? {} : { 'offloading.liqo.io/shadowendpointslices': ['get', 'list', 'patch', 'watch'] }),
    // One Event per transition of a peer's path (SPEC §10), on objects in Liqo's tenant namespaces: created, then its
    // series counted by patch.
    'events.k8s.io/events': ['create', 'patch'],
    // Which peers are the leaf's consumers (its hubs), read where hub readers are given (one leaf, several hubs).
    'core.liqo.io/foreignclusters': ['list', 'watch'],
  };
}

export const expectedLeaseGrants = {
  'coordination.k8s.io/leases': ['create'],
  'coordination.k8s.io/leases/shortcut-webhook-controller': ['get', 'update'],
};

export function selectorMatches(selector: unknown, labels: unknown): boolean {
  return isRecord(selector) && isRecord(labels) && Object.entries(selector).every(([key, value]) => labels[key] === value);
}
