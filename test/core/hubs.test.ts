// One leaf, several hubs: which reader stands for which hub, and every decision made with the slice's own hub's view.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { repairShadowEndpointSlice } from '../../src/core/direct-connections.ts';
import type { HubIpam } from '../../src/core/hub-resolution.ts';
import { attributeHub, consumersOf, readerBinding, unreadHubs, type HubPart } from '../../src/core/hubs.ts';
import { viewNotes } from '../../src/core/local-clusters.ts';
import { applyRewrite, rewriteEndpointSlice } from '../../src/core/rewrite.ts';
import { buildSnapshot } from '../../src/core/snapshot.ts';
import { loadShortcutFiles } from '../../src/view/shortcut-files.ts';
import { fcc, shadowObject, sliceObject } from '../support/builders.ts';

const CASE = new URL('../fixtures/two-hubs-each-slice-through-its-own-hubs-ipam/', import.meta.url).pathname;
const NOT_KNOWN: HubIpam = { known: false, why: 'not given' };
const part = (id: string | undefined, extra: Partial<HubPart> = {}): HubPart => ({ id, ipam: NOT_KNOWN, fccs: [], ...extra });

test('a bound reader reads its hub alone; a hub no reader is bound to is not read, with the readers named', () => {
  const readers = { parts: [part('cluster1'), part('cluster9')], consumers: undefined };
  assert.deepEqual(attributeHub('cluster9', readers), { read: true, part: 1 });
  const unread = attributeHub('cluster7', readers);
  assert.equal(unread.read, false);
  assert.match(unread.read ? '' : unread.detail, /no hub reader is bound to cluster7 \(hub readers are bound to cluster1, cluster9\)/);
});

test('an unbound reader stands for any hub where the consumers are not known, as with one hub before', () => {
  const readers = { parts: [part(undefined)], consumers: undefined };
  assert.deepEqual(attributeHub('cluster1', readers), { read: true, part: 0 });
  assert.deepEqual(attributeHub('cluster9', readers), { read: true, part: 0 });
  assert.deepEqual(attributeHub(undefined, readers), { read: true, part: 0 });
  assert.deepEqual(unreadHubs(readers), []);
});

test('an unbound reader stands for the leaf\'s only consumer, and for no other hub', () => {
  const readers = { parts: [part(undefined)], consumers: ['cluster1'] };
  assert.deepEqual(attributeHub('cluster1', readers), { read: true, part: 0 });
  assert.equal(attributeHub('cluster9', readers).read, false);
});

test('several consumers and an unbound reader: the product says which hubs it cannot read instead of guessing', () => {
  const readers = { parts: [part(undefined)], consumers: ['cluster1', 'cluster9'] };
  for (const hub of ['cluster1', 'cluster9']) {
    const attribution = attributeHub(hub, readers);
    assert.equal(attribution.read, false);
    assert.match(attribution.read ? '' : attribution.detail, /could be any of this leaf's consumers cluster1, cluster9: bind it with ID=FILE/);
  }
  assert.deepEqual(unreadHubs(readers), ['cluster1', 'cluster9']);
  // A bound reader for one of them leaves the unbound one the other.
  const mixed = { parts: [part(undefined), part('cluster9')], consumers: ['cluster1', 'cluster9'] };
  assert.deepEqual(attributeHub('cluster1', mixed), { read: true, part: 0 });
  assert.deepEqual(attributeHub('cluster9', mixed), { read: true, part: 1 });
  assert.deepEqual(unreadHubs(mixed), []);
});

test('a reader away leaves its hub unread and never hands its objects to the unbound reader', () => {
  const readers = { parts: [part(undefined), part('cluster9', { away: 'every read has failed since then' })], consumers: undefined };
  const attribution = attributeHub('cluster9', readers);
  assert.equal(attribution.read, false);
  assert.match(attribution.read ? '' : attribution.detail, /away: every read has failed/);
  assert.deepEqual(attributeHub('cluster1', readers), { read: true, part: 0 });
});

test('ForeignClusters name the leaf\'s consumers by role; providers and unknown roles are not hubs of it', () => {
  const fc = (id: string, role: string) => ({ apiVersion: 'core.liqo.io/v1beta1', kind: 'ForeignCluster', metadata: { name: id }, spec: { clusterID: id }, status: { role } });
  assert.deepEqual(consumersOf([fc('cluster9', 'ConsumerAndProvider'), fc('cluster1', 'Consumer'), fc('cluster3', 'Provider'), fc('cluster4', 'Unknown'), 'x']),
    ['cluster1', 'cluster9']);
});

test('a reader is bound by ID=VALUE; a leading = or a path before = keeps a path with = expressible', () => {
  assert.deepEqual(readerBinding('cluster1=/etc/hub/kubeconfig'), { hub: 'cluster1', value: '/etc/hub/kubeconfig' });
  assert.deepEqual(readerBinding('/etc/hub/kubeconfig'), { hub: undefined, value: '/etc/hub/kubeconfig' });
  assert.deepEqual(readerBinding('=a=b.yaml'), { hub: undefined, value: 'a=b.yaml' });
  assert.deepEqual(readerBinding('./a=b.yaml'), { hub: undefined, value: './a=b.yaml' });
  assert.deepEqual(readerBinding('dir/x=y'), { hub: undefined, value: 'dir/x=y' });
});

/** The offline case of the issue: leaf cluster2 with hubs cluster1 and cluster9, both allocating 10.70.0.12. */
async function twoHubs(hub: readonly string[]) {
  const loaded = await loadShortcutFiles({ shortcuts: [`${CASE}shortcuts.yaml`], hub });
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.message);
  const slices = parseAllDocuments(readFileSync(`${CASE}input.yaml`, 'utf8')).map((document) => document.toJS() as unknown);
  return { snapshot: buildSnapshot({ version: 1, ...loaded.value }), slices };
}

