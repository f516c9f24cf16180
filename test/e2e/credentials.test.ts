// End to end on a real control plane: credentials that rotate and a replica whose view goes stale. The control plane
// plays the hub (manifests/hub's reader reads FCCs) and the leaf (the shipped manifests, slices, the Lease); tokens
// come from TokenRequest and are revoked by deleting and recreating their ServiceAccount. The product's connections to
// the API server go through a TCP proxy the test can cut, which is what a hub restart looks like to it: a watch opened
// before the revocation otherwise carries on with the old token. The API server calls the product's webhook through a
// second balancer that, like a Service, sends each new connection to the next ready replica.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fccObject, sliceObject, type SliceSpec } from '../support/builders.ts';
import { makeCerts, type TestCerts } from '../support/certs.ts';
import { exitWithin, startServer, type RunningServer } from '../support/process.ts';
import { killServer, logRecords, opsGet, usablePairs } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { startCanary, type Canary } from './support/canary.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { KubeClient, type KubeObject, type WatchEvent } from './support/kube-client.ts';
import { kubeconfigVolume, type KubeconfigVolume } from './support/kubeconfig-volume.ts';
import { pathOf, shippedManifests } from './support/objects.ts';
import { skipReason } from './support/skip.ts';
import { startTcpBalancer, type TcpBalancer } from './support/tcp-balancer.ts';
import { CONVERGE, FCC_PATH, LIQO_MANAGER, SLICES } from './support/world-paths.ts';

