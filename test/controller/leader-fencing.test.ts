// The fence of leader election (SPEC §5): a replica leads only while its last renewal is younger than the renew
// deadline on its monotonic clock, and a 403 on the Lease is a failure to retry, not the end of election.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/controller/leader.ts';
import { createLogger } from '../../src/log.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-api-server.ts';
import { waitFor } from '../support/wait-for.ts';

const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' } as const;

async function elector(server: KubeApiServer, identity: string, options: { monotonic?: () => number; renewIntervalMs?: number; onChange?: (leader: boolean) => void } = {}): Promise<LeaderElector> {
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  return new LeaderElector({ config, namespace: LEASE.namespace, name: LEASE.name, identity, logger: createLogger('silent'),
    leaseDurationMs: 15_000, renewIntervalMs: options.renewIntervalMs ?? 50, renewDeadlineMs: 10_000,
    ...(options.monotonic === undefined ? {} : { monotonic: options.monotonic }),
    ...(options.onChange === undefined ? {} : { onChange: options.onChange }) });
}

test('a leader whose process was stopped past its renew deadline is no leader the moment it resumes, before any renewal', async () => {
  const server = await startKubeApiServer();
  let clock = 1_000_000;
  // A renewal every hour in test time: only the clock, never a tick of the elector, can end the term below.
  const changes: boolean[] = [];
  const a = await elector(server, 'pod-a', { monotonic: () => clock, renewIntervalMs: 3_600_000, onChange: (leader) => changes.push(leader) });
  try {
    a.start();
    await waitFor(() => a.isLeader(), { description: 'a leads' });
    clock += 9_999;
    assert.equal(a.isLeader(), true, 'still within the renew deadline');
    clock += 2;
    assert.equal(a.isLeader(), false, 'past the renew deadline: fenced at once');
    // Said at once, so that the next renewal is a new term (and a pass catches up on what was skipped).
    assert.deepEqual(changes, [true, false]);
  } finally {
    await a.stop();
    await server.close();
  }
});

test('a term runs from when its renewal was sent, not from its answer: the time the request was in flight counts against it', async () => {
  const server = await startKubeApiServer();
  let clock = 1_000_000;
  const a = await elector(server, 'pod-a', { monotonic: () => clock, renewIntervalMs: 3_600_000 });
  try {
    // The request that takes the Lease is answered 3 s after it was sent (a slow API server, a congested link):
    // the API server may have stored the renewal at any moment of those 3 s, so the term cannot start later than the send.
    const held = server.holdNext({ method: 'POST', pathIncludes: '/leases' });
    a.start();
    await held.arrived;
    clock += 3_000;
    held.release();
    await waitFor(() => a.isLeader(), { description: 'a leads' });
    clock = 1_000_000 + 9_999;
    assert.equal(a.isLeader(), true, 'within the renew deadline of the send');
    clock += 2;
    assert.equal(a.isLeader(), false, 'past the renew deadline of the send, though not of the answer');
  } finally {
    await a.stop();
    await server.close();
  }
});

test('a renewal answered after the renew deadline starts no term', async () => {
  const server = await startKubeApiServer();
  let clock = 0;
  const changes: boolean[] = [];
  // Each reading of the clock is 11 s after the one before: every renewal is answered past the deadline, as it is
  // when the process stops while the request is in flight.
  const a = await elector(server, 'pod-a', { monotonic: () => (clock += 11_000), onChange: (leader) => changes.push(leader) });
  try {
    a.start();
    const renewals = () => server.requests.filter((r) => r.path.includes('/leases/') && r.method !== 'GET').length;
    await waitFor(() => renewals() >= 3, { description: 'renewals go on' });
    assert.equal(a.isLeader(), false);
    assert.deepEqual(changes, [], 'never became leader');
  } finally {
    await a.stop();
    await server.close();
  }
});

test('a 403 on the Lease is retried: no leader while refused, leader again once allowed, never every-replica mode', async () => {
  const server = await startKubeApiServer();
  const a = await elector(server, 'pod-a');
  const b = await elector(server, 'pod-b');
  const leaseRequests = () => server.requests.filter((r) => r.path.includes('/leases/')).length;
  try {
    server.failNext({ pathIncludes: '/leases/', count: 20 }, 403);
    a.start();
    await waitFor(() => leaseRequests() >= 10, { description: 'a keeps asking while refused' });
    assert.equal(a.isLeader(), false, 'refused: not the leader, and not every replica either');
    await waitFor(() => a.isLeader(), { description: 'a leads once the Lease is granted' });
    b.start();
    const before = server.requests.filter((r) => r.path.includes('/leases/') && r.method === 'GET').length;
    await waitFor(() => server.requests.filter((r) => r.path.includes('/leases/') && r.method === 'GET').length >= before + 6, { description: 'b reads the held Lease' });
    assert.equal(b.isLeader(), false, 'one leader only');
    const lease = server.get(LEASE);
    assert.equal((lease?.spec as { holderIdentity?: string }).holderIdentity, 'pod-a');
  } finally {
    await a.stop();
    await b.stop();
    await server.close();
  }
});
