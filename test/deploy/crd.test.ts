// The ForeignClusterConnection CRD (manifests/ and the chart's crds/) serves the shortcut operator's API: the table
// below is the operator's CRD (Gabbe64/foreign_cluster_connector, config/crd/bases/
// networking.liqo.io_foreignclusterconnections.yaml at 5fa34ef, last changed in dbf5565), field by field, written by
// us. A field going missing, changing type or gaining a validation the operator's lacks fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { chartDir } from './support/chart.ts';
import { at, isRecord, listAt, only, readManifests, recordAt, stringAt, type KubeObject } from './support/kube.ts';
import { repoPath } from './support/paths.ts';

const manifestFile = repoPath('manifests/00-crd-foreignclusterconnections.yaml');
const chartFile = join(chartDir, 'crds/foreignclusterconnections.yaml');

/** Every schema node of the operator's v1beta1: path → type (and format). Objects list their own node too. */
const operatorFields: Readonly<Record<string, string>> = {
  '': 'object',
  apiVersion: 'string',
  kind: 'string',
  metadata: 'object',
  spec: 'object',
  'spec.foreignClusterA': 'string',
  'spec.foreignClusterB': 'string',
  'spec.networking': 'object',
  'spec.networking.mtu': 'integer/int32',
  'spec.networking.serverGatewayType': 'string',
  'spec.networking.serverTemplateName': 'string',
  'spec.networking.serverTemplateNamespace': 'string',
  'spec.networking.serverServiceType': 'string',
  'spec.networking.serverServicePort': 'integer/int32',
  'spec.networking.clientGatewayType': 'string',
  'spec.networking.clientTemplateName': 'string',
  'spec.networking.clientTemplateNamespace': 'string',
  'spec.networking.timeoutSeconds': 'integer/int32',
  'spec.networking.wait': 'boolean',
  status: 'object',
  'status.isConnected': 'boolean',
  'status.phase': 'string',
  'status.errorMessage': 'string',
  'status.lastUpdated': 'string',
  'status.foreignClusterANetworking': 'object',
  'status.foreignClusterANetworking.podCIDR': 'string',
  'status.foreignClusterANetworking.remappedPodCIDR': 'string',
  'status.foreignClusterBNetworking': 'object',
  'status.foreignClusterBNetworking.podCIDR': 'string',
  'status.foreignClusterBNetworking.remappedPodCIDR': 'string',
};

/** The operator's `required` lists, by the path of the object that has them. */
const operatorRequired: Readonly<Record<string, readonly string[]>> = {
  spec: ['foreignClusterA', 'foreignClusterB'],
  status: ['isConnected'],
};

/** The operator's printer columns, in order: name, type, jsonPath. We add Age (last). */
const operatorColumns: readonly (readonly [string, string, string])[] = [
  ['ClusterA', 'string', '.spec.foreignClusterA'],
  ['ClusterB', 'string', '.spec.foreignClusterB'],
  ['Connected', 'boolean', '.status.isConnected'],
  ['Phase', 'string', '.status.phase'],
  ['A-CIDR', 'string', '.status.foreignClusterANetworking.remappedPodCIDR'],
  ['B-CIDR', 'string', '.status.foreignClusterBNetworking.remappedPodCIDR'],
];

/** Keywords that only describe or type a node; any other (enum, pattern, minLength, ...) would validate more. */
const describingKeywords = new Set(['type', 'format', 'description', 'properties', 'required']);

interface SchemaShape {
  readonly fields: Record<string, string>;
  readonly required: Record<string, string[]>;
  readonly stricter: string[];
}

function shapeOf(schema: unknown): SchemaShape {
  const shape: SchemaShape = { fields: {}, required: {}, stricter: [] };
  const visit = (node: unknown, path: string): void => {
    assert.ok(isRecord(node), `${path || '(root)'} is a schema node`);
    const type = String(node['type']);
    shape.fields[path] = typeof node['format'] === 'string' ? `${type}/${node['format']}` : type;
    if (Array.isArray(node['required'])) shape.required[path] = node['required'].map(String);
    for (const key of Object.keys(node)) if (!describingKeywords.has(key)) shape.stricter.push(`${path || '(root)'}: ${key}`);
    const properties = node['properties'];
    if (isRecord(properties)) for (const [name, child] of Object.entries(properties)) visit(child, path === '' ? name : `${path}.${name}`);
  };
  visit(schema, '');
  return shape;
}

function versionOf(crd: KubeObject): Record<string, unknown> {
  assert.equal(listAt(crd, 'spec.versions').length, 1, 'one version, as the operator serves');
  return recordAt(listAt(crd, 'spec.versions'), '[0]');
}

function assertOperatorApi(crd: KubeObject): void {
  const version = versionOf(crd);
  const shape = shapeOf(at(version, 'schema.openAPIV3Schema'));
  assert.deepEqual(shape.fields, operatorFields);
  assert.deepEqual(shape.required, operatorRequired);
  assert.deepEqual(shape.stricter, []);
}

