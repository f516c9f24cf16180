// Offline checks of Kubernetes objects: YAML read as kubectl reads it, the OpenAPI schema (kubernetes-models) and
// unknown fields (the client-node models' attribute maps, like `kubectl apply --validate=strict`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as clientNode from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Certificate, Issuer } from '@kubernetes-models/cert-manager/cert-manager.io/v1';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
  readonly [field: string]: unknown;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringMap(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((item) => typeof item === 'string');
}

export function asKubeObject(value: unknown, where: string): KubeObject {
  assert.ok(isRecord(value), `${where}: not an object`);
  const { apiVersion, kind, metadata } = value;
  assert.equal(typeof apiVersion, 'string', `${where}: apiVersion`);
  assert.equal(typeof kind, 'string', `${where}: kind`);
  assert.ok(isRecord(metadata) && typeof metadata['name'] === 'string', `${where}: metadata.name`);
  for (const map of ['labels', 'annotations']) {
    assert.ok(metadata[map] === undefined || isStringMap(metadata[map]), `${where}: metadata.${map} must map strings to strings`);
  }
  return value as unknown as KubeObject; // every field checked above
}

// kubectl reads manifests as YAML 1.1 (sigs.k8s.io/yaml): `0440` is octal there, `on` a boolean.
export function parseManifests(text: string, where: string): KubeObject[] {
  const objects: KubeObject[] = [];
  parseAllDocuments(text, { version: '1.1', prettyErrors: true }).forEach((document, index) => {
    assert.deepEqual(document.errors.map(String), [], `${where}: YAML errors in document ${index + 1}`);
    assert.deepEqual(document.warnings.map(String), [], `${where}: YAML warnings in document ${index + 1}`);
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) objects.push(asKubeObject(value, `${where} document ${index + 1}`));
  });
  return objects;
}

export function readManifests(path: string): KubeObject[] {
  return parseManifests(readFileSync(path, 'utf8'), path);
}

interface Validatable { validate(): void }
interface ModelClass<T> {
  is(value: unknown): value is T;
  new (data: T): Validatable;
}

function model<T>(cls: ModelClass<T>): (value: unknown) => Validatable {
  return (value) => {
    assert.ok(cls.is(value), 'apiVersion/kind mismatch');
    return new cls(value);
  };
}

const models: ReadonlyMap<string, (value: unknown) => Validatable> = new Map([
  ['v1/Namespace', model(Namespace)],
  ['v1/ServiceAccount', model(ServiceAccount)],
  ['v1/Secret', model(Secret)],
  ['v1/Service', model(Service)],
  ['apps/v1/Deployment', model(Deployment)],
  ['policy/v1/PodDisruptionBudget', model(PodDisruptionBudget)],
  ['rbac.authorization.k8s.io/v1/ClusterRole', model(ClusterRole)],
  ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', model(ClusterRoleBinding)],
  ['rbac.authorization.k8s.io/v1/Role', model(Role)],
  ['rbac.authorization.k8s.io/v1/RoleBinding', model(RoleBinding)],
  ['admissionregistration.k8s.io/v1/MutatingWebhookConfiguration', model(MutatingWebhookConfiguration)],
  ['admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy', model(ValidatingAdmissionPolicy)],
  ['admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding', model(ValidatingAdmissionPolicyBinding)],
  ['networking.k8s.io/v1/NetworkPolicy', model(NetworkPolicy)],
  ['apiextensions.k8s.io/v1/CustomResourceDefinition', model(CustomResourceDefinition)],
  // The kinds of cert-manager and the Prometheus Operator that the chart can make, from their CRDs' schemas.
  ['cert-manager.io/v1/Certificate', model(Certificate)],
  ['cert-manager.io/v1/Issuer', model(Issuer)],
  ['monitoring.coreos.com/v1/ServiceMonitor', model(ServiceMonitor)],
  ['monitoring.coreos.com/v1/PrometheusRule', model(PrometheusRule)],
]);

export function hasSchema(object: KubeObject): boolean {
  return models.has(`${object.apiVersion}/${object.kind}`);
}

/** Kinds served from a CRD (cert-manager, Prometheus Operator): no client-node model lists their fields. */
export function isCustomResource(object: KubeObject): boolean {
  return ['cert-manager.io/v1', 'monitoring.coreos.com/v1'].includes(object.apiVersion);
}

/** Throws with the schema's messages when the object is not valid against the Kubernetes OpenAPI schema. */
export function validateAgainstSchema(object: KubeObject): void {
  const make = models.get(`${object.apiVersion}/${object.kind}`);
  assert.ok(make, `no schema known for ${object.apiVersion} ${object.kind}`);
  make(object).validate();
}

