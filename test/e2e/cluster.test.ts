// End to end on a real control plane: kube-apiserver and etcd built from Go modules (test/e2e/controlplane), the
// shipped manifests installed as a user installs them, and the real `shortcut-webhook serve` process running with the
// shipped ServiceAccount's rights. The API server calls the webhook, applies its patches, validates and stores the
// result; the tests judge what it stored. Each test builds on the state the previous one left, in order.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fccObject, sliceObject, type SliceSpec } from '../support/builders.ts';
import { makeCerts, type TestCerts } from '../support/certs.ts';
import { exitWithin, startServer, type RunningServer } from '../support/process.ts';
import { secretVolume, servedFingerprint } from '../support/secret-volume.ts';
import { killServer, logRecords, metricValue, opsGet, usablePairs } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { startCanary, type Canary } from './support/canary.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { KubeClient, type KubeObject, type WatchEvent } from './support/kube-client.ts';
import { connectionCrd, pathOf, selfPath, shippedManifests } from './support/objects.ts';
import { skipReason } from './support/skip.ts';
import { freePort } from '../support/free-port.ts';

const SHORTCUT = 'liqo.io/shortcut-addresses';
const ORIGINAL = 'liqo.io/shortcut-original-addresses';
const LIQO_MANAGER = 'shadow-endpointslice-controller';
const WEBHOOK_NAME = 'endpointslices.shortcut-webhook.liqo.io';
const FCC_PATH = '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections';
const CONNECTION_PATH = '/apis/networking.liqo.io/v1beta1/namespaces/liqo-tenant-cluster3/connections';
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices';
/** Waits on a real API server and a real process: generous bounds, never reached when things work. */
const CONVERGE = { timeoutMs: 30_000, intervalMs: 25 } as const;

const skip = skipReason();


/** A reflected slice as Liqo's writer sends it: no resourceVersion (server-side apply needs none). */
function reflected(spec: SliceSpec): KubeObject {
  const object = sliceObject(spec) as KubeObject;
  delete object.metadata?.resourceVersion;
  return object;
}

function addressesOf(slice: KubeObject): string {
  return JSON.stringify(((slice.endpoints ?? []) as { addresses: string[] }[]).map((endpoint) => endpoint.addresses));
}

function annotationsOf(slice: KubeObject): Record<string, string> {
  return slice.metadata?.annotations ?? {};
}

