// What the --shortcuts and --hub files are read as: objects alone, kubectl's List, and the typed lists the API itself
// answers (`IPList`), whose items name neither apiVersion nor kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.ts';
import { fccsFromDocuments, hubFromDocuments } from '../../src/view/fcc-documents.ts';
import { configurationObject, fccObject, hubIpObject } from '../support/builders.ts';

/** The list as the API answers it: the list names the type, its items do not. */
function typedList(kind: string, objects: readonly JsonObject[]): JsonObject {
  const apiVersion = objects[0]?.apiVersion ?? 'v1';
  return { apiVersion, kind, metadata: { resourceVersion: '7' }, items: objects.map(({ apiVersion: _, kind: __, ...rest }) => rest) };
}

test('a typed list\'s items are read as the list names them, in the --shortcuts files', () => {
  const read = fccsFromDocuments([
    { name: 'fccs.yaml#1', value: typedList('ForeignClusterConnectionList', [fccObject({ name: 'one' }), fccObject({ name: 'two', b: 'cluster4' })]) },
    { name: 'configs.yaml#1', value: typedList('ConfigurationList', [configurationObject({ peer: 'cluster3' })]) },
  ]);
  assert.deepEqual(read.ignored, []);
  assert.deepEqual(read.fccs.map((f) => f.ref), ['liqo/one', 'liqo/two']);
  assert.equal(read.configurations.length, 1);
});

test('a typed list\'s items are read as the list names them, in the --hub files', () => {
  const read = hubFromDocuments([{ name: 'hub.yaml#1', value: typedList('IPList', [hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' })]) }]);
  assert.deepEqual(read.ignored, []);
  assert.deepEqual(read.ips.map((ip) => ip.ref), ['demo/web-0']);
});

test('what an item names itself is kept: kubectl\'s List, and an item of another kind in a typed list', () => {
  const list = { apiVersion: 'v1', kind: 'List', items: [hubIpObject({ pod: 'web-0', ip: '10.63.0.151' }), { metadata: { name: 'bare' } }] };
  const read = hubFromDocuments([{ name: 'hub.yaml#1', value: list }]);
  assert.deepEqual(read.ips.map((ip) => ip.ref), ['demo/web-0']);
  assert.deepEqual(read.ignored, ['hub.yaml#1/items/1: not a Kubernetes object, not an IP, Configuration or ForeignClusterConnection']);
  const mixed = typedList('IPList', [hubIpObject({ pod: 'web-0', ip: '10.63.0.151' })]);
  const stray = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
  const withStray = hubFromDocuments([{ name: 'hub.yaml#1', value: { ...mixed, items: [...(mixed.items as JsonObject[]), stray] } }]);
  assert.deepEqual(withStray.ignored, ['hub.yaml#1/items/1: kind ConfigMap, not an IP, Configuration or ForeignClusterConnection']);
});
