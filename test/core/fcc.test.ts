// Decoding Liqo's ForeignClusterConnection from untrusted JSON, and telling when two decode alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFcc, isFccObject, sameFcc } from '../../src/core/fcc.ts';
import { fccObject } from '../support/builders.ts';

test('the worked example decodes to what the rules read', () => {
  assert.deepEqual(decodeFcc(fccObject()), {
    ref: 'liqo/cluster2-cluster3', clusterA: 'cluster2', clusterB: 'cluster3', isConnected: true, phase: 'Connected',
    sideA: { podCIDR: '10.63.0.0/16', remappedPodCIDR: '10.61.0.0/16' },
    sideB: { podCIDR: '10.60.0.0/16', remappedPodCIDR: '10.61.0.0/16' },
  });
});

test('missing parts decode as absent, never as an error', () => {
  assert.deepEqual(decodeFcc({ kind: 'ForeignClusterConnection' }, 'from-file'), {
    ref: 'from-file', clusterA: undefined, clusterB: undefined, isConnected: false, phase: undefined, sideA: undefined, sideB: undefined,
  });
  const empty = decodeFcc({ metadata: { name: '', namespace: '' }, spec: { foreignClusterA: '', foreignClusterB: 7 }, status: { isConnected: 'true' } }, 'fallback');
  assert.deepEqual([empty.ref, empty.clusterA, empty.clusterB, empty.isConnected], ['fallback', undefined, undefined, false]);
});

test('an FCC object is recognised by kind and the networking.liqo.io group, any version', () => {
  assert.equal(isFccObject(fccObject()), true);
  assert.equal(isFccObject({ ...fccObject(), apiVersion: 'networking.liqo.io/v1' }), true);
  assert.equal(isFccObject({ ...fccObject(), apiVersion: 'networking.liqo.iox/v1beta1' }), false);
  assert.equal(isFccObject({ ...fccObject(), apiVersion: 'v1' }), false);
  assert.equal(isFccObject({ ...fccObject(), kind: 'Connection' }), false);
  assert.equal(isFccObject({ kind: 'ForeignClusterConnection' }), false);
  assert.equal(isFccObject([fccObject()]), false);
});

test('sameFcc compares every decoded field and nothing else', () => {
  const base = decodeFcc(fccObject());
  assert.equal(sameFcc(base, decodeFcc({ ...fccObject(), metadata: { name: 'cluster2-cluster3', namespace: 'liqo', resourceVersion: '9' } })), true);
  const changed = [
    { ...base, ref: 'liqo/other' }, { ...base, clusterA: 'x' }, { ...base, clusterB: 'x' }, { ...base, isConnected: false },
    { ...base, phase: 'Failed' }, { ...base, sideA: undefined }, { ...base, sideB: undefined },
    { ...base, sideA: { podCIDR: '10.64.0.0/16', remappedPodCIDR: '10.61.0.0/16' } },
    { ...base, sideB: { podCIDR: '10.60.0.0/16', remappedPodCIDR: '10.62.0.0/16' } },
  ];
  for (const other of changed) assert.equal(sameFcc(base, other), false, JSON.stringify(other));
  assert.equal(sameFcc({ ...base, sideA: undefined }, { ...base, sideA: undefined }), true);
});
