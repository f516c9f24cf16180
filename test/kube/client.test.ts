import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { describeError, httpStatus, loadKubeAccess, readListPage } from '../../src/kube/client.ts';
import { ApiException } from '@kubernetes/client-node';
import { scratchDir } from '../support/scratch.ts';

const dir = scratchDir('shortcut-kube-');
function kubeconfig(name: string, server: string): string {
  const path = join(dir, name);
  writeFileSync(path, `apiVersion: v1
kind: Config
clusters: [{name: ${name}, cluster: {server: '${server}'}}]
users: [{name: ${name}, user: {token: t}}]
contexts: [{name: ${name}, context: {cluster: ${name}, user: ${name}}}]
current-context: ${name}
`);
  return path;
}

test('a KUBECONFIG list is merged as kubectl does: missing files skipped, the first file\'s context wins', () => {
  const first = kubeconfig('one', 'https://one.example:6443');
  const second = kubeconfig('two', 'https://two.example:6443');
  const access = loadKubeAccess([join(dir, 'missing'), first, second].join(delimiter), {});
  assert.equal(access?.config.getCurrentCluster()?.server, 'https://one.example:6443');
  assert.deepEqual(access?.config.getContexts().map((c) => c.name), ['one', 'two']);
});

test('no kubeconfig and no pod means no cluster, not an error', () => {
  assert.equal(loadKubeAccess(undefined, {}), undefined);
});

test('a list of only missing files is an error naming them', () => {
  assert.throws(() => loadKubeAccess([join(dir, 'a'), join(dir, 'b')].join(delimiter), {}), /none of the kubeconfig files exists/);
});

test('API errors are described by status and the Status message', () => {
  const error = new ApiException(409, 'Conflict', JSON.stringify({ kind: 'Status', message: 'the object has been modified' }), {});
  assert.equal(httpStatus(error), 409);
  assert.equal(describeError(error), 'HTTP 409: the object has been modified');
  assert.equal(httpStatus(Object.assign(new Error('Gone'), { statusCode: 410 })), 410);
  assert.equal(describeError(new Error('socket hang up')), 'socket hang up');
});

test('a list page gives its items, its resourceVersion and the next page token, and tolerates junk', () => {
  assert.deepEqual(readListPage({ items: [{ a: 1 }], metadata: { resourceVersion: '7', continue: 'next' } }),
    { items: [{ a: 1 }], resourceVersion: '7', continueToken: 'next' });
  assert.deepEqual(readListPage({ items: [], metadata: { resourceVersion: '8', continue: '' } }),
    { items: [], resourceVersion: '8', continueToken: undefined });
  assert.deepEqual(readListPage('garbage'), { items: [], resourceVersion: '', continueToken: undefined });
});
