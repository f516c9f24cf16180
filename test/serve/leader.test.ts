// Only the leader writes: a `serve` replica whose Lease is held by another replica passes over the stored slices and
// patches none of them, however many passes it makes, and takes the writes over once the Lease is given up. Against
// the real executable, whose log says each pass it declines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fccObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import { killServer, logRecords, storedAddresses } from '../support/serve-cluster.ts';
import { httpsWebhookHook } from '../support/kube-webhook.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' } as const;

/** Lease times are MicroTime. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

test('a replica that is not the leader never patches a stored slice, pass after pass; once the Lease is free it does', async () => {
  let server: RunningServer | undefined;
  const api = await startKubeApiServer({
    mutate: httpsWebhookHook(() => (server === undefined ? undefined : { url: `https://localhost:${server.webhookPort}`, ca: certs.ca })),
  });
  try {
    await api.create(fccObject());
    await api.create(sliceObject({ name: 'stored', addresses: [['10.63.0.7']] }));
    // Another replica holds the Lease, renewed just now, for an hour.
    await api.create({ ...LEASE, metadata: { name: LEASE.name, namespace: LEASE.namespace },
      spec: { holderIdentity: 'webhook-other', leaseDurationSeconds: 3600, acquireTime: microTime(Date.now()), renewTime: microTime(Date.now()), leaseTransitions: 0 } });
    server = await startServer(['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--kubeconfig', await api.kubeconfig(),
      '--cluster-id', 'cluster2', '--resync-interval', '1s', '--log-level', 'debug'], { POD_NAMESPACE: LEASE.namespace, POD_NAME: 'webhook-1' });
    const running = server;
    const declined = () => logRecords(running).filter((r) => r.msg === 'not the leader: another replica reconciles').length;
    // The first sync's pass and two periodic ones, each declined.
    await waitFor(() => declined() >= 3, { timeoutMs: 15_000, description: 'three passes declined' });
    assert.equal(api.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/endpointslices/')).length, 0, 'no slice patched');
    assert.equal(storedAddresses(api, 'stored'), '[["10.63.0.7"]]');
    assert.equal(logRecords(running).filter((r) => r.msg === 'stored slice patched').length, 0);

    // The other replica gives the Lease up: this one takes it and the next pass writes.
    const lease = api.get(LEASE);
    await api.update({ ...lease, spec: { ...(lease?.spec as object), holderIdentity: null, leaseDurationSeconds: 1 } } as typeof lease & object);
    await waitFor(() => storedAddresses(api, 'stored') === '[["10.61.0.7"]]', { timeoutMs: 15_000, description: 'the new leader converges the slice' });
    assert.ok(logRecords(running).some((r) => r.msg === 'became the controller leader'));
  } finally {
    await killServer(server);
    await api.close();
  }
});