for (const [where, file] of [['manifests/', manifestFile], ['the chart\'s crds/', chartFile]] as const) {
  describe(`the ForeignClusterConnection CRD in ${where}`, () => {
    const crd = only(readManifests(file), 'CustomResourceDefinition');
    const version = versionOf(crd);

    test('names the resource as the operator does (SPEC §1)', () => {
      assert.equal(crd.metadata.name, 'foreignclusterconnections.networking.liqo.io');
      assert.deepEqual(at(crd, 'spec.names'), {
        kind: 'ForeignClusterConnection',
        listKind: 'ForeignClusterConnectionList',
        plural: 'foreignclusterconnections',
        singular: 'foreignclusterconnection',
        shortNames: ['fcc', 'fcconnection'],
        categories: ['liqo'],
      });
      assert.equal(at(crd, 'spec.group'), 'networking.liqo.io');
      assert.equal(at(crd, 'spec.scope'), 'Namespaced');
      assert.equal(version['name'], 'v1beta1');
      assert.equal(version['served'], true);
      assert.equal(version['storage'], true);
      assert.deepEqual(version['subresources'], { status: {} });
    });

    test('has every field of the operator\'s schema with its type, the same required fields, and no stricter rule', () => {
      assertOperatorApi(crd);
    });

    test('prints the operator\'s columns, then Age', () => {
      const columns = listAt(version, 'additionalPrinterColumns').map((column) => {
        assert.equal(at(column, 'priority'), undefined, `${stringAt(column, 'name')} shows in the default view`);
        return [stringAt(column, 'name'), stringAt(column, 'type'), stringAt(column, 'jsonPath')];
      });
      assert.deepEqual(columns, [...operatorColumns, ['Age', 'date', '.metadata.creationTimestamp']]);
    });
  });
}

describe('the CRD check', () => {
  const crd = only(readManifests(manifestFile), 'CustomResourceDefinition');

  const breakings: [string, (schema: Record<string, unknown>) => void][] = [
    ['status.errorMessage missing', (schema) => { delete recordAt(schema, 'properties.status.properties')['errorMessage']; }],
    ['spec.networking untyped', (schema) => {
      recordAt(schema, 'properties.spec.properties')['networking'] = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    }],
    ['timeoutSeconds a string', (schema) => { recordAt(schema, 'properties.spec.properties.networking.properties')['timeoutSeconds'] = { type: 'string' }; }],
    ['status.required dropped', (schema) => { delete recordAt(schema, 'properties.status')['required']; }],
    ['a phase enum', (schema) => { recordAt(schema, 'properties.status.properties.phase')['enum'] = ['Connected']; }],
  ];
  for (const [name, breakIt] of breakings) {
    test(`fails on ${name}`, () => {
      const broken = structuredClone(crd) as KubeObject & Record<string, unknown>;
      breakIt(recordAt(versionOf(broken), 'schema.openAPIV3Schema'));
      assert.throws(() => assertOperatorApi(broken));
    });
  }
});

describe('the CRD and what the operator writes', () => {
  const schema = recordAt(versionOf(only(readManifests(manifestFile), 'CustomResourceDefinition')), 'schema.openAPIV3Schema');

  // Kubernetes prunes unknown fields instead of rejecting them; closing every object with properties (metadata has
  // none) turns "would be pruned" into an error the test can see.
  function closed(node: unknown): unknown {
    if (!isRecord(node)) return node;
    const copy: Record<string, unknown> = { ...node };
    if (isRecord(node['properties'])) {
      copy['properties'] = Object.fromEntries(Object.entries(node['properties']).map(([name, child]) => [name, closed(child)]));
      copy['additionalProperties'] = false;
    }
    return copy;
  }
  const ajv = new Ajv({ allErrors: true, strict: false, formats: { int32: { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 } } });
  const validate = ajv.compile(closed(schema) as object);

  // The status the operator's controller writes, with every networking field its CLI sets.
  const written = parse(`
apiVersion: networking.liqo.io/v1beta1
kind: ForeignClusterConnection
metadata: {name: cluster2-cluster3, namespace: default}
spec:
  foreignClusterA: cluster2
  foreignClusterB: cluster3
  networking:
    mtu: 1340
    serverGatewayType: networking.liqo.io/v1beta1/wggatewayservertemplates
    serverTemplateName: wireguard-server
    serverTemplateNamespace: liqo
    serverServiceType: NodePort
    serverServicePort: 51840
    clientGatewayType: networking.liqo.io/v1beta1/wggatewayclienttemplates
    clientTemplateName: wireguard-client
    clientTemplateNamespace: liqo
    timeoutSeconds: 120
    wait: true
status:
  isConnected: false
  phase: Failed
  errorMessage: "failed to create the gateway server: timeout"
  lastUpdated: "2025-07-06T20:16:16Z"
  foreignClusterANetworking: {podCIDR: 10.63.0.0/16, remappedPodCIDR: 10.61.0.0/16}
  foreignClusterBNetworking: {podCIDR: 10.60.0.0/16, remappedPodCIDR: 10.61.0.0/16}
`) as unknown;

  test('keeps every field the operator writes, errorMessage included (nothing pruned)', () => {
    assert.ok(validate(written), JSON.stringify(validate.errors));
  });

  test('refuses what the operator\'s CRD refuses: no leaf B, a status without isConnected, an mtu in quotes', () => {
    const cases: [string, (fcc: Record<string, unknown>) => void][] = [
      ['no foreignClusterB', (fcc) => { delete recordAt(fcc, 'spec')['foreignClusterB']; }],
      ['no isConnected', (fcc) => { delete recordAt(fcc, 'status')['isConnected']; }],
      ['mtu "1340"', (fcc) => { recordAt(fcc, 'spec.networking')['mtu'] = '1340'; }],
      ['a status field the operator does not have', (fcc) => { recordAt(fcc, 'status')['remoteClusterA'] = {}; }],
    ];
    for (const [label, breakIt] of cases) {
      const fcc = structuredClone(written);
      assert.ok(isRecord(fcc));
      breakIt(fcc);
      assert.equal(validate(fcc), false, label);
    }
  });

  test('the chart ships the same file as manifests/', () => {
    assert.equal(readFileSync(chartFile, 'utf8'), readFileSync(manifestFile, 'utf8'));
  });
});