// ---------------------------------------------------------------------------------------------------------------
// Unknown fields. The OpenAPI validation above ignores keys it does not know, so a typo (`readOnlyRootFileSystem`)
// would pass it and be dropped by the API server; the client-node models list every known field.
interface Attribute { readonly baseName: string; readonly type: string }

function attributesOf(typeName: string): readonly Attribute[] | undefined {
  const model: unknown = Reflect.get(clientNode, typeName);
  if (typeof model !== 'function') return undefined;
  const getMap: unknown = Reflect.get(model, 'getAttributeTypeMap');
  if (typeof getMap !== 'function') return undefined;
  const map: unknown = Reflect.apply(getMap, model, []);
  assert.ok(Array.isArray(map));
  return map.map((entry: unknown) => {
    assert.ok(isRecord(entry) && typeof entry['baseName'] === 'string' && typeof entry['type'] === 'string');
    return { baseName: entry['baseName'], type: entry['type'] };
  });
}

function walk(value: unknown, type: string, path: string, found: string[]): void {
  const array = /^Array<(.+)>$/.exec(type);
  if (array?.[1] !== undefined) {
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, array[1] ?? 'any', `${path}[${index}]`, found));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map?.[1] !== undefined) {
    if (isRecord(value)) for (const [key, item] of Object.entries(value)) walk(item, map[1], `${path}.${key}`, found);
    return;
  }
  const attributes = attributesOf(type);
  if (attributes === undefined || !isRecord(value)) return;
  const known = new Map(attributes.map((attribute) => [attribute.baseName, attribute.type]));
  for (const [key, item] of Object.entries(value)) {
    let itemType = known.get(key);
    if (itemType === undefined) {
      found.push(`${path}.${key}`);
      continue;
    }
    // JSON schema nodes are typed `any` in the models where they may also be a boolean or a list.
    if (type === 'V1JSONSchemaProps' && (key === 'items' || key === 'additionalProperties') && isRecord(item)) {
      itemType = 'V1JSONSchemaProps';
    }
    walk(item, itemType, `${path}.${key}`, found);
  }
}

/** Paths of the fields Kubernetes does not know, e.g. `.spec.template.spec.containers[0].securityContxt`. */
export function unknownFields(object: KubeObject): string[] {
  const [group = '', version = group] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  void group;
  const typeName = `${version.charAt(0).toUpperCase()}${version.slice(1)}${object.kind}`;
  assert.ok(attributesOf(typeName), `no client-node model ${typeName}`);
  const found: string[] = [];
  walk(object, typeName, '', found);
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// Navigation without casts: each step narrows or fails the test with the path it was looking for.
export function at(value: unknown, path: string): unknown {
  let current = value;
  for (const step of path.split('.').filter((part) => part !== '')) {
    const index = /^\[(\d+)\]$/.exec(step);
    if (index?.[1] !== undefined) {
      assert.ok(Array.isArray(current), `${path}: ${step} of a non-list`);
      current = current[Number(index[1])];
    } else {
      assert.ok(isRecord(current), `${path}: .${step} of a non-object`);
      current = current[step];
    }
  }
  return current;
}

export function recordAt(value: unknown, path: string): Record<string, unknown> {
  const found = at(value, path);
  assert.ok(isRecord(found), `${path} is not an object`);
  return found;
}

export function listAt(value: unknown, path: string): unknown[] {
  const found = at(value, path);
  assert.ok(Array.isArray(found), `${path} is not a list`);
  return found;
}

export function stringAt(value: unknown, path: string): string {
  const found = at(value, path);
  assert.equal(typeof found, 'string', `${path} is not a string`);
  return String(found);
}

export function only(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const matches = objects.filter((object) => object.kind === kind && (name === undefined || object.metadata.name === name));
  assert.equal(matches.length, 1, `expected exactly one ${kind}${name ? ` ${name}` : ''}, found ${matches.length}`);
  const [match] = matches;
  assert.ok(match);
  return match;
}

/** Every label key on the object and, for workloads, on its pod template. */
export function labelKeys(object: KubeObject): string[] {
  const keys = Object.keys(object.metadata.labels ?? {});
  const template = at(object, 'spec');
  if (isRecord(template) && isRecord(template['template'])) {
    const labels = at(template, 'template.metadata.labels');
    if (isRecord(labels)) keys.push(...Object.keys(labels));
  }
  return keys;
}