const addresses = (object: unknown): string[] => ((object as { endpoints: { addresses: string[] }[] }).endpoints).flatMap((e) => e.addresses);

test('each hub\'s slice is resolved through its own hub\'s IPAM: the same allocated address names another pod', async () => {
  const { snapshot, slices } = await twoHubs([`cluster1=${CASE}hubs/cluster1.yaml`, `cluster9=${CASE}hubs/cluster9.yaml`]);
  const [ofCluster1, ofCluster9, ofCluster7] = slices.map((slice) => rewriteEndpointSlice(slice, snapshot));
  assert.ok(ofCluster1 !== undefined && 'edits' in ofCluster1 && ofCluster9 !== undefined && 'edits' in ofCluster9);
  assert.deepEqual(addresses(applyRewrite(ofCluster1)), ['10.61.0.151', '10.71.0.13', '10.71.0.14', '10.200.0.196']);
  // cluster9's web-0 is 10.64.0.20 on cluster9, 10.60.0.20 on cluster3: never cluster1's web-0 (10.61.0.151).
  assert.deepEqual(addresses(applyRewrite(ofCluster9)), ['10.61.0.20', '10.61.0.22']);
  assert.deepEqual(ofCluster7 !== undefined && 'skip' in ofCluster7 ? ofCluster7.skip : ofCluster7, 'hub-not-read');
});

test('several consumers given, one unbound reader: no slice is resolved through a hub it may not be', async () => {
  const { snapshot, slices } = await twoHubs([`${CASE}hubs/cluster1.yaml`]);
  assert.deepEqual(snapshot.unreadHubs, ['cluster1', 'cluster7', 'cluster9']);
  for (const slice of slices) {
    const result = rewriteEndpointSlice(slice, snapshot);
    assert.equal('skip' in result ? result.skip : 'rewritten', 'hub-not-read');
  }
});

test('an FCC read on one hub gives pairs to that hub\'s slices alone', () => {
  const snapshot = buildSnapshot({
    version: 1, fccs: [],
    hubs: [part('cluster1', { fccs: [fcc()] }), part('cluster9')],
  });
  const of = (origin: string) => {
    const slice = sliceObject({ addresses: [['10.63.0.151']] });
    const labels = (slice.metadata as { labels: Record<string, string> }).labels;
    labels['offloading.liqo.io/origin'] = origin;
    const result = rewriteEndpointSlice(slice, snapshot);
    return 'edits' in result ? addresses(applyRewrite(result)) : result.skip;
  };
  assert.deepEqual(of('cluster1'), ['10.61.0.151']);
  assert.deepEqual(of('cluster9'), ['10.63.0.151']);
  // The FCC's state is shown once, as cluster1's.
  assert.deepEqual(snapshot.statesFor('cluster2').map((state) => state.usable), [true]);
});

test('a ShadowEndpointSlice of a hub no reader stands for is left alone with the same reason', () => {
  const snapshot = buildSnapshot({ version: 1, fccs: [], hubs: [part('cluster1')] });
  const repair = repairShadowEndpointSlice(shadowObject({ origin: 'cluster9', endpoints: [{ addresses: ['10.203.0.5'] }], data: '{}' }), snapshot, {});
  assert.deepEqual(repair.kind === 'skip' ? repair.reason : repair.kind, 'hub-not-read');
});

test('a hub reader away is a note (the /readyz and /debug/pairs note), naming the hub and hub-not-read', () => {
  const snapshot = buildSnapshot({ version: 1, fccs: [], hubs: [part('cluster1'), part('cluster9', { away: 'every read has failed since then' })] });
  assert.ok(viewNotes(snapshot, 'cluster2', true).some((note) => /reader of hub cluster9 is away \(every read has failed since then\): its objects are left alone \(hub-not-read\)/.test(note)));
  assert.ok(!viewNotes(snapshot, 'cluster2', true).some((note) => note.includes('cluster1')));
});
