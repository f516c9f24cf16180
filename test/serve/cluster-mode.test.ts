// End to end in cluster mode: the real executable watches FCCs on a test API server, which calls the executable's
// own webhook over HTTPS on every slice write, exactly as kube-apiserver does; the controller converges stored slices.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configurationObject, connectionObject, fccObject, sliceObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { startKubeApiServer } from '../support/kube-api-server.ts';
import { httpsWebhookHook } from '../support/kube-webhook.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import { waitFor } from '../support/wait-for.ts';

const certs = makeCerts();
const FCC = { apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' } as const;

test('watches FCCs through the API, rewrites writes through HTTPS, and converges stored slices both ways', async () => {
  let webhook: RunningServer | undefined;
  const api = await startKubeApiServer({
    mutate: httpsWebhookHook(() => (webhook === undefined ? undefined : { url: `https://localhost:${webhook.webhookPort}`, ca: certs.ca })),
  });
  try {
    await api.create(fccObject());
    await api.create(sliceObject({ name: 'stored-before', addresses: [['10.63.0.1'], ['10.200.0.1']] }));
    await api.create(sliceObject({ name: 'not-reflected', managedBy: 'endpointslice-controller.k8s.io', addresses: [['10.63.0.2']] }));
    webhook = await startServer(['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--kubeconfig', await api.kubeconfig(),
      '--resync-interval', '0', '--cluster-id', 'cluster2'], { POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'webhook-0' });
    const slice = (name: string) => api.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name });
    const addresses = (name: string) => JSON.stringify((slice(name)?.endpoints as { addresses: string[] }[]).map((e) => e.addresses));

    await waitFor(() => addresses('stored-before') === '[["10.61.0.1"],["10.200.0.1"]]', { timeoutMs: 15_000, description: 'stored slice converged' });
    assert.equal(addresses('not-reflected'), '[["10.63.0.2"]]');

    await api.create(sliceObject({ name: 'created-later', addresses: [['10.63.0.9']] }));
    assert.equal(addresses('created-later'), '[["10.61.0.9"]]', 'the create itself was patched by the webhook');

    const opsUrl = `http://127.0.0.1:${webhook.opsPort}`;
    assert.match(await (await fetch(`${opsUrl}/metrics`)).text(), /shortcut_webhook_pairs\{state="usable"\} 1/);
    const fcc = api.get(FCC);
    assert.ok(fcc);
    await api.updateStatus({ ...fcc, status: { ...(fcc.status as object), isConnected: false, phase: 'Failed' } });
    await waitFor(() => addresses('stored-before') === '[["10.63.0.1"],["10.200.0.1"]]' && addresses('created-later') === '[["10.63.0.9"]]',
      { timeoutMs: 15_000, description: 'restored after the shortcut went down' });
    assert.deepEqual(slice('stored-before')?.metadata?.annotations ?? {}, {});

    const ops = opsUrl;
    assert.equal((await fetch(`${ops}/readyz`)).status, 200);
    // A write lands before its pass counts it: wait for the count, do not read it at once.
    const metrics = await waitFor(async () => {
      const text = await (await fetch(`${ops}/metrics`)).text();
      return /shortcut_webhook_slices_reconciled_total\{result="patched"\} [3-9]/.test(text) ? text : undefined;
    }, { timeoutMs: 15_000, description: 'three stored slices patched: one on start-up, two after the disconnect' });
    assert.match(metrics, /shortcut_webhook_pairs\{state="not-connected"\} 1/);
    const lease = api.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' });
    assert.equal((lease?.spec as { holderIdentity?: string }).holderIdentity, 'webhook-0');

    assert.match(metrics, /shortcut_webhook_view_watch_restarts_total 0\n/, 'the first watches are no restarts');
    // Three watches of the view on this API (FCCs, and the leaf's Connections and Configurations): one drop of all is
    // three restarts, each counted once. The FCC watch comes back at once; the other two (optional resources) after
    // their backoff, which may have grown up to its 30 s cap: the wait allows two of those. Each is counted before its
    // watch is sent, so once the server has all three, the count is final. (Another restart would be a real one: the
    // log says which watch and why.)
    const viewWatches = ['foreignclusterconnections', 'connections', 'configurations'].map((plural) => `/apis/networking.liqo.io/v1beta1/${plural}`);
    const watchesOf = (path: string) => api.requests.filter((r) => r.watch && r.path === path).length;
    const before = viewWatches.map(watchesOf);
    api.dropWatches();
    await waitFor(() => viewWatches.every((path, i) => watchesOf(path) > (before[i] ?? 0)), { timeoutMs: 65_000, description: 'the three dropped watches opened again' });
    const restarts = Number(/^shortcut_webhook_view_watch_restarts_total (\d+)$/m.exec(await (await fetch(`${ops}/metrics`)).text())?.[1]);
    const restartLines = webhook.lines.filter((line) => /"msg":"(watch restarted|the process was paused[^"]*)"/.test(line));
    assert.equal(restarts, 3, `the three dropped watches are counted as three restarts; the product says:\n${restartLines.join('\n')}`);

    const writes = api.requests.filter((r) => r.method === 'PATCH').length;
    webhook.child.kill('SIGTERM');
    assert.equal(await webhook.exited, 0);
    assert.equal(api.requests.filter((r) => r.method === 'PATCH').length, writes, 'no writes after convergence');
    const released = api.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'shortcut-webhook', name: 'shortcut-webhook-controller' });
    assert.equal((released?.spec as { holderIdentity?: string | null }).holderIdentity ?? null, null, 'the lease is released on shutdown');
  } finally {
    webhook?.child.kill('SIGKILL');
    await api.close();
  }
});

