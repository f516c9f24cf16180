import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/controller/leader.ts';
import { createLogger } from '../../src/log.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { waitFor } from '../support/wait-for.ts';

async function elector(server: KubeApiServer, identity: string, options: { leaseDurationMs?: number } = {}): Promise<LeaderElector> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return new LeaderElector({ config, namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller', identity,
    logger: createLogger('silent'), leaseDurationMs: options.leaseDurationMs ?? 1000, renewIntervalMs: 50, renewDeadlineMs: 500 });
}

test('one of two replicas leads, and the other takes over when it steps down', async () => {
  const server = await startKubeApiServer();
  // A lease far longer than a cold start's first requests: b must see a's lease as held, never as expired.
  const a = await elector(server, 'pod-a', { leaseDurationMs: 10_000 });
  const b = await elector(server, 'pod-b', { leaseDurationMs: 10_000 });
  try {
    a.start();
    await waitFor(() => a.isLeader());
    b.start();
    await waitFor(() => server.requests.filter((r) => r.path.includes('/leases/') && r.method === 'GET').length >= 6);
    assert.equal(b.isLeader(), false);
    const lease = server.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' });
    assert.equal((lease?.spec as { holderIdentity?: string }).holderIdentity, 'pod-a');
    await a.stop();
    await waitFor(() => b.isLeader(), { description: 'b takes over after a releases' });
    assert.equal(a.isLeader(), false);
  } finally {
    await a.stop();
    await b.stop();
    await server.close();
  }
});

test('a lease left by a crashed leader is taken over once it expires', async () => {
  const server = await startKubeApiServer();
  await server.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'shortcut-webhook-controller', namespace: 'shortcut-webhook' },
    spec: { holderIdentity: 'pod-crashed', leaseDurationSeconds: 1, renewTime: new Date().toISOString(), leaseTransitions: 3 } });
  const b = await elector(server, 'pod-b');
  try {
    b.start();
    await waitFor(() => b.isLeader(), { description: 'b takes over the expired lease' });
    const lease = server.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' });
    assert.deepEqual([(lease?.spec as { holderIdentity?: string }).holderIdentity, (lease?.spec as { leaseTransitions?: number }).leaseTransitions], ['pod-b', 4]);
  } finally {
    await b.stop();
    await server.close();
  }
});

test('a leader that cannot renew stops acting as leader after its renew deadline', async () => {
  const server = await startKubeApiServer();
  const a = await elector(server, 'pod-a', { leaseDurationMs: 300 });
  try {
    a.start();
    await waitFor(() => a.isLeader());
    server.failNext({ pathIncludes: '/leases/', count: 1000 }, 503);
    await waitFor(() => !a.isLeader(), { description: 'a steps down after its renew deadline' });
  } finally {
    await a.stop();
    await server.close();
  }
});