describe(`shortcut-webhook on a real Kubernetes ${kubernetesVersion()} control plane`, { skip }, () => {
  let cp: ControlPlane;
  let canary: Canary;
  let admin: KubeClient;
  let webhook: RunningServer | undefined;
  let webhookPort: number;
  let tlsVolume: string;
  let serving: TestCerts;
  let webhookKubeconfig: string;
  let webhookToken: string;
  const started = Date.now();
  /** Temporary folders of this suite, removed at the end. */
  const made: string[] = [];
  const certs = (namespace?: string) => {
    const pair = makeCerts(undefined, namespace);
    made.push(pair.dir);
    return pair;
  };

  const slice = (name: string) => admin.get(`${SLICES}/${name}`);
  const apply = (spec: SliceSpec, query = '') => admin.apply(`${SLICES}/${spec.name}`, reflected(spec), LIQO_MANAGER, true, query);
  const storedAddresses = async (name: string) => addressesOf(await slice(name));
  const untilStored = (name: string, addresses: string, what: string) =>
    waitFor(async () => (await storedAddresses(name)) === addresses, { ...CONVERGE, description: what });
  const setFccStatus = (status: Record<string, unknown>) =>
    admin.ok('PATCH', `${FCC_PATH}/cluster2-cluster3/status`, { status }, { contentType: 'application/merge-patch+json' });
  const setTunnel = (value: string) =>
    admin.ok('PATCH', `${CONNECTION_PATH}/cluster3/status`, { status: { value } }, { contentType: 'application/merge-patch+json' });
  /** kube-apiserver's own count of writes it let through when calling our webhook failed (failurePolicy Ignore). */
  const failOpenCount = async () => {
    const text = (await admin.request('GET', '/metrics')).text;
    return text.split('\n').filter((line) => line.startsWith('apiserver_admission_webhook_fail_open_count{') && line.includes(`name="${WEBHOOK_NAME}"`))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  };
  const startWebhook = async () => {
    webhook = await startServer(['--port', String(webhookPort), '--tls-cert', join(tlsVolume, 'tls.crt'), '--tls-key', join(tlsVolume, 'tls.key'),
      '--kubeconfig', webhookKubeconfig, '--resync-interval', '0'], { POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'webhook-0' });
    const running = webhook;
    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { ...CONVERGE, description: 'the webhook is ready' });
    return running;
  };
  const setCaBundle = async (ca: Buffer) => {
    await admin.ok('PATCH', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/shortcut-webhook',
      [{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: ca.toString('base64') }], { contentType: 'application/json-patch+json' });
    await canary.configurationsSeen();
  };

  before(async () => {
    cp = await startControlPlane();
    admin = cp.admin;
    process.stdout.write(`# kube-apiserver ${kubernetesVersion()} ready ${cp.startupMs} ms after start (certificates and etcd included)\n`);
    canary = await startCanary(admin, certs('canary'));
    webhookPort = await freePort();
    serving = certs();
    const volumeParent = mkdtempSync(join(tmpdir(), 'shortcut-e2e-tls-'));
    made.push(volumeParent);
    tlsVolume = join(volumeParent, 'tls');
    mkdirSync(tlsVolume);
    secretVolume(tlsVolume, serving, 'v1');
    symlinkSync('..data/tls.crt', join(tlsVolume, 'tls.crt'));
    symlinkSync('..data/tls.key', join(tlsVolume, 'tls.key'));
  });

  after(async () => {
    await killServer(webhook);
    await canary?.close();
    await cp?.stop();
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
    process.stdout.write(`# e2e suite took ${Date.now() - started} ms\n`);
  });

  test('the shipped manifests install as they are, and the webhook configuration changes only in clientConfig', async () => {
    for (const name of ['demo', 'liqo', 'liqo-tenant-cluster3']) {
      await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    // Liqo is there before the webhook: the Connection CRD (ours holds only what the webhook reads).
    await admin.ok('POST', pathOf(connectionCrd), connectionCrd);
    const shipped = shippedManifests();
    assert.deepEqual(shipped.map((o) => o.kind), ['CustomResourceDefinition', 'Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding',
      'Role', 'RoleBinding', 'Service', 'Deployment', 'PodDisruptionBudget', 'MutatingWebhookConfiguration']);
    for (const object of shipped) {
      if (object.kind === 'MutatingWebhookConfiguration') {
        const webhooks = object.webhooks as { clientConfig: Record<string, unknown> }[];
        assert.equal(webhooks.length, 1);
        for (const hook of webhooks) {
          hook.clientConfig = { url: `https://127.0.0.1:${webhookPort}/mutate/endpointslices`, caBundle: serving.ca.toString('base64') };
        }
      }
      const answer = await admin.request('POST', pathOf(object), object);
      assert.equal(answer.status, 201, `${object.kind} ${object.metadata?.name}: ${answer.text}`);
      // Pod Security (the namespace enforces `restricted`) and deprecated fields would say so here.
      assert.deepEqual(answer.warnings, [], `${object.kind} ${object.metadata?.name} created without warnings`);
    }
    for (const crd of ['foreignclusterconnections.networking.liqo.io', 'connections.networking.liqo.io']) {
      await waitFor(async () => {
        const stored = await admin.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`);
        return stored.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      }, { ...CONVERGE, description: `${crd} established` });
    }
    await canary.configurationsSeen();
  });

  test('the webhook runs on a TokenRequest token of the shipped ServiceAccount, which is enough and is refused the rest', async () => {
    const request = await admin.ok<{ status: { token: string } }>('POST',
      '/api/v1/namespaces/shortcut-webhook/serviceaccounts/shortcut-webhook/token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    webhookToken = request.status.token;
    webhookKubeconfig = cp.writeTokenKubeconfig('shortcut-webhook', webhookToken);
    const running = await startWebhook();
    // The view synced (FCCs listed and watched), and the controller took the Lease: list, watch, get, create allowed.
    const lease = await waitFor(async () => {
      const answer = await admin.request<KubeObject>('GET', '/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/shortcut-webhook-controller');
      return answer.status === 200 && (answer.body.spec as { holderIdentity?: string }).holderIdentity === 'webhook-0' ? answer.body : undefined;
    }, { ...CONVERGE, description: 'the controller holds its Lease' });
    const renewed = lease.metadata?.resourceVersion;
    await waitFor(async () => (await admin.get('/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/shortcut-webhook-controller'))
      .metadata?.resourceVersion !== renewed, { ...CONVERGE, description: 'the Lease is renewed (update allowed)' });

    const asWebhook = new KubeClient(cp.url, cp.ca, { token: webhookToken });
    try {
      const whoami = await asWebhook.ok<{ status: { userInfo: { username: string } } }>('POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
      assert.equal(whoami.status.userInfo.username, 'system:serviceaccount:shortcut-webhook:shortcut-webhook');
      for (const [method, path, body] of [
        ['GET', '/api/v1/namespaces/shortcut-webhook/secrets', undefined],
        ['GET', '/api/v1/secrets', undefined],
        ['GET', '/api/v1/namespaces/shortcut-webhook/configmaps', undefined],
        ['POST', SLICES, reflected({ name: 'not-allowed' })],
        ['DELETE', `${SLICES}/anything`, undefined],
        ['PATCH', `${FCC_PATH}/anything`, {}],
        ['GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/shortcut-webhook-controller', undefined],
        ['GET', '/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/someone-else', undefined],
      ] as const) {
        const answer = await asWebhook.request(method, path, body, method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {});
        assert.equal(answer.status, 403, `${method} ${path} is forbidden: ${answer.text}`);
      }
      assert.equal((await asWebhook.request('GET', `${SLICES}?limit=1`)).status, 200);
    } finally {
      asWebhook.close();
    }
    const refused = logRecords(running).filter((r) => /forbidden|\b403\b/i.test(JSON.stringify(r)));
    assert.deepEqual(refused, [], 'the webhook was never refused anything it does');
  });

  test('slices written by a Liqo-like server-side apply are stored rewritten, and re-applying the same input stores nothing', async () => {
    // As Liqo writes it: spec and status in one create; status goes through the status subresource afterwards.
    const fcc = fccObject();
    const created = await admin.ok('POST', FCC_PATH, fcc);
    assert.equal(created.status, undefined, 'the status of a create is dropped by the status subresource');
    await setFccStatus(fcc.status as Record<string, unknown>);
    await admin.ok('POST', CONNECTION_PATH, { apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection',
      metadata: { name: 'cluster3', namespace: 'liqo-tenant-cluster3', labels: { 'liqo.io/remote-cluster-id': 'cluster3' } }, spec: {} });
    await setTunnel('Connected');
    await waitFor(async () => (await usablePairs(webhook!)).includes('liqo/cluster2-cluster3:10.63.0.0/16->10.61.0.0/16'),
      { ...CONVERGE, description: 'the webhook uses the shortcut' });

    const input = { name: 'web-applied', addresses: [['10.63.0.151'], ['10.200.0.196']] } as const;
    const first = await apply(input);
    assert.equal(addressesOf(first), '[["10.61.0.151"],["10.200.0.196"]]');
    assert.deepEqual(annotationsOf(first), { [SHORTCUT]: '10.61.0.151', [ORIGINAL]: '{"10.61.0.151":"10.63.0.151"}' });
    // What the webhook added is owned by no field manager (the apply's own entry lists only what Liqo sent), so a
    // later apply without the annotations leaves them alone.
    assert.deepEqual(first.metadata?.managedFields?.map((entry) => (entry as { manager: string }).manager), [LIQO_MANAGER]);
    assert.doesNotMatch(JSON.stringify(first.metadata?.managedFields), /f:annotations/);
    const again = await apply(input);
    assert.equal(again.metadata?.resourceVersion, first.metadata?.resourceVersion, 're-applying the same input stores nothing new');

    const changed = await apply({ ...input, extra: { ports: [{ name: 'http', port: 8081, protocol: 'TCP' }] } });
    assert.notEqual(changed.metadata?.resourceVersion, first.metadata?.resourceVersion);
    assert.equal(addressesOf(changed), '[["10.61.0.151"],["10.200.0.196"]]');
    assert.deepEqual(annotationsOf(changed), annotationsOf(first), 'the annotations survive a later apply');
    const unchanged = await apply({ ...input, extra: { ports: [{ name: 'http', port: 8081, protocol: 'TCP' }] } });
    assert.equal(unchanged.metadata?.resourceVersion, changed.metadata?.resourceVersion);
    assert.deepEqual(await slice('web-applied'), unchanged);
  });

  test('the controller converges stored slices on connect, disconnect, CIDR change, tunnel down and delete, writing only what differs, once', async () => {
    const running = webhook!;
    await admin.ok('POST', SLICES, reflected({ name: 'mixed', addresses: [['10.63.0.1', '10.63.0.2'], ['10.200.0.1']] }));
    await admin.ok('POST', SLICES, reflected({ name: 'hub-only', addresses: [['10.200.0.5']] }));
    await admin.ok('POST', SLICES, reflected({ name: 'not-reflected', managedBy: 'endpointslice-controller.k8s.io', addresses: [['10.63.0.3']] }));
    await admin.ok('POST', SLICES, reflected({ name: 'elsewhere', destination: 'cluster4', addresses: [['10.63.0.4']] }));
    assert.equal(await storedAddresses('mixed'), '[["10.61.0.1","10.61.0.2"],["10.200.0.1"]]', 'the create itself is rewritten');

    const list = await admin.get<{ metadata: { resourceVersion: string } }>(SLICES);
    const events: WatchEvent[] = [];
    const watch = await admin.watch(SLICES, list.metadata.resourceVersion, (event) => events.push(event));
    const patchedBefore = await metricValue(running, 'shortcut_webhook_slices_reconciled_total{result="patched"}') || 0;
    const expectEverywhere = async (web: string, mixed: string, what: string) => {
      await untilStored('web-applied', web, `web-applied ${what}`);
      await untilStored('mixed', mixed, `mixed ${what}`);
    };
    try {
      await setFccStatus({ isConnected: false, phase: 'Failed' });
      await expectEverywhere('[["10.63.0.151"],["10.200.0.196"]]', '[["10.63.0.1","10.63.0.2"],["10.200.0.1"]]', 'restored on disconnect');
      assert.deepEqual(annotationsOf(await slice('mixed')), {}, 'no annotation left on a restored slice');

      await setFccStatus({ isConnected: true, phase: 'Connected' });
      await expectEverywhere('[["10.61.0.151"],["10.200.0.196"]]', '[["10.61.0.1","10.61.0.2"],["10.200.0.1"]]', 'rewritten on connect');

      await setFccStatus({ foreignClusterANetworking: { podCIDR: '10.63.0.0/16', remappedPodCIDR: '10.62.0.0/16' } });
      await expectEverywhere('[["10.62.0.151"],["10.200.0.196"]]', '[["10.62.0.1","10.62.0.2"],["10.200.0.1"]]', 'moved on a CIDR change');
      assert.deepEqual(annotationsOf(await slice('mixed')), { [SHORTCUT]: '10.62.0.1,10.62.0.2', [ORIGINAL]: '{"10.62.0.1":"10.63.0.1","10.62.0.2":"10.63.0.2"}' });

      await setTunnel('ConnectionError');
      await expectEverywhere('[["10.63.0.151"],["10.200.0.196"]]', '[["10.63.0.1","10.63.0.2"],["10.200.0.1"]]', 'restored when the tunnel is down');
      await setTunnel('Connected');
      await expectEverywhere('[["10.62.0.151"],["10.200.0.196"]]', '[["10.62.0.1","10.62.0.2"],["10.200.0.1"]]', 'rewritten when the tunnel is up');

      await admin.ok('DELETE', `${FCC_PATH}/cluster2-cluster3`);
      await expectEverywhere('[["10.63.0.151"],["10.200.0.196"]]', '[["10.63.0.1","10.63.0.2"],["10.200.0.1"]]', 'restored on delete');

      // Six changes, each one write to each of the two slices it concerns, nothing to the others, no write after.
      const expected = 12;
      await waitFor(() => events.filter((e) => e.type === 'MODIFIED').length >= expected, { ...CONVERGE, description: 'the watch saw the writes' });
      const patched = await waitFor(async () => {
        const value = await metricValue(running, 'shortcut_webhook_slices_reconciled_total{result="patched"}') - patchedBefore;
        return value >= expected ? value : undefined;
      }, { ...CONVERGE, description: 'the controller counted its writes' });
      assert.equal(patched, expected);
      const modified = events.filter((e) => e.type === 'MODIFIED').map((e) => e.object.metadata?.name);
      assert.deepEqual(modified.filter((n) => n === 'web-applied').length, 6);
      assert.deepEqual(modified.filter((n) => n === 'mixed').length, 6);
      assert.equal(modified.length, expected, `only the two reflected slices of cluster2 were written: ${modified.join()}`);
      assert.deepEqual(events.filter((e) => e.type !== 'MODIFIED' && e.type !== 'BOOKMARK'), []);
      assert.equal(await storedAddresses('not-reflected'), '[["10.63.0.3"]]');
      assert.equal(await storedAddresses('elsewhere'), '[["10.63.0.4"]]');
      const passes = logRecords(running).filter((r) => r.msg === 'reconcile pass done');
      assert.deepEqual(passes.filter((p) => p.conflict !== 0 || p.error !== 0 || p.gone !== 0), [], 'no pass met a conflict or an error');
    } finally {
      watch.stop();
    }
  });

  test('with the webhook stopped writes succeed unrewritten; started again, the controller repairs them; dry runs store nothing', async () => {
    await admin.ok('POST', FCC_PATH, fccObject());
    await setFccStatus(fccObject().status as Record<string, unknown>);
    await untilStored('mixed', '[["10.61.0.1","10.61.0.2"],["10.200.0.1"]]', 'rewritten after the FCC is back');
    const failOpenBefore = await failOpenCount();

    const stopping = webhook!;
    stopping.child.kill('SIGTERM');
    assert.equal(await exitWithin(stopping, 20_000), 0);
    const lease = await admin.get('/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/shortcut-webhook-controller');
    assert.equal((lease.spec as { holderIdentity?: string }).holderIdentity, undefined, 'the Lease is released on shutdown');
    const down = await admin.ok('POST', SLICES, reflected({ name: 'while-down', addresses: [['10.63.0.7']] }));
    assert.equal(addressesOf(down), '[["10.63.0.7"]]', 'failurePolicy Ignore: the write succeeds as sent');
    const reapplied = await apply({ name: 'web-applied', addresses: [['10.63.0.151'], ['10.200.0.196']] });
    assert.equal(addressesOf(reapplied), '[["10.63.0.151"],["10.200.0.196"]]');
    assert.equal(await failOpenCount(), failOpenBefore + 2, 'the API server counts both writes as failed open');

    await startWebhook();
    await untilStored('while-down', '[["10.61.0.7"]]', 'repaired by the controller after the restart');
    await untilStored('web-applied', '[["10.61.0.151"],["10.200.0.196"]]', 'repaired by the controller after the restart');

    const own = await admin.ok('POST', '/apis/discovery.k8s.io/v1/namespaces/shortcut-webhook/endpointslices',
      reflected({ name: 'own-namespace', namespace: 'shortcut-webhook', addresses: [['10.63.0.9']] }));
    assert.equal(addressesOf(own), '[["10.63.0.9"]]', 'the namespaceSelector keeps the webhook out of its own namespace');

    const dry = await admin.ok('POST', `${SLICES}?dryRun=All`, reflected({ name: 'dry-run', addresses: [['10.63.0.8']] }));
    assert.equal(addressesOf(dry), '[["10.61.0.8"]]', 'a dry run comes back rewritten');
    assert.deepEqual(annotationsOf(dry), { [SHORTCUT]: '10.61.0.8', [ORIGINAL]: '{"10.61.0.8":"10.63.0.8"}' });
    assert.equal((await admin.request('GET', `${SLICES}/dry-run`)).status, 404, 'and stores nothing');
    const dryApply = await apply({ name: 'web-applied', addresses: [['10.63.0.152'], ['10.200.0.196']] }, '&dryRun=All');
    assert.equal(addressesOf(dryApply), '[["10.61.0.152"],["10.200.0.196"]]');
    assert.equal(await storedAddresses('web-applied'), '[["10.61.0.151"],["10.200.0.196"]]');
    assert.equal(await failOpenCount(), failOpenBefore + 2, 'no call failed since the restart');
  });

  test('the serving certificate and caBundle rotate with no write left unrewritten across the swap', async () => {
    const running = webhook!;
    const failOpenBefore = await failOpenCount();
    const next = certs('shortcut-webhook');
    let writes = 0;
    let stop = false;
    const wrong: string[] = [];
    const writer = (async () => {
      while (!stop) {
        const name = `rotation-${writes}`;
        const stored = await admin.ok('POST', SLICES, reflected({ name, addresses: [['10.63.1.1']] }));
        if (addressesOf(stored) !== '[["10.61.1.1"]]') wrong.push(`${name}: ${addressesOf(stored)}`);
        writes++;
      }
    })();
    const afterMore = async (count: number, what: string) => {
      const target = writes + count;
      await waitFor(() => writes >= target || wrong.length > 0, { ...CONVERGE, description: what });
    };
    try {
      await afterMore(3, 'writes before the rotation');
      await setCaBundle(Buffer.concat([serving.ca, next.ca]));
      await afterMore(3, 'writes with both CAs trusted');
      secretVolume(tlsVolume, next, 'v2', 'v1');
      const fingerprint = new X509Certificate(next.cert).fingerprint256;
      await waitFor(async () => (await servedFingerprint(running.webhookPort, [serving.ca, next.ca])) === fingerprint,
        { ...CONVERGE, description: 'the webhook serves the new certificate' });
      await afterMore(3, 'writes after the swap');
      await setCaBundle(next.ca);
      await afterMore(3, 'writes with only the new CA trusted');
    } finally {
      stop = true;
      await writer;
    }
    assert.deepEqual(wrong, []);
    assert.ok(writes >= 12);
    assert.equal(await failOpenCount(), failOpenBefore, 'no call to the webhook failed');
    serving = next;
  });

  test('a reflected slice without endpoints is reviewed like any other, not failed open', async () => {
    const failOpenBefore = await failOpenCount();
    const empty = await admin.ok('POST', SLICES, { ...reflected({ name: 'no-endpoints' }), endpoints: [] });
    assert.equal(empty.endpoints ?? null, null, 'kube-apiserver stores and sends an empty list as null');
    const updated = await admin.ok('PUT', selfPath(empty), { ...empty, endpoints: reflected({ addresses: [['10.63.0.77']] }).endpoints });
    assert.equal(addressesOf(updated), '[["10.61.0.77"]]');
    const emptied = await admin.ok('PUT', selfPath(updated), { ...updated, endpoints: [] });
    assert.equal(emptied.endpoints ?? null, null);
    assert.deepEqual(annotationsOf(emptied), {}, 'no flag is left on a slice without addresses');
    assert.equal(await failOpenCount(), failOpenBefore, 'the webhook answered every review');
  });

  test('every patch was applied by the API server and every stored slice is valid, a slice of 1,000 endpoints included', async () => {
    const big = Array.from({ length: 1000 }, (_, i) => [`10.63.${i >> 8}.${i & 255}`]);
    const stored = await admin.ok('POST', SLICES, reflected({ name: 'big', addresses: big }));
    const want = JSON.stringify(big.map(([address]) => [address!.replace(/^10\.63\./, '10.61.')]));
    assert.equal(addressesOf(stored), want);
    assert.equal(annotationsOf(stored)[SHORTCUT]?.split(',').length, 1000);
    // Written back as read: validation passes again and, nothing changing, nothing is stored.
    const roundTrip = await admin.ok('PUT', selfPath(stored), stored);
    assert.equal(roundTrip.metadata?.resourceVersion, stored.metadata?.resourceVersion);
    // An update: the review carries the 1,000 endpoints twice, object and oldObject; Liqo moves one endpoint.
    const moved = big.map(([address], i) => [i === 999 ? '10.63.7.7' : address!]);
    const updated = await admin.ok('PUT', selfPath(stored), { ...reflected({ name: 'big', addresses: moved }), metadata: stored.metadata });
    assert.equal(addressesOf(updated), JSON.stringify(moved.map(([address]) => [address!.replace(/^10\.63\./, '10.61.')])));

    const all = await admin.get<{ items: KubeObject[] }>(SLICES);
    for (const item of all.items) assert.equal((await admin.request('PUT', selfPath({ ...item, apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' }), { ...item, apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' })).status, 200);

    // How kube-apiserver calls a webhook (the canary sees the same client as ours): HTTP/2, ?timeout= from timeoutSeconds.
    assert.ok(canary.calls.length > 0);
    for (const call of canary.calls) assert.deepEqual([call.httpVersion, call.query, call.contentType], ['2.0', '?timeout=5s', 'application/json']);
    const apiServerLog = readFileSync(cp.apiServerLog, 'utf8');
    assert.doesNotMatch(apiServerLog, /failed to apply patch|JSONPatch|jsonpatch/i);
    const metrics = (await admin.request('GET', '/metrics')).text;
    assert.doesNotMatch(metrics, new RegExp(`apiserver_admission_webhook_rejection_count\\{[^}]*name="${WEBHOOK_NAME.replaceAll('.', '\\.')}"`));
    assert.deepEqual(admin.warnings, [], 'the API server warned about nothing we wrote');
    const running = webhook!;
    const errors = logRecords(running).filter((r) => typeof r.level === 'number' && r.level >= 50);
    assert.deepEqual(errors, []);
    assert.ok(!((await metricValue(running, 'shortcut_webhook_admission_requests_total{operation="UPDATE",result="error"}')) > 0));
    assert.ok(!((await metricValue(running, 'shortcut_webhook_admission_requests_total{operation="CREATE",result="error"}')) > 0));
    assert.ok(await metricValue(running, 'shortcut_webhook_admission_requests_total{operation="UPDATE",result="patched"}') > 0);
  });

  test('with --shortcuts-kubeconfig the hub reader of manifests/hub reads FCCs on the hub, and nothing else', async () => {
    // This control plane plays the hub too. The reader's Secret waits for kube-controller-manager's token controller,
    // which does not run here: a TokenRequest for the same ServiceAccount stands in for it.
    for (const object of shippedManifests('hub')) {
      const answer = await admin.request('POST', pathOf(object), object);
      assert.ok(answer.status === 201 || (object.kind === 'Namespace' && answer.status === 409), `${object.kind}: ${answer.text}`);
    }
    const request = await admin.ok<{ status: { token: string } }>('POST',
      '/api/v1/namespaces/shortcut-webhook/serviceaccounts/shortcut-webhook-reader/token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    const reader = new KubeClient(cp.url, cp.ca, { token: request.status.token });
    let viaHub: RunningServer | undefined;
    try {
      assert.equal((await reader.request('GET', '/apis/networking.liqo.io/v1beta1/foreignclusterconnections')).status, 200);
      // List and watch are all the webhook uses: not even one FCC by name.
      for (const path of [SLICES, '/api/v1/namespaces/shortcut-webhook/secrets', CONNECTION_PATH, '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections/cluster2-cluster3']) {
        assert.equal((await reader.request('GET', path)).status, 403, `the hub reader may not read ${path}`);
      }
      viaHub = await startServer(['--tls-cert', join(tlsVolume, 'tls.crt'), '--tls-key', join(tlsVolume, 'tls.key'), '--no-controller',
        '--kubeconfig', webhookKubeconfig, '--shortcuts-kubeconfig', cp.writeTokenKubeconfig('hub-reader', request.status.token)]);
      const running = viaHub;
      await waitFor(async () => (await usablePairs(running)).includes('liqo/cluster2-cluster3:10.63.0.0/16->10.61.0.0/16'),
        { ...CONVERGE, description: 'the FCC read through the hub reader is usable' });
      assert.deepEqual(logRecords(running).filter((r) => /forbidden|\b403\b/i.test(JSON.stringify(r))), []);
    } finally {
      reader.close();
      await killServer(viaHub);
    }
  });
});