test('cluster mode without any cluster to talk to stops with a clear message', async () => {
  await assert.rejects(startServer(['--tls-cert', certs.certFile, '--tls-key', certs.keyFile]), /no cluster to watch shortcuts on/);
});

test('the leaf\'s Liqo views end to end: local-overlap restores stored slices, indirect slices stay, hub-external is counted', async () => {
  let webhook: RunningServer | undefined;
  const api = await startKubeApiServer({
    mutate: httpsWebhookHook(() => (webhook === undefined ? undefined : { url: `https://localhost:${webhook.webhookPort}`, ca: certs.ca })),
  });
  try {
    await api.create(fccObject());
    await api.create(connectionObject('cluster3', 'Connected'));
    await api.create(configurationObject({ peer: 'cluster1' }));
    await api.create(sliceObject({ name: 'stored', addresses: [['10.63.0.1'], ['10.71.0.4']] }));
    const indirect = sliceObject({ name: 'stored-indirect', addresses: [['10.63.0.2']] });
    const metadata = indirect.metadata as { labels: Record<string, string> };
    await api.create({ ...indirect, metadata: { ...metadata, labels: { ...metadata.labels, 'liqo.io/indirect-endpointslice': 'true' } } });
    webhook = await startServer(['--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--kubeconfig', await api.kubeconfig(),
      '--resync-interval', '0', '--cluster-id', 'cluster2']);
    const addresses = (name: string) => JSON.stringify((api.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name })
      ?.endpoints as { addresses: string[] }[]).map((e) => e.addresses));
    await waitFor(() => addresses('stored') === '[["10.61.0.1"],["10.71.0.4"]]', { timeoutMs: 15_000, description: 'the shortcut is used' });
    assert.equal(addresses('stored-indirect'), '[["10.63.0.2"]]', 'the indirect companion is never written');

    await api.create(sliceObject({ name: 'created', addresses: [['10.71.0.5'], ['10.71.0.6']] }));
    const ops = `http://127.0.0.1:${webhook.opsPort}`;
    assert.match(await (await fetch(`${ops}/metrics`)).text(), /shortcut_webhook_addresses_untouched_total\{reason="hub-external"\} [2-9]/);

    // Another peer of cluster2 turns out to be seen where the shortcut's hub prefix is: the pair must go.
    await api.create(configurationObject({ peer: 'cluster4', remotePod: '10.64.0.0/16', remotePodView: '10.63.0.0/16', remoteExternalView: '10.73.0.0/16' }));
    await waitFor(() => addresses('stored') === '[["10.63.0.1"],["10.71.0.4"]]', { timeoutMs: 15_000, description: 'restored on local-overlap' });
    assert.match(await (await fetch(`${ops}/metrics`)).text(), /shortcut_webhook_pairs\{state="local-overlap"\} 1/);
    webhook.child.kill('SIGTERM');
    assert.equal(await webhook.exited, 0);
  } finally {
    webhook?.child.kill('SIGKILL');
    await api.close();
  }
});