test('without a Lease API every replica acts as leader', async () => {
  const server = await startKubeApiServer();
  server.unregisterResource({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' });
  const a = await elector(server, 'pod-a');
  try {
    a.start();
    await waitFor(() => a.isLeader());
  } finally {
    await a.stop();
    await server.close();
  }
});

test('a Lease that vanishes under a renewal is a passing error, not the end of leader election', async () => {
  const server = await startKubeApiServer();
  const a = await elector(server, 'pod-a');
  const renewals = () => server.requests.filter((r) => r.method === 'PUT' && r.path.includes('/leases/')).length;
  try {
    a.start();
    await waitFor(() => a.isLeader() && renewals() >= 1);
    server.failNext({ method: 'PUT', pathIncludes: '/leases/' }, 404);
    const before = renewals();
    // Election turned off would stop renewing for good; a passing error renews again on the next tick.
    await waitFor(() => renewals() >= before + 3, { description: 'renewals go on after the 404' });
    assert.equal(a.isLeader(), true);
  } finally {
    await a.stop();
    await server.close();
  }
});

const LEASE_REF = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' } as const;
const leaseCalls = (server: KubeApiServer, method: string) => server.requests.filter((r) => r.method === method && r.path.includes('/leases/')).length;

test('a leader renews with one write of the Lease it wrote last (client-go\'s fast path), and reads it again only after a write it did not make', async () => {
  const server = await startKubeApiServer();
  const a = await elector(server, 'pod-a', { leaseDurationMs: 10_000 });
  try {
    a.start();
    await waitFor(() => a.isLeader() && leaseCalls(server, 'PUT') >= 1);
    const [reads, writes] = [leaseCalls(server, 'GET'), leaseCalls(server, 'PUT')];
    await waitFor(() => leaseCalls(server, 'PUT') >= writes + 5, { description: 'five renewals' });
    assert.equal(leaseCalls(server, 'GET'), reads, 'no read between renewals');
    // Another writer (a tool, a label) moves the Lease's resourceVersion: the next renewal is refused (409), read again, made.
    const lease = server.get(LEASE_REF);
    await server.update({ ...lease, metadata: { ...lease?.metadata, labels: { touched: 'yes' } } });
    const after = leaseCalls(server, 'PUT');
    await waitFor(() => leaseCalls(server, 'GET') > reads && leaseCalls(server, 'PUT') >= after + 3, { description: 'a read, then renewals again' });
    assert.equal(a.isLeader(), true);
    assert.equal((server.get(LEASE_REF)?.spec as { holderIdentity?: string }).holderIdentity, 'pod-a');
  } finally {
    await a.stop();
    await server.close();
  }
});

test('a Lease taken over between two renewals fences the leader: its renewal of the Lease it wrote is refused, and the read says another holds it', async () => {
  const server = await startKubeApiServer();
  const a = await elector(server, 'pod-a', { leaseDurationMs: 10_000 });
  try {
    a.start();
    await waitFor(() => a.isLeader() && leaseCalls(server, 'PUT') >= 2);
    const lease = server.get(LEASE_REF);
    await server.update({ ...lease, spec: { ...(lease?.spec as object), holderIdentity: 'pod-b', renewTime: new Date().toISOString(), leaseDurationSeconds: 10 } });
    await waitFor(() => !a.isLeader(), { description: 'a stops leading' });
    assert.equal((server.get(LEASE_REF)?.spec as { holderIdentity?: string }).holderIdentity, 'pod-b', 'the renewal did not overwrite the new holder');
  } finally {
    await a.stop();
    await server.close();
  }
});

async function electorWith(server: KubeApiServer, options: Partial<ConstructorParameters<typeof LeaderElector>[0]>): Promise<LeaderElector> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return new LeaderElector({ config, namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller', identity: 'pod-a',
    logger: createLogger('silent'), leaseDurationMs: 10_000, renewIntervalMs: 50, renewDeadlineMs: 500, ...options });
}

test('a step of the wall clock (NTP, a VM resumed) neither ends nor extends a term: the rule reads a monotonic clock by default', async () => {
  const server = await startKubeApiServer();
  let step = 0;
  // Only the wall clock is given: the Lease's times follow it, the leadership rule must not.
  const a = await electorWith(server, { now: () => Date.now() + step });
  try {
    a.start();
    await waitFor(() => a.isLeader(), { description: 'leading' });
    step = 3_600_000;
    assert.equal(a.isLeader(), true, 'the wall clock an hour ahead: still leading');
  } finally {
    await a.stop();
    await server.close();
  }
});

test('a leader past its renew deadline says it stopped leading before it renews, so the term it then wins is a new one', async () => {
  const server = await startKubeApiServer();
  let clock = 0;
  const changes: boolean[] = [];
  const a = await electorWith(server, { monotonic: () => clock, onChange: (leader) => changes.push(leader) });
  try {
    a.start();
    await waitFor(() => a.isLeader(), { description: 'leading' });
    // Frozen past the deadline, then resumed: the next tick renews the Lease it still holds.
    clock += 5000;
    await waitFor(() => changes.length >= 3, { description: 'three changes' });
    assert.deepEqual(changes.slice(0, 3), [true, false, true]);
  } finally {
    await a.stop();
    await server.close();
  }
});

test('with the shipped RBAC (no list on Leases: each list answers 403), election stays on: one replica creates the Lease and leads, the other waits', async () => {
  const server = await startKubeApiServer();
  // The chart's and manifests' Role: create, and get/update on the controller's Lease by name; a list is refused.
  server.failNext({ method: 'GET', pathEndsWith: '/leases', watch: false, count: Number.MAX_SAFE_INTEGER }, 403);
  const a = await elector(server, 'pod-a', { leaseDurationMs: 10_000 });
  const b = await elector(server, 'pod-b', { leaseDurationMs: 10_000 });
  try {
    a.start();
    await waitFor(() => a.isLeader(), { description: 'a leads' });
    b.start();
    await waitFor(() => server.requests.filter((r) => r.path.endsWith('/leases/shortcut-webhook-controller') && r.method === 'GET').length >= 6,
      { description: 'b has asked for the Lease a few times' });
    assert.equal(b.isLeader(), false, 'b does not lead beside a');
    const lease = server.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' });
    assert.equal((lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity, 'pod-a');
  } finally {
    await a.stop();
    await b.stop();
    await server.close();
  }
});