const NAMESPACE = 'shortcut-webhook';
const FCCS = '/apis/networking.liqo.io/v1beta1/foreignclusterconnections';
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/shortcut-webhook-controller`;
/** --stale-view-after of the two replicas: short, so the test does not wait a minute. */
const STALE_AFTER_MS = 8000;
/** How long the slice must stay still once the stale replica is out: the criterion. */
const STILL_MS = 30_000;

const skip = skipReason();

interface SourceReport { readonly cluster: string; readonly credentials: { readonly reloads: number; readonly refused: unknown } }
async function sourcesOf(server: RunningServer): Promise<readonly SourceReport[]> {
  return (JSON.parse((await opsGet(server, '/debug/pairs')).text) as { sources: SourceReport[] }).sources;
}

function reflected(spec: SliceSpec): KubeObject {
  const object = sliceObject(spec) as KubeObject;
  delete object.metadata?.resourceVersion;
  return object;
}

function addressesOf(slice: KubeObject): string {
  return JSON.stringify(((slice.endpoints ?? []) as { addresses: string[] }[]).map((endpoint) => endpoint.addresses));
}

describe(`credentials and stale replicas on a real Kubernetes ${kubernetesVersion()} control plane`, { skip }, () => {
  let cp: ControlPlane;
  let admin: KubeClient;
  let canary: Canary;
  let serving: TestCerts;
  /** What the API server calls: the replicas in `replicas`, each new connection to the next ready one. */
  let webhooks: TcpBalancer;
  let replicas: RunningServer[] = [];
  const ready = new Map<number, boolean>();
  let readinessPoll: NodeJS.Timeout | undefined;
  const made: string[] = [];
  const running: RunningServer[] = [];
  const proxies: TcpBalancer[] = [];

  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'shortcut-e2e-creds-'));
    made.push(dir);
    return dir;
  };
  /** A proxy in front of the API server: its drop() is a restart as the product sees it. */
  const apiProxy = async () => {
    const url = new URL(cp.url);
    const proxy = await startTcpBalancer({ backends: () => [{ port: Number(url.port) }] });
    proxies.push(proxy);
    return { proxy, url: `https://127.0.0.1:${proxy.port}` };
  };
  const token = async (serviceAccount: string) => (await admin.ok<{ status: { token: string } }>('POST',
    `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${serviceAccount}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } })).status.token;
  /** Every token of the ServiceAccount stops working: it is deleted and made again (same name, new UID). */
  const recreate = async (serviceAccount: string, revoked: string) => {
    const path = `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${serviceAccount}`;
    await admin.ok('DELETE', path);
    await waitFor(async () => (await admin.request('GET', path)).status === 404, { ...CONVERGE, description: `${serviceAccount} deleted` });
    await admin.ok('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount, namespace: NAMESPACE } });
    const old = new KubeClient(cp.url, cp.ca, { token: revoked });
    try {
      await waitFor(async () => (await old.request('GET', FCCS)).status === 401, { ...CONVERGE, description: `the old token of ${serviceAccount} is refused` });
    } finally {
      old.close();
    }
  };
  const setConnected = (connected: boolean) => admin.ok('PATCH', `${FCC_PATH}/cluster2-cluster3/status`,
    { status: { isConnected: connected, phase: connected ? 'Connected' : 'Failed' } }, { contentType: 'application/merge-patch+json' });
  const apply = (spec: SliceSpec) => admin.apply(`${SLICES}/${spec.name}`, reflected(spec), LIQO_MANAGER, true);
  const stored = async (name: string) => addressesOf(await admin.get(`${SLICES}/${name}`));
  const serve = async (args: readonly string[], env: NodeJS.ProcessEnv = {}) => {
    const server = await startServer(['--tls-cert', serving.certFile, '--tls-key', serving.keyFile, '--cluster-id', 'cluster2', ...args], env);
    running.push(server);
    return server;
  };
  const readyz = async (server: RunningServer) => (await opsGet(server, '/readyz')).status === 200;

  before(async () => {
    cp = await startControlPlane();
    admin = cp.admin;
    serving = makeCerts(tempDir());
    canary = await startCanary(admin, makeCerts(tempDir(), 'canary'));
    webhooks = await startTcpBalancer({
      backends: () => replicas.map((replica) => ({ port: replica.webhookPort, ready: () => ready.get(replica.webhookPort) === true })),
      // The API server keeps one HTTP/2 connection to a webhook: cut it often, so that reviews reach every replica in turn.
      maxConnectionMs: 500,
    });
    // As the kubelet's readiness probe and the endpoints controller do, faster: a replica takes new connections only while ready.
    readinessPoll = setInterval(() => {
      for (const replica of replicas) void readyz(replica).then((ok) => ready.set(replica.webhookPort, ok), () => ready.set(replica.webhookPort, false));
    }, 100);
    for (const name of ['demo', 'liqo']) await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    for (const object of [...shippedManifests(), ...shippedManifests('hub')]) {
      if (object.kind === 'MutatingWebhookConfiguration') {
        for (const hook of object.webhooks as { clientConfig: Record<string, unknown> }[]) {
          hook.clientConfig = { url: `https://127.0.0.1:${webhooks.port}/mutate/endpointslices`, caBundle: serving.ca.toString('base64') };
        }
      }
      const answer = await admin.request('POST', pathOf(object), object);
      assert.ok(answer.status === 201 || (object.kind === 'Namespace' && answer.status === 409), `${object.kind}: ${answer.text}`);
    }
    await waitFor(async () => {
      const crd = await admin.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foreignclusterconnections.networking.liqo.io');
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { ...CONVERGE, description: 'the FCC CRD is established' });
    await canary.configurationsSeen();
    const fcc = fccObject();
    await admin.ok('POST', FCC_PATH, fcc);
    await admin.ok('PATCH', `${FCC_PATH}/cluster2-cluster3/status`, { status: fcc.status }, { contentType: 'application/merge-patch+json' });
  });

  after(async () => {
    if (readinessPoll !== undefined) clearInterval(readinessPoll);
    for (const server of running) await killServer(server);
    await webhooks?.close();
    for (const proxy of proxies) await proxy.close();
    await canary?.close();
    await cp?.stop();
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  let hubVolume: KubeconfigVolume;
  let leafVolume: KubeconfigVolume;
  let hub: { proxy: TcpBalancer; url: string };
  let leaf: { proxy: TcpBalancer; url: string };
  let hubToken: string;
  let leafToken: string;
  let replica: RunningServer;

  test('the hub reader\'s token rotated and the old one revoked, the hub restarting: FCC flips still reach stored slices, without restart', async () => {
    hub = await apiProxy();
    leaf = await apiProxy();
    hubVolume = kubeconfigVolume(join(tempDir(), 'hub'));
    leafVolume = kubeconfigVolume(join(tempDir(), 'leaf'));
    hubToken = await token('shortcut-webhook-reader');
    leafToken = await token('shortcut-webhook');
    hubVolume.write(hub.url, cp.ca, hubToken);
    leafVolume.write(leaf.url, cp.ca, leafToken);
    replica = await serve(['--kubeconfig', leafVolume.path, '--shortcuts-kubeconfig', hubVolume.path, '--resync-interval', '0'],
      { POD_NAMESPACE: NAMESPACE, POD_NAME: 'webhook-0' });
    replicas = [replica];
    await waitFor(async () => (await usablePairs(replica)).length === 1 && ready.get(replica.webhookPort), { ...CONVERGE, description: 'the replica is ready and uses the shortcut' });
    await apply({ name: 'rotating', addresses: [['10.63.0.10']] });
    await waitFor(async () => (await stored('rotating')) === '[["10.61.0.10"]]', { ...CONVERGE, description: 'the write is rewritten' });

    const revoked = hubToken;
    await recreate('shortcut-webhook-reader', revoked);
    hubToken = await token('shortcut-webhook-reader');
    hubVolume.write(hub.url, cp.ca, hubToken);
    // The hub restarts: every stream the product holds ends; the old token would now get 401 on every list and watch.
    hub.proxy.drop();
    const flipped = Date.now();
    await setConnected(false);
    await waitFor(async () => (await stored('rotating')) === '[["10.63.0.10"]]', { ...CONVERGE, description: 'restored after the flip' });
    const restoredMs = Date.now() - flipped;
    await setConnected(true);
    await waitFor(async () => (await stored('rotating')) === '[["10.61.0.10"]]', { ...CONVERGE, description: 'rewritten after the flip back' });
    process.stdout.write(`# hub rotation: stored slice restored ${restoredMs} ms after the flip\n`);

    const hubSource = (await sourcesOf(replica)).find((s) => s.cluster === 'shortcuts');
    assert.ok(hubSource !== undefined && hubSource.credentials.reloads >= 1, 'the hub credentials were reloaded');
    assert.equal(hubSource.credentials.refused, null, 'and are accepted');
    assert.ok(logRecords(replica).some((r) => r.msg === 'credentials reloaded' && r.origin === hubVolume.path));
  });

  test('the leaf\'s token rotated and the old one revoked, the API server restarting: the controller and the Lease carry on, without restart', async () => {
    const revoked = leafToken;
    await recreate('shortcut-webhook', revoked);
    leafToken = await token('shortcut-webhook');
    leafVolume.write(leaf.url, cp.ca, leafToken);
    leaf.proxy.drop();
    const flipped = Date.now();
    await setConnected(false);
    await waitFor(async () => (await stored('rotating')) === '[["10.63.0.10"]]', { ...CONVERGE, description: 'restored by the controller after the flip' });
    const restoredMs = Date.now() - flipped;
    await setConnected(true);
    await waitFor(async () => (await stored('rotating')) === '[["10.61.0.10"]]', { ...CONVERGE, description: 'rewritten by the controller after the flip back' });
    process.stdout.write(`# leaf rotation: stored slice restored ${restoredMs} ms after the flip\n`);
    const renewed = (await admin.get(LEASE)).metadata?.resourceVersion;
    await waitFor(async () => (await admin.get(LEASE)).metadata?.resourceVersion !== renewed, { ...CONVERGE, description: 'the Lease is renewed with the new token' });
    assert.ok(logRecords(replica).some((r) => r.msg === 'credentials reloaded' && r.origin === leafVolume.path));
    replica.child.kill('SIGTERM');
    assert.equal(await exitWithin(replica, 25_000), 0);
    replicas = [];
  });

  test('two replicas that disagree: the one whose hub source broke turns not ready within the bound, and the writer\'s loop stops', async () => {
    // Replica A reads the hub as the first tests left it; replica B through its own reader and its own proxy, revoked below.
    await admin.ok('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'reader-b', namespace: NAMESPACE } });
    await admin.ok('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'reader-b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'shortcut-webhook-hub-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader-b', namespace: NAMESPACE }],
    });
    const hubB = await apiProxy();
    const volumeB = kubeconfigVolume(join(tempDir(), 'hub-b'));
    const tokenB = await token('reader-b');
    volumeB.write(hubB.url, cp.ca, tokenB);
    const common = ['--kubeconfig', leafVolume.path, '--no-controller', '--stale-view-after', `${STALE_AFTER_MS}ms`];
    const a = await serve([...common, '--shortcuts-kubeconfig', hubVolume.path]);
    const b = await serve([...common, '--shortcuts-kubeconfig', volumeB.path]);
    replicas = [a, b];
    await waitFor(async () => (await usablePairs(a)).length === 1 && (await usablePairs(b)).length === 1
      && ready.get(a.webhookPort) && ready.get(b.webhookPort), { ...CONVERGE, description: 'both replicas ready, both use the shortcut' });

    // B's hub source breaks after sync: its token is revoked and the hub restarts under it. A follows the hub; B cannot.
    await admin.ok('DELETE', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/reader-b`);
    const old = new KubeClient(cp.url, cp.ca, { token: tokenB });
    try {
      await waitFor(async () => (await old.request('GET', FCCS)).status === 401, { ...CONVERGE, description: 'B\'s token is refused' });
    } finally {
      old.close();
    }
    const broken = Date.now();
    hubB.proxy.drop();
    await setConnected(false);
    await waitFor(async () => (await usablePairs(a)).length === 0, { ...CONVERGE, description: 'A sees the shortcut go down' });
    assert.equal((await usablePairs(b)).length, 1, 'B still holds its last view');

    // Liqo's writer as far as the loop goes: it applies the slice it owns again on every stored change, and on a resync.
    const input = { name: 'looping', addresses: [['10.63.0.20']] } as const;
    const first = await apply(input);
    const changes: { at: number; resourceVersion: string; addresses: string; annotations: string; managers: string }[] = [];
    const watch = await admin.watch(`${SLICES}?fieldSelector=metadata.name%3Dlooping`, String(first.metadata?.resourceVersion),
      (event: WatchEvent) => {
        if (event.type !== 'MODIFIED') return;
        const { metadata } = event.object;
        changes.push({ at: Date.now(), resourceVersion: String(metadata?.resourceVersion), addresses: addressesOf(event.object),
          annotations: JSON.stringify(metadata?.annotations ?? {}),
          managers: JSON.stringify(metadata?.managedFields ?? []) });
      });
    let writing = true;
    let applies = 0;
    const writer = (async () => {
      let seen = 0;
      while (writing) {
        if (changes.length === seen) await new Promise((resolve) => setTimeout(resolve, 200));
        seen = changes.length;
        await apply(input).catch(() => undefined);
        applies++;
      }
    })();
    try {
      const notReady = await waitFor(async () => (await readyz(b)) ? undefined : Date.now(), { timeoutMs: STALE_AFTER_MS + 20_000, intervalMs: 50,
        description: 'B turns not ready' });
      const staleMs = notReady - broken;
      const loopWrites = changes.filter((change) => change.at <= notReady).length;
      process.stdout.write(`# B not ready ${staleMs} ms after its source broke (bound ${STALE_AFTER_MS} ms); ${loopWrites} stored changes of the loop before\n`);
      assert.ok(staleMs >= STALE_AFTER_MS, 'not before the bound');
      assert.ok(staleMs <= STALE_AFTER_MS + 10_000, 'soon after the bound');
      assert.ok(loopWrites >= 2, 'while both answered, their answers undid each other');
      assert.match((await opsGet(b, '/readyz')).text, /shortcut view stale/);

      // Out of the balancer: no new connection goes to B, and B sent the API server's open ones away.
      await waitFor(() => !ready.get(b.webhookPort) && webhooks.openTo(b.webhookPort) === 0, { ...CONVERGE, description: 'no connection to B' });
      // A review B answered just before it went may still be stored after its connection closed (the API server
      // writes once the answer is in): two applies that began once B was out are A's, and the second of them began
      // after any such write had landed.
      const appliesWhenOut = applies;
      await waitFor(async () => applies >= appliesWhenOut + 2 && (await stored('looping')) === '[["10.63.0.20"]]',
        { ...CONVERGE, description: 'A\'s answer stored, after any write B answered' });
      const settled = String((await admin.get(`${SLICES}/looping`)).metadata?.resourceVersion);
      // The watch may still be delivering the change that settled it: count from there.
      await waitFor(() => changes.at(-1)?.resourceVersion === settled, { ...CONVERGE, description: 'the watch has seen the settled slice' });
      const appliesBefore = applies;
      const changesBefore = changes.length;
      const stillUntil = Date.now() + STILL_MS;
      await waitFor(() => Date.now() >= stillUntil || changes.length > changesBefore, { timeoutMs: STILL_MS + 5000, intervalMs: 100, description: 'the still period' });
      assert.deepEqual(changes.slice(changesBefore).map((c) => `${c.at - notReady} ms after not ready: ${c.addresses}`), [],
        `no stored change for ${STILL_MS} ms; the changes from the last before: ${JSON.stringify(changes.slice(Math.max(0, changesBefore - 3)), null, 1)}`);
      assert.equal((await admin.get(`${SLICES}/looping`)).metadata?.resourceVersion, settled);
      assert.ok(applies - appliesBefore >= 20, `the writer kept applying (${applies - appliesBefore} applies)`);
      process.stdout.write(`# slice still for ${STILL_MS} ms under ${applies - appliesBefore} re-applies once B was out\n`);
    } finally {
      writing = false;
      await writer;
      watch.stop();
    }
    assert.equal(await readyz(a), true, 'A, whose view is live, stays ready');
  });
});
