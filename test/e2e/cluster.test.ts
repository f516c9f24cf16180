// End to end on two real control planes, a hub and a leaf: kube-apiserver and etcd built from Go modules
// (test/e2e/controlplane), Liqo's own CRDs from the Liqo module on both, the shipped manifests installed as a user
// installs them (manifests/ on the leaf, manifests/hub/ on the hub), the real `shortcut-webhook serve` process running
// with the shipped ServiceAccount's rights on the leaf and reading the hub's FCCs with the hub reader's, and Liqo's own
// leaf writer (liqo-writer: Liqo v1.2.0's shadowendpointslice-controller) turning ShadowEndpointSlices into the leaf's
// EndpointSlices. The tests write ShadowEndpointSlices as the hub's virtual kubelet would (the FCC path's shape, a hub
// that reflects hub-view addresses, is no Liqo code's; the stock-path test shares their namespace, where Liqo's own
// reflector would delete shadows it did not forge, so it writes them too: hub-reflector.test.ts runs the stock path
// against Liqo's reflector itself); Liqo's writer creates and server-side-applies the slices, the API server calls the
// webhook, applies its patches, validates and stores the result; the tests judge what it stored. Each test builds on
// the state the previous one left, in order.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fccObject, sliceObject, type SliceSpec } from '../support/builders.ts';
import { makeCerts, type TestCerts } from '../support/certs.ts';
import { freePortOutsideEphemeralRange } from '../support/free-port.ts';
import { exitWithin, startServer, type RunningServer } from '../support/process.ts';
import { secretVolume, servedFingerprint } from '../support/secret-volume.ts';
import { debugPairs, killServer, logRecords, metricValue, opsGet, usablePairs } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { buildLiqoWriter, liqoVersion } from './liqo-writer/build.ts';
import { startCanary, type Canary } from './support/canary.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { KubeClient, type KubeObject, type WatchEvent } from './support/kube-client.ts';
import {
  createConfiguration, createConnection, createHubIp, createWithStatus, foreignCluster, installCrds, liqoCrds, shadowSlice,
  startLiqoWriter, type LiqoWriter, type ShadowSpec,
} from './support/liqo.ts';
import { pathOf, selfPath, shippedManifests } from './support/objects.ts';
import { skipReason } from './support/skip.ts';
import { connectionPath, CONVERGE, FCC_PATH, HUB_WRITER, LIQO_MANAGER, SHADOWS, SLICES } from './support/world-paths.ts';

const CONNECTION_PATH = connectionPath('cluster3');
const SHORTCUT = 'liqo.io/shortcut-addresses';
const ORIGINAL = 'liqo.io/shortcut-original-addresses';
const WEBHOOK_NAME = 'endpointslices.shortcut-webhook.liqo.io';
/** How long Liqo's writer and our controller run side by side, watched, for a write neither should make. */
const QUIET_WINDOW_MS = 30_000;
/** The fault tests' --watch-timeout and --stale-view-after, in seconds: short, so that the bounds are met quickly. */
const FAULT_WATCH_TIMEOUT_S = 3;
const FAULT_STALE_S = 10;
/** The fault tests' --max-patches-per-second: a pass over a hundred slices lasts a second, so a kill lands inside it. */
const FAULT_PATCHES_PER_SECOND = 100;
/** The hub's outage: past the longest backoff (30 s) of every view source. */
const HUB_OUTAGE_MS = 35_000;
/** How long no version may be stored for the objects to count as settled (a pass and Liqo's re-applies take well under a second). */
const QUIET_MS = 3000;
const HUB_READER_ROLE = '/apis/rbac.authorization.k8s.io/v1/clusterroles/shortcut-webhook-hub-reader';

const skip = skipReason();

/** A slice written directly (where Liqo's writer is not the writer): no resourceVersion on a create. */
function direct(spec: SliceSpec): KubeObject {
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

/** An object less what the API server keeps for itself: what a write changed beyond bookkeeping. */
function withoutBookkeeping(object: KubeObject): KubeObject {
  const { managedFields: _fields, resourceVersion: _version, ...metadata } = object.metadata ?? {};
  return { ...object, metadata };
}

/** A stored slice less what the API server keeps for itself: what a write changed beyond bookkeeping. */
function contentOf(object: KubeObject): string {
  // List items come without apiVersion and kind; watch events with them.
  const { managedFields: _fields, resourceVersion: _version, generation: _generation, ...metadata } = object.metadata ?? {};
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return JSON.stringify({ ...rest, metadata });
}

/** The manager of an object's newest managedFields entry: who wrote this version. */
function lastManager(object: KubeObject): string | undefined {
  const entries = (object.metadata?.managedFields ?? []) as { manager?: string; time?: string }[];
  return [...entries].sort((a, b) => (a.time ?? '').localeCompare(b.time ?? '')).at(-1)?.manager;
}

function managersOf(object: KubeObject): string[] {
  return (object.metadata?.managedFields ?? []).map((entry) => {
    const { manager, operation } = entry as { manager: string; operation: string };
    return `${manager}/${operation}`;
  });
}

describe(`shortcut-webhook on real Kubernetes ${kubernetesVersion()} control planes with Liqo ${liqoVersion()}'s CRDs and writer`, { skip }, () => {
  let hub: ControlPlane;
  let leaf: ControlPlane;
  let canary: Canary;
  let admin: KubeClient;
  let hubAdmin: KubeClient;
  let writer: LiqoWriter | undefined;
  let webhook: RunningServer | undefined;
  let webhookPort: number;
  let tlsVolume: string;
  let serving: TestCerts;
  let webhookKubeconfig: string;
  let webhookToken: string;
  let hubReaderKubeconfig: string;
  let hubReaderToken: string;
  const started = Date.now();
  /** Temporary folders of this suite, removed at the end. */
  const made: string[] = [];
  const certs = (namespace?: string) => {
    const pair = makeCerts(undefined, namespace);
    made.push(pair.dir);
    return pair;
  };
  let writerRuns = 0;
  const startWriter = () => {
    writer = startLiqoWriter(leaf.adminKubeconfig, join(made[0]!, `liqo-writer-${++writerRuns}.log`));
    return writer;
  };

  const slice = (name: string) => admin.get(`${SLICES}/${name}`);
  /** Writes a ShadowEndpointSlice into the leaf as the hub's virtual kubelet does: the whole object, every time. */
  const putShadow = (spec: ShadowSpec) => admin.apply(`${SHADOWS}/${spec.name}`, shadowSlice(spec), HUB_WRITER, true);
  const storedAddresses = async (name: string) => addressesOf(await slice(name));
  const untilStored = (name: string, addresses: string, what: string) =>
    waitFor(async () => {
      const stored = await slice(name);
      return addressesOf(stored) === addresses ? stored : undefined;
    }, { ...CONVERGE, description: what });
  /** A watch delivers a write some time after a GET shows it: waits until the watch has seen the version stored now. */
  const untilWatched = async (events: readonly WatchEvent[], name: string) => {
    const version = (await slice(name)).metadata?.resourceVersion;
    await waitFor(() => events.some((e) => e.object.metadata?.name === name && e.object.metadata?.resourceVersion === version),
      { ...CONVERGE, description: `the watch saw ${name} as it is stored now` });
  };
  const setFccStatus = (status: Record<string, unknown>) =>
    hubAdmin.ok('PATCH', `${FCC_PATH}/cluster2-cluster3/status`, { status }, { contentType: 'application/merge-patch+json' });
  /** The leaf's view of cluster3's pods (its Configuration's status.remote.cidr.pod), where a shortcut's target must lie. */
  const setPeerView = (pod: readonly string[]) =>
    admin.ok('PATCH', '/apis/networking.liqo.io/v1beta1/namespaces/liqo-tenant-cluster3/configurations/cluster3/status',
      { status: { remote: { cidr: { pod } } } }, { contentType: 'application/merge-patch+json' });
  const setTunnel = (value: string) =>
    admin.ok('PATCH', `${CONNECTION_PATH}/status`, { status: { value } }, { contentType: 'application/merge-patch+json' });
  /** kube-apiserver's own count of writes it let through when calling our webhook failed (failurePolicy Ignore). */
  const failOpenCount = async () => {
    const text = (await admin.request('GET', '/metrics')).text;
    return text.split('\n').filter((line) => line.startsWith('apiserver_admission_webhook_fail_open_count{') && line.includes(`name="${WEBHOOK_NAME}"`))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  };
  const startWebhook = async (extra: readonly string[] = []) => {
    webhook = await startServer(['--port', String(webhookPort), '--tls-cert', join(tlsVolume, 'tls.crt'), '--tls-key', join(tlsVolume, 'tls.key'),
      '--kubeconfig', webhookKubeconfig, '--shortcuts-kubeconfig', hubReaderKubeconfig, '--resync-interval', '0', ...extra],
    { POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'webhook-0' });
    const running = webhook;
    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { ...CONVERGE, description: 'the webhook is ready' });
    return running;
  };
  const setCaBundle = async (ca: Buffer) => {
    await admin.ok('PATCH', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/shortcut-webhook',
      [0, 1].map((i) => ({ op: 'replace', path: `/webhooks/${i}/clientConfig/caBundle`, value: ca.toString('base64') })), { contentType: 'application/json-patch+json' });
    await canary.configurationsSeen();
  };
  /**
   * A request answered as the API server answers it once it takes the caller's requests: a 429 (a young API
   * server's priority and fairness not yet configured for a new identity) is retried, as client-go retries it.
   */
  const settled = (client: KubeClient, method: string, path: string) =>
    waitFor(async () => {
      const answer = await client.request(method, path);
      return answer.status === 429 ? undefined : answer;
    }, { ...CONVERGE, description: `${method} ${path} answered other than 429` });
  /**
   * Log records of a refusal: 'forbidden', 'refuses', or a 403 as a status or code ('HTTP 403', '(403)'). Not any
   * 403 in a record: a duration of 0.403 ms or a port of 40397 is none.
   */
  const refusedInLog = (running: RunningServer) => logRecords(running).filter((r) => {
    const text = JSON.stringify(r);
    return /forbidden|refuse/i.test(text) || /\b(?:HTTP|status|statusCode|code)\W{0,3}403\b/i.test(text) || /\(403\)/.test(text);
  });


  /**
   * Every stored version of the demo slices from now on, as the API server's watch sends them: not only the last. A
   * watch that ends (its API server restarted) is opened again from the last version seen; where that history is
   * gone (410), the slices are listed (each listed version recorded too) and `gaps` says so.
   */
  const recordVersions = async (path: string = SLICES) => {
    const versions: { type: string; name: string; addresses: string; resourceVersion: string; at: number; annotations?: Record<string, unknown>; managers?: string[] }[] = [];
    let gaps = 0;
    let stopped = false;
    let current: { stop(): void; ended: Promise<void> } | undefined;
    const listed = async () => {
      const list = await admin.get<{ metadata: { resourceVersion: string }; items: KubeObject[] }>(path);
      return list.metadata.resourceVersion;
    };
    let version = await listed();
    const open = async (): Promise<void> => {
      let expired = false;
      current = await admin.watch(path, version, (event) => {
        if (event.type === 'ERROR') {
          expired = (event.object as { code?: number }).code === 410;
          return;
        }
        version = event.object.metadata?.resourceVersion ?? version;
        if (event.type !== 'BOOKMARK') {
          versions.push({
            type: event.type, name: event.object.metadata?.name ?? '', addresses: addressesOf(event.object), resourceVersion: version, at: Date.now(),
            // What a failure names beside the addresses: which annotations the version stored, and who wrote it.
            annotations: annotationsOf(event.object), managers: managersOf(event.object),
          });
        }
      });
      void current.ended.then(async () => {
        if (stopped) return;
        if (expired) {
          gaps++;
          const list = await waitFor(async () => {
            try {
              return await admin.get<{ metadata: { resourceVersion: string }; items: KubeObject[] }>(path);
            } catch {
              return undefined;
            }
          }, { timeoutMs: 120_000, intervalMs: 100, description: 'the slices listed again' });
          for (const item of list.items) versions.push({ type: 'LISTED', name: item.metadata?.name ?? '', addresses: addressesOf(item), resourceVersion: item.metadata?.resourceVersion ?? '', at: Date.now() });
          version = list.metadata.resourceVersion;
        }
        await waitFor(async () => {
          if (stopped) return true;
          try {
            await open();
            return true;
          } catch {
            return false; // The API server is not back yet.
          }
        }, { timeoutMs: 120_000, intervalMs: 100, description: 'the slices watched again' });
      });
    };
    await open();
    return {
      versions,
      gaps: () => gaps,
      /** Waits until the watch has delivered the version of `name` a GET shows now (a watch lags behind a GET). */
      caughtUp: async (name: string) => {
        const stored = (await slice(name)).metadata?.resourceVersion;
        await waitFor(() => versions.some((v) => v.name === name && v.resourceVersion === stored), { ...CONVERGE, description: `the recorder saw ${name} as it is stored now` });
      },
      stop: () => {
        stopped = true;
        current?.stop();
      },
    };
  };
  /** The healing watch's `healing_events_total` for EndpointSlices handled so (`passed-over`, `planned`). */
  const healingEvents = async (running: RunningServer, handling: string) => {
    const { text } = await opsGet(running, '/metrics');
    const line = text.split('\n').find((l) => l.startsWith('shortcut_webhook_healing_events_total{') && l.includes('resource="endpointslices"') && l.includes(`handling="${handling}"`));
    return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? Number.NaN);
  };
  /** Each demo slice's addresses, by name. */
  const allAddresses = async () => new Map((await admin.get<{ items: KubeObject[] }>(SLICES)).items.map((item) => [item.metadata?.name ?? '', addressesOf(item)]));
  /** What restoring every address from the slice's originals annotation gives: each slice with no shortcut at all. */
  const restoredAddresses = async () => new Map((await admin.get<{ items: KubeObject[] }>(SLICES)).items.map((item) => {
    const originals = JSON.parse(annotationsOf(item)[ORIGINAL] ?? '{}') as Record<string, string>;
    const endpoints = (item.endpoints ?? []) as { addresses: string[] }[];
    return [item.metadata?.name ?? '', JSON.stringify(endpoints.map((endpoint) => endpoint.addresses.map((a) => originals[a] ?? a)))];
  }));
  const untilAll = (want: ReadonlyMap<string, string>, what: string, timeoutMs = 90_000) =>
    waitFor(async () => {
      const stored = await allAddresses();
      return [...want].every(([name, addresses]) => stored.get(name) === addresses);
    }, { timeoutMs, intervalMs: 100, description: what });

  before(async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'shortcut-e2e-logs-'));
    made.push(logDir);
    const writerBuild = buildLiqoWriter();
    process.stdout.write(`# liqo-writer (Liqo ${liqoVersion()}): ${writerBuild.built ? `built in ${writerBuild.seconds} s` : 'cached'}, ${writerBuild.dir}\n`);
    [hub, leaf] = await Promise.all([startControlPlane(), startControlPlane()]);
    admin = leaf.admin;
    hubAdmin = hub.admin;
    process.stdout.write(`# kube-apiserver ${kubernetesVersion()}: hub ready ${hub.startupMs} ms, leaf ready ${leaf.startupMs} ms after start (certificates and etcd included)\n`);
    canary = await startCanary(admin, certs('canary'));
    // In the webhook configuration for the whole file, bound again on a restart: a port no listen on 0 can be handed.
    webhookPort = await freePortOutsideEphemeralRange();
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
    await writer?.stop();
    await canary?.close();
    await Promise.all([leaf?.stop(), hub?.stop()]);
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
    process.stdout.write(`# e2e suite took ${Date.now() - started} ms\n`);
  });

  test('Liqo\'s CRDs install on both clusters, manifests/hub on the hub, and the shipped manifests on the leaf as they are', async () => {
    const crds = liqoCrds();
    assert.deepEqual(crds.map((crd) => crd.metadata?.name), ['foreignclusters.core.liqo.io', 'ips.ipam.liqo.io',
      'configurations.networking.liqo.io', 'connections.networking.liqo.io', 'shadowendpointslices.offloading.liqo.io']);
    for (const name of ['demo', 'liqo', 'liqo-tenant-cluster1', 'liqo-tenant-cluster3']) {
      await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    for (const name of ['demo', 'liqo', 'liqo-tenant-cluster2', 'liqo-tenant-cluster3']) {
      await hubAdmin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    // Liqo is there before the webhook, on both clusters; the shortcut operator's FCC CRD (ours serves the same API)
    // is on the hub, where the operator keeps its FCCs.
    await Promise.all([installCrds(admin, crds), installCrds(hubAdmin, [...crds, ...shippedManifests().filter((o) => o.kind === 'CustomResourceDefinition')])]);

    const shipped = shippedManifests();
    assert.deepEqual(shipped.map((o) => o.kind), ['CustomResourceDefinition', 'Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding',
      'Role', 'RoleBinding', 'Service', 'Deployment', 'PodDisruptionBudget', 'MutatingWebhookConfiguration']);
    for (const object of shipped) {
      if (object.kind === 'MutatingWebhookConfiguration') {
        const webhooks = object.webhooks as { clientConfig: { service: { path: string } } | Record<string, unknown> }[];
        // EndpointSlices, and Liqo's ShadowEndpointSlices (the direct connections): each to its own path of the process.
        assert.deepEqual(webhooks.map((hook) => (hook.clientConfig as { service: { path: string } }).service.path),
          ['/mutate/endpointslices', '/mutate/shadowendpointslices']);
        for (const hook of webhooks) {
          const { path } = (hook.clientConfig as { service: { path: string } }).service;
          hook.clientConfig = { url: `https://127.0.0.1:${webhookPort}${path}`, caBundle: serving.ca.toString('base64') };
        }
      }
      const answer = await admin.request('POST', pathOf(object), object);
      assert.equal(answer.status, 201, `${object.kind} ${object.metadata?.name}: ${answer.text}`);
      // Pod Security (the namespace enforces `restricted`) and deprecated fields would say so here.
      assert.deepEqual(answer.warnings, [], `${object.kind} ${object.metadata?.name} created without warnings`);
    }
    for (const object of shippedManifests('hub')) {
      const answer = await hubAdmin.request('POST', pathOf(object), object);
      assert.equal(answer.status, 201, `hub: ${object.kind} ${object.metadata?.name}: ${answer.text}`);
      assert.deepEqual(answer.warnings, [], `hub: ${object.kind} ${object.metadata?.name} created without warnings`);
    }
    await waitFor(async () => {
      const stored = await admin.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foreignclusterconnections.networking.liqo.io');
      return stored.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { ...CONVERGE, description: 'the FCC CRD established on the leaf' });
    await canary.configurationsSeen();
  });

  test('the webhook runs on the leaf with the shipped ServiceAccount and on the hub with the hub reader: each enough, each refused the rest', async () => {
    // The hub reader's Secret waits for kube-controller-manager's token controller, which does not run here: a
    // TokenRequest for the same ServiceAccount stands in for it.
    const readerToken = await hubAdmin.ok<{ status: { token: string } }>('POST',
      '/api/v1/namespaces/shortcut-webhook/serviceaccounts/shortcut-webhook-reader/token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    hubReaderToken = readerToken.status.token;
    hubReaderKubeconfig = hub.writeTokenKubeconfig('hub-reader', hubReaderToken);
    const reader = new KubeClient(hub.url, hub.ca, { token: readerToken.status.token });
    try {
      // What the shipped ClusterRole grants, the reader may list and watch in every namespace, but not get by name:
      // list and watch are all the webhook uses.
      const role = shippedManifests('hub').find((o) => o.kind === 'ClusterRole');
      const rules = (role?.rules ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
      // FCCs, and for the stock-Liqo path the hub's IPs and Configurations: enough, as the webhook's log shows below.
      assert.deepEqual(rules.flatMap((rule) => rule.resources).sort(), ['configurations', 'foreignclusterconnections', 'ips']);
      const versions: Record<string, string> = { 'networking.liqo.io': 'v1beta1', 'ipam.liqo.io': 'v1alpha1' };
      for (const rule of rules) {
        assert.deepEqual([...rule.verbs].sort(), ['list', 'watch'], `the hub reader's rule for ${rule.resources.join()} is list/watch only`);
        for (const group of rule.apiGroups) {
          for (const resource of rule.resources) {
            const collection = `/apis/${group}/${versions[group] ?? 'v1'}/${resource}`;
            assert.equal((await settled(reader, 'GET', collection)).status, 200, `the hub reader lists ${resource}`);
            const watch = await settled(reader, 'GET', `${collection}?watch=1&timeoutSeconds=1`);
            assert.equal(watch.status, 200, `the hub reader watches ${resource}`);
            assert.equal((await settled(reader, 'GET', `/apis/${group}/${versions[group] ?? 'v1'}/namespaces/liqo/${resource}/anything`)).status, 403,
              `the hub reader may not get one ${resource} by name`);
          }
        }
      }
      for (const path of [SLICES, SHADOWS, '/api/v1/namespaces/shortcut-webhook/secrets', '/api/v1/pods',
        '/apis/core.liqo.io/v1beta1/foreignclusters', '/apis/networking.liqo.io/v1beta1/connections']) {
        assert.equal((await settled(reader, 'GET', path)).status, 403, `the hub reader may not read ${path}`);
      }
    } finally {
      reader.close();
    }

    const request = await admin.ok<{ status: { token: string } }>('POST',
      '/api/v1/namespaces/shortcut-webhook/serviceaccounts/shortcut-webhook/token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    webhookToken = request.status.token;
    webhookKubeconfig = leaf.writeTokenKubeconfig('shortcut-webhook', webhookToken);
    const running = await startWebhook();
    // The view synced (FCCs listed and watched), and the controller took the Lease: list, watch, get, create allowed.
    const lease = await waitFor(async () => {
      const answer = await admin.request<KubeObject>('GET', '/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/shortcut-webhook-controller');
      return answer.status === 200 && (answer.body.spec as { holderIdentity?: string }).holderIdentity === 'webhook-0' ? answer.body : undefined;
    }, { ...CONVERGE, description: 'the controller holds its Lease' });
    const renewed = lease.metadata?.resourceVersion;
    await waitFor(async () => (await admin.get('/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/shortcut-webhook-controller'))
      .metadata?.resourceVersion !== renewed, { ...CONVERGE, description: 'the Lease is renewed (update allowed)' });

    const asWebhook = new KubeClient(leaf.url, leaf.ca, { token: webhookToken });
    try {
      const whoami = await asWebhook.ok<{ status: { userInfo: { username: string } } }>('POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
      assert.equal(whoami.status.userInfo.username, 'system:serviceaccount:shortcut-webhook:shortcut-webhook');
      for (const [method, path, body] of [
        ['GET', '/api/v1/namespaces/shortcut-webhook/secrets', undefined],
        ['GET', '/api/v1/secrets', undefined],
        ['GET', '/api/v1/namespaces/shortcut-webhook/configmaps', undefined],
        ['POST', SLICES, direct({ name: 'not-allowed' })],
        ['DELETE', `${SLICES}/anything`, undefined],
        ['POST', SHADOWS, shadowSlice({ name: 'not-allowed' })],
        ['DELETE', `${SHADOWS}/anything`, undefined],
        ['PATCH', `${FCC_PATH}/anything`, {}],
        ['GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/shortcut-webhook-controller', undefined],
        ['GET', '/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/someone-else', undefined],
      ] as const) {
        const answer = await asWebhook.request(method, path, body, method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {});
        assert.equal(answer.status, 403, `${method} ${path} is forbidden: ${answer.text}`);
      }
      assert.equal((await asWebhook.request('GET', `${SLICES}?limit=1`)).status, 200);
      // The controller's shadow pass (Liqo's direct connections) lists, watches, gets and patches shadows: nothing more.
      assert.equal((await asWebhook.request('GET', `${SHADOWS}?limit=1`)).status, 200);
      assert.equal((await asWebhook.request('GET', `${SHADOWS}/anything`)).status, 404);
    } finally {
      asWebhook.close();
    }
    assert.deepEqual(refusedInLog(running), [], 'the webhook was never refused anything it does, on the leaf or on the hub');
  });

  test('Liqo\'s writer materialises a ShadowEndpointSlice through the webhook: stored rewritten, and its re-applies store nothing', async () => {
    // Liqo's networking on the leaf: the hub's ForeignCluster, the leaf's Configurations for the hub and for the peer
    // leaf, and its Connection to the peer. The writer maps the hub's addresses with the Configuration for the hub
    // (10.63/16 is in none of its CIDRs: unchanged; 10.200/16 the hub's pods, unremapped).
    const hubCluster = foreignCluster('cluster1');
    await createWithStatus(admin, hubCluster.object, hubCluster.status);
    await createConfiguration(admin, { peer: 'cluster1' });
    await createConfiguration(admin, { peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.73.0.0/16' });
    await createConnection(admin, 'cluster3', 'Connected');
    // On the hub, as the shortcut operator writes it: spec and status in one create; status through the status
    // subresource afterwards.
    const fcc = fccObject() as KubeObject;
    const created = await hubAdmin.ok('POST', FCC_PATH, fcc);
    assert.equal(created.status, undefined, 'the status of a create is dropped by the status subresource');
    await setFccStatus(fcc.status as Record<string, unknown>);
    await waitFor(async () => (await usablePairs(webhook!)).includes('liqo/cluster2-cluster3:10.63.0.0/16->10.61.0.0/16'),
      { ...CONVERGE, description: 'the webhook uses the shortcut read on the hub' });
    startWriter();

    const list = await admin.get<{ metadata: { resourceVersion: string } }>(SLICES);
    const events: WatchEvent[] = [];
    const watch = await admin.watch(SLICES, list.metadata.resourceVersion, (event) => events.push(event));
    try {
      const input = { name: 'web-applied', addresses: [['10.63.0.151'], ['10.200.0.196']] } as const;
      await putShadow(input);
      const first = await untilStored('web-applied', '[["10.61.0.151"],["10.200.0.196"]]', 'the writer\'s slice stored rewritten');
      assert.deepEqual(annotationsOf(first), { [SHORTCUT]: '10.61.0.151', [ORIGINAL]: '{"10.61.0.151":"10.63.0.151"}' });
      // The writer creates the slice, then server-side-applies it again on the create event of the slice it owns. That
      // first apply stores once: Liqo's create was an Update, and its apply adds an Apply entry to managedFields;
      // nothing else changes, the webhook's rewrite of the apply being the stored one.
      await waitFor(() => writer!.writes('demo/web-applied') >= 2, { ...CONVERGE, description: 'the writer created and re-applied the slice' });
      const settledSlice = await waitFor(() => {
        const seen = events.filter((e) => e.object.metadata?.name === 'web-applied');
        return seen.length === 2 ? seen : undefined;
      }, { ...CONVERGE, description: 'the watch saw the create and the first apply' });
      assert.deepEqual(settledSlice.map((e) => e.type), ['ADDED', 'MODIFIED']);
      assert.deepEqual(withoutBookkeeping(settledSlice[1]!.object), withoutBookkeeping(settledSlice[0]!.object), 'the first apply changed only managedFields');
      // Each reconcile re-applies the whole slice: a finalizer on the shadow (a change the slice does not carry)
      // makes two more.
      const shadowPath = `${SHADOWS}/web-applied`;
      await admin.ok('PATCH', shadowPath, { metadata: { finalizers: ['e2e.shortcut-webhook.liqo.io/touch'] } }, { contentType: 'application/merge-patch+json' });
      await admin.ok('PATCH', shadowPath, { metadata: { finalizers: null } }, { contentType: 'application/merge-patch+json' });
      await waitFor(() => writer!.writes('demo/web-applied') >= 4, { ...CONVERGE, description: 'the writer re-applied the slice twice more' });
      const again = await slice('web-applied');
      assert.equal(again.metadata?.resourceVersion, settledSlice[1]!.object.metadata?.resourceVersion, 're-applying the same input stores nothing new');
      assert.equal(events.filter((e) => e.object.metadata?.name === 'web-applied').length, 2);
      // What the webhook added is owned by no field manager: the writer's entries list only what Liqo sent, so its
      // later applies without the annotations leave them alone.
      assert.deepEqual(managersOf(again), [`${LIQO_MANAGER}/Apply`, `${LIQO_MANAGER}/Update`]);
      assert.doesNotMatch(JSON.stringify(again.metadata?.managedFields), /f:annotations/);

      await putShadow({ ...input, ports: [{ name: 'http', port: 8081, protocol: 'TCP' }] });
      const changed = await waitFor(async () => {
        const stored = await slice('web-applied');
        return (stored.ports as { port: number }[])[0]?.port === 8081 ? stored : undefined;
      }, { ...CONVERGE, description: 'the writer applied the new port' });
      assert.equal(addressesOf(changed), '[["10.61.0.151"],["10.200.0.196"]]');
      assert.deepEqual(annotationsOf(changed), annotationsOf(first), 'the annotations survive a later apply');
    } finally {
      watch.stop();
    }
  });

  test('the controller converges the writer\'s slices on connect, disconnect, CIDR change, tunnel down and delete, writing only what differs', async () => {
    const running = webhook!;
    await putShadow({ name: 'mixed', addresses: [['10.63.0.1', '10.63.0.2'], ['10.200.0.1']] });
    await putShadow({ name: 'hub-only', addresses: [['10.200.0.5']] });
    await putShadow({ name: 'elsewhere', destination: 'cluster4', addresses: [['10.63.0.4']] });
    // A slice of the leaf's own Kubernetes EndpointSlice controller, which Liqo's writer never makes: written here.
    await admin.ok('POST', SLICES, direct({ name: 'not-reflected', managedBy: 'endpointslice-controller.k8s.io', addresses: [['10.63.0.3']] }));
    await untilStored('mixed', '[["10.61.0.1","10.61.0.2"],["10.200.0.1"]]', 'the create itself is rewritten');
    await untilStored('hub-only', '[["10.200.0.5"]]', 'the hub-only slice is stored');
    await untilStored('elsewhere', '[["10.63.0.4"]]', 'the slice for another cluster is stored as sent');
    // Every slice the writer made has been re-applied after its create before the watch starts.
    for (const name of ['mixed', 'hub-only', 'elsewhere']) {
      await waitFor(() => writer!.writes(`demo/${name}`) >= 2, { ...CONVERGE, description: `the writer re-applied ${name}` });
    }

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

      // A target must lie in the leaf's own view of the peer (target-mismatch): the shortcut remapped, as `liqoctl
      // network connect` records it in the leaf's Configuration for cluster3, and the FCC says so.
      // The view covers both targets while the FCC moves, so that no state between is stored (an FCC whose target
      // the view does not cover is target-mismatch, restored); then the view is the new target's alone.
      await setPeerView(['10.61.0.0/16', '10.62.0.0/16']);
      await setFccStatus({ foreignClusterANetworking: { podCIDR: '10.63.0.0/16', remappedPodCIDR: '10.62.0.0/16' } });
      await expectEverywhere('[["10.62.0.151"],["10.200.0.196"]]', '[["10.62.0.1","10.62.0.2"],["10.200.0.1"]]', 'moved on a CIDR change');
      assert.deepEqual(annotationsOf(await slice('mixed')), { [SHORTCUT]: '10.62.0.1,10.62.0.2', [ORIGINAL]: '{"10.62.0.1":"10.63.0.1","10.62.0.2":"10.63.0.2"}' });

      // Liqo's Connection says `Error` when the tunnel is down (connection_types.go ConnectionError).
      await setTunnel('Error');
      await expectEverywhere('[["10.63.0.151"],["10.200.0.196"]]', '[["10.63.0.1","10.63.0.2"],["10.200.0.1"]]', 'restored when the tunnel is down');
      await setTunnel('Connected');
      await expectEverywhere('[["10.62.0.151"],["10.200.0.196"]]', '[["10.62.0.1","10.62.0.2"],["10.200.0.1"]]', 'rewritten when the tunnel is up');

      await hubAdmin.ok('DELETE', `${FCC_PATH}/cluster2-cluster3`);
      await expectEverywhere('[["10.63.0.151"],["10.200.0.196"]]', '[["10.63.0.1","10.63.0.2"],["10.200.0.1"]]', 'restored on delete');
      await setPeerView(['10.61.0.0/16']);
      for (const name of ['web-applied', 'mixed']) await untilWatched(events, name);

      // Six changes. Each moves the two slices of cluster2 once, through one of two writers: our controller, or Liqo's
      // writer re-applying the slice (after a write of ours) when the webhook already has the new view. Liqo's forced
      // apply after each of our writes takes back the fields we wrote (f:endpoints): a second stored write that
      // changes managedFields only. Nothing else moves.
      const states = {
        'web-applied': ['10.63.0.151', '10.61.0.151', '10.62.0.151', '10.63.0.151', '10.62.0.151', '10.63.0.151'],
        mixed: ['10.63.0.1', '10.61.0.1', '10.62.0.1', '10.63.0.1', '10.62.0.1', '10.63.0.1'],
      };
      const patched = await metricValue(running, 'shortcut_webhook_slices_reconciled_total{result="patched"}') - patchedBefore;
      const modified = events.filter((e) => e.type === 'MODIFIED');
      process.stdout.write(`# six changes: ${patched} writes of our controller, ${modified.length} stored slice writes\n`);
      assert.ok(patched >= 6 && patched <= 12, `our controller wrote each change at most once per slice (${patched})`);
      assert.deepEqual([...new Set(modified.map((e) => e.object.metadata?.name))].sort(), ['mixed', 'web-applied'],
        'only the two reflected slices of cluster2 were written');
      for (const [name, expected] of Object.entries(states)) {
        const mine = modified.filter((e) => e.object.metadata?.name === name);
        const firsts = mine.map((e) => (e.object.endpoints as { addresses: string[] }[])[0]!.addresses[0]);
        // The states it went through, each kept for one write or two: never a state it should not have had.
        assert.deepEqual(firsts.filter((address, i) => address !== firsts[i - 1]), expected, `${name} went through the six states and no other`);
        assert.ok(mine.length <= 12, `${name}: at most two stored writes per change (${mine.length})`);
        for (let i = 1; i < mine.length; i++) {
          const [previous, next] = [mine[i - 1]!.object, mine[i]!.object];
          if (addressesOf(previous) === addressesOf(next)) {
            assert.deepEqual(withoutBookkeeping(next), withoutBookkeeping(previous), `${name}: a write that kept the addresses changed managedFields only`);
          }
        }
        const managers = managersOf(mine.at(-1)!.object);
        assert.ok(managers.every((m) => m.startsWith(`${LIQO_MANAGER}/`) || m === 'shortcut-webhook/Update'),
          `${name}: written by Liqo's writer and our controller only: ${managers.join()}`);
      }
      assert.deepEqual(events.filter((e) => e.type !== 'MODIFIED' && e.type !== 'BOOKMARK'), []);
      assert.equal(await storedAddresses('not-reflected'), '[["10.63.0.3"]]');
      assert.equal(await storedAddresses('elsewhere'), '[["10.63.0.4"]]');
      const passes = logRecords(running).filter((r) => r.msg === 'reconcile pass done');
      assert.deepEqual(passes.filter((p) => p.conflict !== 0 || p.error !== 0 || p.gone !== 0), [], `no pass met a conflict or an error: ${
        JSON.stringify(logRecords(running).filter((r) => r.level === 'warn' || r.level === 'error'))}`);
    } finally {
      watch.stop();
    }
  });

  test('with the webhook stopped the writer\'s writes succeed unrewritten; started again, the controller repairs them; dry runs store nothing', async () => {
    const reapplies = () => ['demo/mixed', 'demo/web-applied'].map((name) => writer!.writes(name));
    const reappliesBefore = reapplies();
    await hubAdmin.ok('POST', FCC_PATH, fccObject());
    await setFccStatus(fccObject().status as Record<string, unknown>);
    await untilStored('mixed', '[["10.61.0.1","10.61.0.2"],["10.200.0.1"]]', 'rewritten after the FCC is back');
    await untilStored('web-applied', '[["10.61.0.151"],["10.200.0.196"]]', 'rewritten after the FCC is back');
    // Liqo's writer applies each slice again after our controller's write: over before the webhook stops, so that
    // the API server's fail-open count below is the writer's writes while it is down, and no other.
    await waitFor(() => reapplies().every((writes, i) => writes > reappliesBefore[i]!), { ...CONVERGE, description: 'Liqo\'s writer re-applied both slices' });
    const failOpenBefore = await failOpenCount();

    const stopping = webhook!;
    stopping.child.kill('SIGTERM');
    assert.equal(await exitWithin(stopping, 20_000), 0);
    const lease = await admin.get('/apis/coordination.k8s.io/v1/namespaces/shortcut-webhook/leases/shortcut-webhook-controller');
    assert.equal((lease.spec as { holderIdentity?: string }).holderIdentity, undefined, 'the Lease is released on shutdown');
    const writesBefore = writer!.writes();
    await putShadow({ name: 'while-down', addresses: [['10.63.0.7']] });
    await untilStored('while-down', '[["10.63.0.7"]]', 'failurePolicy Ignore: the writer\'s create succeeds as sent');
    await putShadow({ name: 'web-applied', addresses: [['10.63.0.151'], ['10.200.0.196']], ports: [{ name: 'http', port: 8082, protocol: 'TCP' }] });
    const reapplied = await waitFor(async () => {
      const stored = await slice('web-applied');
      return (stored.ports as { port: number }[])[0]?.port === 8082 ? stored : undefined;
    }, { ...CONVERGE, description: 'the writer applied the new port' });
    assert.equal(addressesOf(reapplied), '[["10.63.0.151"],["10.200.0.196"]]', 'the apply stores Liqo\'s addresses as sent');
    // Every write the writer made meanwhile went to the API server, which failed open on each.
    await waitFor(async () => writer!.writes() - writesBefore >= 3 && await failOpenCount() - failOpenBefore === writer!.writes() - writesBefore,
      { ...CONVERGE, description: 'the API server counts each of the writer\'s writes as failed open' });

    await startWebhook();
    await untilStored('while-down', '[["10.61.0.7"]]', 'repaired by the controller after the restart');
    await untilStored('web-applied', '[["10.61.0.151"],["10.200.0.196"]]', 'repaired by the controller after the restart');
    const failOpenAfterRestart = await failOpenCount();

    // Liqo never reflects into the webhook's own namespace; a slice written there directly shows the namespaceSelector.
    const own = await admin.ok('POST', '/apis/discovery.k8s.io/v1/namespaces/shortcut-webhook/endpointslices',
      direct({ name: 'own-namespace', namespace: 'shortcut-webhook', addresses: [['10.63.0.9']] }));
    assert.equal(addressesOf(own), '[["10.63.0.9"]]', 'the namespaceSelector keeps the webhook out of its own namespace');

    // Liqo's writer never dry-runs: what a client asking for a dry run (kubectl --dry-run=server) gets, written here.
    const dry = await admin.ok('POST', `${SLICES}?dryRun=All`, direct({ name: 'dry-run', addresses: [['10.63.0.8']] }));
    assert.equal(addressesOf(dry), '[["10.61.0.8"]]', 'a dry run comes back rewritten');
    assert.deepEqual(annotationsOf(dry), { [SHORTCUT]: '10.61.0.8', [ORIGINAL]: '{"10.61.0.8":"10.63.0.8"}' });
    assert.equal((await admin.request('GET', `${SLICES}/dry-run`)).status, 404, 'and stores nothing');
    const dryApply = await admin.apply(`${SLICES}/web-applied`, { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'web-applied' },
      addressType: 'IPv4', endpoints: [{ addresses: ['10.63.0.152'] }, { addresses: ['10.200.0.196'] }] }, LIQO_MANAGER, true, '&dryRun=All');
    assert.equal(addressesOf(dryApply), '[["10.61.0.152"],["10.200.0.196"]]');
    assert.equal(await storedAddresses('web-applied'), '[["10.61.0.151"],["10.200.0.196"]]');
    assert.equal(await failOpenCount(), failOpenAfterRestart, 'no call failed since the restart');
  });

  test('the serving certificate and caBundle rotate with no write of the writer left unrewritten across the swap', async () => {
    const running = webhook!;
    const failOpenBefore = await failOpenCount();
    const next = certs('shortcut-webhook');
    let writes = 0;
    let stop = false;
    const wrong: string[] = [];
    const loop = (async () => {
      while (!stop) {
        const name = `rotation-${writes}`;
        await putShadow({ name, addresses: [['10.63.1.1']] });
        // The slice as first stored: the writer's create, through the webhook.
        const stored = await waitFor(async () => {
          const answer = await admin.request<KubeObject>('GET', `${SLICES}/${name}`);
          return answer.status === 200 ? answer.body : undefined;
        }, { ...CONVERGE, description: `the writer created ${name}` });
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
      await loop;
    }
    assert.deepEqual(wrong, []);
    assert.ok(writes >= 12);
    assert.equal(await failOpenCount(), failOpenBefore, 'no call to the webhook failed');
    serving = next;
  });

  test('a reflected slice without endpoints is reviewed like any other, not failed open', async () => {
    const failOpenBefore = await failOpenCount();
    await putShadow({ name: 'no-endpoints', addresses: [] });
    const empty = await waitFor(async () => {
      const answer = await admin.request<KubeObject>('GET', `${SLICES}/no-endpoints`);
      return answer.status === 200 ? answer.body : undefined;
    }, { ...CONVERGE, description: 'the writer created the empty slice' });
    assert.equal(empty.endpoints ?? null, null, 'kube-apiserver stores and sends an empty list as null');
    await putShadow({ name: 'no-endpoints', addresses: [['10.63.0.77']] });
    await untilStored('no-endpoints', '[["10.61.0.77"]]', 'the writer\'s apply of an endpoint is rewritten');
    await putShadow({ name: 'no-endpoints', addresses: [] });
    const emptied = await untilStored('no-endpoints', '[]', 'the writer\'s apply without endpoints');
    assert.equal(emptied.endpoints ?? null, null);
    assert.deepEqual(annotationsOf(emptied), {}, 'no flag is left on a slice without addresses');
    assert.equal(await failOpenCount(), failOpenBefore, 'the webhook answered every review');
  });

  test('every patch was applied by the API server and every stored slice is valid, a slice of 1,000 endpoints included', async () => {
    const big = Array.from({ length: 1000 }, (_, i) => [`10.63.${i >> 8}.${i & 255}`]);
    await putShadow({ name: 'big', addresses: big });
    const want = JSON.stringify(big.map(([address]) => [address!.replace(/^10\.63\./, '10.61.')]));
    await untilStored('big', want, 'the writer\'s slice of 1,000 endpoints stored rewritten');
    // Liqo's writer creates the slice, then reconciles again on its own create and server-side-applies it: the same
    // content, a new version (its managedFields gain the apply). The round trip below needs the version that stays.
    await waitFor(() => writer!.writes('demo/big') >= 2, { ...CONVERGE, description: 'the writer created the slice and applied it once more' });
    const stored = await slice('big');
    assert.equal(addressesOf(stored), want);
    assert.equal(annotationsOf(stored)[SHORTCUT]?.split(',').length, 1000);
    // Written back as read: validation passes again and, nothing changing, nothing is stored.
    const roundTrip = await admin.ok('PUT', selfPath({ ...stored, apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' }), stored);
    assert.equal(roundTrip.metadata?.resourceVersion, stored.metadata?.resourceVersion);
    // An update: the review carries the 1,000 endpoints twice, object and oldObject; the hub moves one endpoint.
    const moved = big.map(([address], i) => [i === 999 ? '10.63.7.7' : address!]);
    await putShadow({ name: 'big', addresses: moved });
    await untilStored('big', JSON.stringify(moved.map(([address]) => [address!.replace(/^10\.63\./, '10.61.')])), 'the writer\'s apply of the move');

    const all = await admin.get<{ items: KubeObject[] }>(SLICES);
    for (const item of all.items) {
      const object = { ...item, apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' };
      assert.equal((await admin.request('PUT', selfPath(object), object)).status, 200);
    }

    // How kube-apiserver calls a webhook (the canary sees the same client as ours): HTTP/2, ?timeout= from timeoutSeconds.
    assert.ok(canary.calls.length > 0);
    for (const call of canary.calls) assert.deepEqual([call.httpVersion, call.query, call.contentType], ['2.0', '?timeout=5s', 'application/json']);
    const apiServerLog = readFileSync(leaf.apiServerLog, 'utf8');
    assert.doesNotMatch(apiServerLog, /failed to apply patch|JSONPatch|jsonpatch/i);
    const metrics = (await admin.request('GET', '/metrics')).text;
    assert.doesNotMatch(metrics, new RegExp(`apiserver_admission_webhook_rejection_count\\{[^}]*name="${WEBHOOK_NAME.replaceAll('.', '\\.')}"`));
    assert.deepEqual(admin.warnings, [], 'the API server warned about nothing we wrote');
    assert.doesNotMatch(writer!.log(), /^E\d{4}/m, 'Liqo\'s writer logged no error');
    const running = webhook!;
    const errors = logRecords(running).filter((r) => r.level === 'error' || r.level === 'fatal');
    assert.deepEqual(errors, []);
    assert.ok(!((await metricValue(running, 'shortcut_webhook_admission_requests_total{operation="UPDATE",result="error",resource="endpointslices"}')) > 0));
    assert.ok(!((await metricValue(running, 'shortcut_webhook_admission_requests_total{operation="CREATE",result="error",resource="endpointslices"}')) > 0));
    assert.ok(await metricValue(running, 'shortcut_webhook_admission_requests_total{operation="UPDATE",result="patched",resource="endpointslices"}') > 0);
  });

  test('stock Liqo: an address the hub\'s IPAM allocated is stored resolved into the leaf\'s direct network to the pod\'s cluster, and restored when that network goes', async () => {
    const running = webhook!;
    // The hub: its Configurations (its view of each leaf's pods: both leaves use 10.60/16, seen remapped) and the
    // IPAM record of an offloaded pod of cluster3, db-0 (10.60.0.17 on cluster3, 10.81.0.17 seen from the hub, given
    // 10.70.0.5 in the hub's external CIDR).
    await createConfiguration(hubAdmin, { peer: 'cluster2', localPod: '10.200.0.0/16', remotePod: '10.60.0.0/16', remotePodView: '10.80.0.0/16', remoteExternalView: '10.90.0.0/16' });
    await createConfiguration(hubAdmin, { peer: 'cluster3', localPod: '10.200.0.0/16', remotePod: '10.60.0.0/16', remotePodView: '10.81.0.0/16', remoteExternalView: '10.91.0.0/16' });
    await createHubIp(hubAdmin, { pod: 'db-0', ip: '10.81.0.17', allocated: '10.70.0.5' });
    await waitFor(async () => {
      const { hub: known } = await debugPairs(running);
      return known.known && known.ips === 1;
    }, { ...CONVERGE, description: 'the webhook knows the hub\'s IP' });

    // The hub's virtual kubelet reflects db-0 as its allocated address; Liqo's writer maps it through the leaf's
    // Configuration for the hub (external 10.70/16 seen at 10.71/16); the webhook resolves it: the IP, the hub's
    // Configuration for cluster3, the leaf's Configuration for cluster3 (10.60/16 seen at 10.61/16).
    await putShadow({ name: 'stock', addresses: [['10.70.0.5']], pods: ['db-0'] });
    const resolved = await untilStored('stock', '[["10.61.0.17"]]', 'the allocated address stored resolved to db-0 on cluster3');
    assert.deepEqual(annotationsOf(resolved), { [SHORTCUT]: '10.61.0.17', [ORIGINAL]: '{"10.61.0.17":"10.71.0.5"}' });
    // Its stored copy, as kube-apiserver writes it, comes back on the healing watch and is passed over unparsed: the
    // members the answer left (labels, annotations sorted, endpoints) are found verbatim in the watch's line.
    await waitFor(async () => (await healingEvents(running, 'passed-over')) > 0, { ...CONVERGE, description: 'the healing watch passed over the version the webhook answered' });

    // The direct network: while the leaf's Connection to cluster3 is not Connected, and while there is none.
    await setTunnel('Error');
    const down = await untilStored('stock', '[["10.71.0.5"]]', 'restored while the tunnel to cluster3 is down');
    assert.deepEqual(annotationsOf(down), {});
    await setTunnel('Connected');
    await untilStored('stock', '[["10.61.0.17"]]', 'resolved again when the tunnel is up');
    await admin.ok('DELETE', CONNECTION_PATH);
    await untilStored('stock', '[["10.71.0.5"]]', 'restored without a Connection to cluster3');
    const writesBeforeResolved = writer!.writes('demo/stock');
    await createConnection(admin, 'cluster3', 'Connected');
    await untilStored('stock', '[["10.61.0.17"]]', 'resolved again with a Connection to cluster3');
    // Liqo's writer applies its slice again after each write of ours (it owns the slice): that apply, which may move
    // the slice's managedFields and so store a version, is over before the versions below are recorded.
    await waitFor(() => writer!.writes('demo/stock') > writesBeforeResolved, { ...CONVERGE, description: 'the writer re-applied the resolved slice' });

    // Reallocation on the hub: db-0's IP goes, and its address is given to another pod, db-1 (10.81.0.99). The
    // shadow still names db-0 (the virtual kubelet keeps its translation): never db-0's old address, never db-1's.
    const list = await admin.get<{ metadata: { resourceVersion: string } }>(SLICES);
    const events: WatchEvent[] = [];
    const watch = await admin.watch(`${SLICES}?fieldSelector=metadata.name%3Dstock`, list.metadata.resourceVersion, (event) => events.push(event));
    try {
      await hubAdmin.ok('DELETE', '/apis/ipam.liqo.io/v1alpha1/namespaces/demo/ips/db-0');
      await untilStored('stock', '[["10.71.0.5"]]', 'restored when db-0\'s IP is gone');
      const passes = () => logRecords(running).filter((r) => r.msg === 'reconcile pass done').length;
      const passesBefore = passes();
      await createHubIp(hubAdmin, { pod: 'db-1', ip: '10.81.0.99', allocated: '10.70.0.5' });
      await waitFor(async () => {
        const { hub: known } = await debugPairs(running);
        return known.known && known.ips === 1 && passes() > passesBefore;
      }, { ...CONVERGE, description: 'the webhook knows db-1\'s IP and the controller passed over the slices' });
      // Liqo's writer re-applies the slice too (a finalizer on the shadow), through the webhook.
      const writes = writer!.writes('demo/stock');
      await admin.ok('PATCH', `${SHADOWS}/stock`, { metadata: { finalizers: ['e2e.shortcut-webhook.liqo.io/touch'] } }, { contentType: 'application/merge-patch+json' });
      await admin.ok('PATCH', `${SHADOWS}/stock`, { metadata: { finalizers: null } }, { contentType: 'application/merge-patch+json' });
      await waitFor(() => writer!.writes('demo/stock') >= writes + 2, { ...CONVERGE, description: 'the writer re-applied the slice' });
      assert.equal(await storedAddresses('stock'), '[["10.71.0.5"]]', 'the address given to db-1 is not resolved for db-0');
      await untilWatched(events, 'stock');
      // The watch began while db-0's IP was still there, and the last write before it need not be the last one with
      // db-0 resolved: every patch of our controller is followed by Liqo's writer re-applying the slice (it owns the
      // slice and sees it change), which moves managedFields and so stores a new version with the same addresses,
      // resolved again by the webhook while db-0's IP is in its view. So db-0's own address may come first; once the
      // slice is restored, never a pod again (db-1's address above all).
      const seen = events.filter((e) => e.type !== 'BOOKMARK').map((e) => addressesOf(e.object));
      const restoredAt = seen.indexOf('[["10.71.0.5"]]');
      assert.ok(restoredAt >= 0, `the restore is among the slice's changes: ${JSON.stringify(seen)}`);
      assert.deepEqual([...new Set(seen.slice(0, restoredAt))].filter((addresses) => addresses !== '[["10.61.0.17"]]'), [],
        `before the restore, only db-0's own resolved address: ${JSON.stringify(seen)}`);
      assert.deepEqual([...new Set(seen.slice(restoredAt))], ['[["10.71.0.5"]]'], 'once restored after db-0\'s IP deletion, the slice never pointed at a pod');

      // Once the hub reflects db-1 itself (its targetRef), the address resolves to it.
      await putShadow({ name: 'stock', addresses: [['10.70.0.5']], pods: ['db-1'] });
      await untilStored('stock', '[["10.61.0.99"]]', 'resolved to db-1 once the endpoint names it');
    } finally {
      watch.stop();
    }
    assert.deepEqual(refusedInLog(running), [], 'the hub reader read the hub\'s IPs and Configurations unrefused');
    assert.ok(await metricValue(running, 'shortcut_webhook_addresses_untouched_total{reason="no-hub-ip"}') > 0);
    assert.ok(await metricValue(running, 'shortcut_webhook_addresses_untouched_total{reason="tunnel-down"}') > 0);
    assert.ok(await metricValue(running, 'shortcut_webhook_addresses_untouched_total{reason="no-shortcut"}') > 0);
  });

  test('our controller and Liqo\'s writer never fight: with both running and both re-examining every slice, nothing is stored for 30 s', async () => {
    const running = webhook!;
    const shadows = (await admin.get<{ items: KubeObject[] }>(SHADOWS)).items.map((item) => item.metadata?.name);
    const list = await admin.get<{ metadata: { resourceVersion: string }; items: KubeObject[] }>(SLICES);
    const events: WatchEvent[] = [];
    const watch = await admin.watch(SLICES, list.metadata.resourceVersion, (event) => events.push(event));
    const passesBefore = logRecords(running).filter((r) => r.msg === 'reconcile pass done').length;
    const failOpenBefore = await failOpenCount();
    try {
      // Liqo's writer restarted re-applies every slice it owns (its initial list reconciles every shadow); a new FCC
      // on the hub, for other clusters, makes our controller re-examine every slice.
      await writer!.stop();
      const restarted = startWriter();
      await hubAdmin.ok('POST', FCC_PATH, fccObject({ a: 'cluster5', b: 'cluster6' }));
      await waitFor(() => restarted.writes() >= shadows.length, { ...CONVERGE, description: 'the restarted writer re-applied every slice' });
      await waitFor(() => logRecords(running).filter((r) => r.msg === 'reconcile pass done').length > passesBefore,
        { ...CONVERGE, description: 'our controller made a pass over every slice' });
      // An observation window, not a wait for something: the claim is that nothing happens in it.
      await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS));
    } finally {
      watch.stop();
    }
    const stored = events.filter((e) => e.type !== 'BOOKMARK');
    const described = stored.map((e) => `${e.type} ${e.object.metadata?.name} ${e.object.metadata?.resourceVersion} by ${lastManager(e.object)}`);
    // What a fight changes: the slice itself. A version that only moves managedFields (Liqo's writer re-applying a
    // slice our controller patched earlier takes the fields back; a 1,000-endpoint apply can be stored late under
    // load) changes nothing of it.
    const initial = new Map(list.items.map((item) => [item.metadata?.name ?? '', contentOf(item)]));
    const changed = stored.filter((e) => contentOf(e.object) !== initial.get(e.object.metadata?.name ?? ''));
    const perSlice = new Map<string, number>();
    for (const event of stored) perSlice.set(event.object.metadata?.name ?? '', (perSlice.get(event.object.metadata?.name ?? '') ?? 0) + 1);
    assert.ok([...perSlice.values()].every((count) => count <= 2), `at most two versions of a slice: ${described.join('; ')}`);
    if (await failOpenCount() === failOpenBefore) {
      assert.deepEqual(changed.map((e) => e.object.metadata?.name), [], `no slice changed (${list.items.length} slices, ${shadows.length} of them Liqo's): ${described.join('; ')}`);
    } else {
      // A review the API server could not complete under load stored a re-apply unreviewed: healed once, back to
      // what it was. A heal, not a fight.
      const last = new Map(stored.map((e) => [e.object.metadata?.name ?? '', e.object]));
      for (const [name, object] of last) assert.equal(contentOf(object), initial.get(name), `${name} ends as it was: ${described.join('; ')}`);
    }
    assert.deepEqual(refusedInLog(running), []);
  });
  test('the hub reader\'s rights to IPs, then to Configurations, revoked without a restart: hub-external within the watch timeout, resolved again once given back; no stored version wrong', async () => {
    // The bound is the watch timeout (docs/deploy.md): made short here by the flag, never by waiting.
    await killServer(webhook);
    const running = await startWebhook(['--watch-timeout', `${FAULT_WATCH_TIMEOUT_S}s`, '--stale-view-after', `${FAULT_STALE_S}s`, '--max-patches-per-second', String(FAULT_PATCHES_PER_SECOND)]);
    await untilStored('stock', '[["10.61.0.99"]]', 'db-1 resolved after the restart');
    const recorder = await recordVersions();
    const role = await hubAdmin.get<KubeObject & { rules: { resources: string[] }[] }>(HUB_READER_ROLE);
    const figures: string[] = [];
    try {
      for (const resource of ['ips', 'configurations']) {
        const revokedAt = Date.now();
        await hubAdmin.ok('PATCH', HUB_READER_ROLE, { rules: role.rules.filter((rule) => !rule.resources.includes(resource)) }, { contentType: 'application/merge-patch+json' });
        await untilStored('stock', '[["10.71.0.5"]]', `restored (hub-external) once ${resource} are refused`);
        const noticedMs = Date.now() - revokedAt;
        const { hub: known } = await debugPairs(running);
        assert.ok(!known.known && known.why.includes(resource) && known.why.includes('403'), JSON.stringify(known));
        assert.equal((await opsGet(running, '/readyz')).status, 200, 'a refused optional resource is a state of the hub, not a failing source');
        // Noticed within the bound: the watch's timeout, then a list and a controller pass (a few seconds at most).
        assert.ok(noticedMs < (FAULT_WATCH_TIMEOUT_S + 10) * 1000, `${resource} revoked, noticed after ${noticedMs} ms`);
        const givenBackAt = Date.now();
        await hubAdmin.ok('PATCH', HUB_READER_ROLE, { rules: role.rules }, { contentType: 'application/merge-patch+json' });
        await waitFor(async () => await storedAddresses('stock') === '[["10.61.0.99"]]', { timeoutMs: 60_000, intervalMs: 100, description: `resolved again once ${resource} are given back` });
        const backMs = Date.now() - givenBackAt;
        // Looked for again at the optional resources' pace: a list within 30 s, then a pass.
        assert.ok(backMs < 40_000, `${resource} given back, resolved after ${backMs} ms`);
        figures.push(`${resource}: refusal noticed in ${noticedMs} ms, given back resolved in ${backMs} ms`);
      }
      await recorder.caughtUp('stock');
    } finally {
      recorder.stop();
    }
    process.stdout.write(`# hub reader rights revoked and given back (watch timeout ${FAULT_WATCH_TIMEOUT_S} s): ${figures.join('; ')}\n`);
    const wrong = recorder.versions.filter((v) => v.name !== 'stock' || !['[["10.61.0.99"]]', '[["10.71.0.5"]]'].includes(v.addresses));
    assert.deepEqual(wrong, [], 'only the stock slice changed, and only between db-1\'s address and the hub\'s');
    assert.ok(recorder.versions.length >= 4, 'restored and resolved twice');
  });

  test('a slice resolved by our controller whose Service then gains liqo.io/use-direct-connections ends with the address Liqo\'s writer sends, never the hub\'s', async () => {
    const running = webhook!;
    // Where the previous test left it: db-1 resolved, by our controller's last pass, whose field manager owns the
    // originals annotation (Liqo's server-side apply leaves a field another manager owns).
    const resolved = await slice('stock');
    assert.equal(addressesOf(resolved), '[["10.61.0.99"]]');
    assert.equal(annotationsOf(resolved)[ORIGINAL], '{"10.61.0.99":"10.71.0.5"}');
    const owners = (resolved.metadata?.managedFields ?? []) as { manager: string; fieldsV1?: { 'f:metadata'?: { 'f:annotations'?: Record<string, unknown> } } }[];
    assert.ok(owners.some((entry) => entry.manager === 'shortcut-webhook' && entry.fieldsV1?.['f:metadata']?.['f:annotations']?.[`f:${ORIGINAL}`] !== undefined),
      `our controller owns the originals annotation: ${managersOf(resolved).join(', ')}`);
    const recorder = await recordVersions();
    const passes = () => logRecords(running).filter((r) => r.msg === 'reconcile pass done').length;
    try {
      // The hub's Service annotated: its virtual kubelet reflects db-1 untranslated and lists it under cluster3. The
      // hub sees cluster3's pods remapped (10.81/16), which Liqo's writer cannot map; the shadow route repairs it as
      // it is written (cluster3's own address, 10.60.0.99, with its record of the hub's original), so that Liqo's
      // writer maps it itself into the leaf's direct network to cluster3: 10.61.0.99. (Written as the hub writes it:
      // a record the hub wrote would be no record of the product's, and ignored.)
      const writes = writer!.writes('demo/stock');
      await putShadow({
        name: 'stock', addresses: [['10.81.0.99']], pods: ['db-1'],
        annotations: { 'liqo.io/direct-connections-data': JSON.stringify({ clusterAddresses: { cluster3: ['10.81.0.99'] } }) },
      });
      await waitFor(() => writer!.writes('demo/stock') > writes, { ...CONVERGE, description: 'Liqo\'s writer applied the direct address' });
      const sent = await waitFor(async () => {
        const stored = await slice('stock');
        return annotationsOf(stored)[ORIGINAL] === undefined ? stored : undefined;
      }, { ...CONVERGE, description: 'the stale originals entry gone with Liqo\'s write' });
      assert.equal(addressesOf(sent), '[["10.61.0.99"]]', 'the address Liqo sent');
      // (Still flagged while an FCC's pair has 10.61/16 as its target: the flag names the shortcut space, whoever wrote.)
      // The tunnel to cluster3 down, then up: the shadow pass moves db-1 to the hub path and back (Liqo's writer then
      // writes what the shadow says), and the EndpointSlice pass never restores the stale entry's hub address on its
      // own: each state ends with the address Liqo's writer sent for it.
      for (const [value, expected] of [['Error', '[["10.71.0.5"]]'], ['Connected', '[["10.61.0.99"]]']] as const) {
        const before = passes();
        await setTunnel(value);
        await waitFor(() => passes() > before, { ...CONVERGE, description: `a pass with the tunnel ${value}` });
        await waitFor(async () => (await storedAddresses('stock')) === expected ? true : undefined,
          { ...CONVERGE, description: `the address Liqo's writer sends with the tunnel ${value}: ${expected}` });
      }
      await waitFor(async () => {
        const stored = await slice('stock');
        return addressesOf(stored) === '[["10.61.0.99"]]' && annotationsOf(stored)[ORIGINAL] === undefined ? true : undefined;
      }, { ...CONVERGE, description: 'no originals entry naming the address Liqo sends itself' });
      await recorder.caughtUp('stock');
    } finally {
      recorder.stop();
    }
    const stock = recorder.versions.filter((v) => v.name === 'stock').map((v) => v.addresses);
    assert.ok(stock.length > 0);
    // Only db-1's own two addresses: the direct one Liqo sends, and its hub path while the tunnel was down (the shadow
    // pass's failover); never another pod's.
    assert.deepEqual([...new Set(stock)].sort(), ['[["10.61.0.99"]]', '[["10.71.0.5"]]'], 'only db-1\'s direct and hub-path addresses');
    // The Service's annotation removed again: the hub reflects the allocated address, resolved and recorded as before.
    await putShadow({ name: 'stock', addresses: [['10.70.0.5']], pods: ['db-1'] });
    await waitFor(async () => annotationsOf(await slice('stock'))[ORIGINAL] === '{"10.61.0.99":"10.71.0.5"}', { ...CONVERGE, description: 'resolved by the webhook again' });
  });

  test('the leaf\'s API server restarted in the middle of a controller pass: the pass is finished after it, and no stored version is wrong', async () => {
    const running = webhook!;
    // A hundred more slices through the shortcut, so that the pass below is long enough to be cut in the middle.
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => admin.ok('POST', SLICES, direct({ name: `pass-${batch * 10 + i}`, addresses: [[`10.63.9.${batch * 10 + i}`]] }))));
    }
    const connected = await allAddresses();
    assert.equal(connected.get('pass-99'), '[["10.61.9.99"]]');
    const restored = await restoredAddresses();
    const changing = [...connected].filter(([name, addresses]) => restored.get(name) !== addresses).map(([name]) => name);
    assert.ok(changing.length >= 100, `a pass over many slices (${changing.length})`);
    const recorder = await recordVersions();
    let startMs = 0;
    let doneAtStop = 0;
    try {
      // The tunnel to cluster3 goes down: a pass restores every slice that goes through it. At its first write the
      // leaf's API server stops, and starts again.
      await setTunnel('Error');
      await waitFor(() => recorder.versions.length > 0, { ...CONVERGE, description: 'the pass\'s first write' });
      await leaf.stopApiServer({ crash: true });
      doneAtStop = new Set(recorder.versions.map((v) => v.name)).size;
      assert.ok(doneAtStop < changing.length, `stopped in the middle of the pass: ${doneAtStop} of ${changing.length} slices written`);
      // Without its watch cache, the restarted API server serves a watch from etcd's history: the recorder resumes
      // from the last version it saw, where a fresh cache would begin after the writes made just before the crash.
      startMs = await leaf.startApiServer({ extraFlags: ['--watch-cache=false'] });
      const restartedAt = Date.now();
      await untilAll(restored, 'every slice restored after the restart');
      const finishedMs = Date.now() - restartedAt;
      process.stdout.write(`# leaf API server restarted after ${doneAtStop} of ${changing.length} slices: ready in ${startMs} ms, the pass finished ${finishedMs} ms later\n`);
      await setTunnel('Connected');
      await untilAll(connected, 'every slice through the shortcut again');
    } finally {
      recorder.stop();
    }
    const wrong = recorder.versions.filter((v) => v.type !== 'DELETED' && v.addresses !== connected.get(v.name) && v.addresses !== restored.get(v.name));
    assert.deepEqual(wrong, [], 'every stored version is the slice through the shortcut or restored');
    assert.equal(recorder.gaps(), 0, 'the watch resumed where it stood after the restart');
    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { ...CONVERGE, description: 'ready after the leaf\'s restart' });
  });

  test('the hub\'s API server away for longer than the longest backoff, then back without the FCC CRD (a 404, as on stock Liqo): ready again, and no slice stored in between', async () => {
    const running = webhook!;
    // The shortcut operator uninstalled: the hub serves no FCCs, as stock Liqo; the FCC path's slices are restored,
    // the stock path's stays resolved.
    const withoutFccs = await restoredAddresses();
    withoutFccs.set('stock', await storedAddresses('stock'));
    // Liqo's writer applies a slice it owns again after each write of ours: those re-applies (each storing a version
    // that moves managedFields) are over before the recording below begins.
    const liqoOwned = (await admin.get<{ items: KubeObject[] }>(SLICES)).items
      .filter((item) => managersOf(item).some((m) => m.startsWith(`${LIQO_MANAGER}/`)) && withoutFccs.get(item.metadata?.name ?? '') !== addressesOf(item))
      .map((item) => ({ name: `demo/${item.metadata?.name}`, writes: writer!.writes(`demo/${item.metadata?.name}`) }));
    await hubAdmin.ok('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foreignclusterconnections.networking.liqo.io');
    await waitFor(() => logRecords(running).some((r) => typeof r.msg === 'string' && r.msg.startsWith('no ForeignClusterConnections to read')),
      { ...CONVERGE, description: 'the webhook sees no FCC CRD on the hub' });
    await untilAll(withoutFccs, 'the FCC path\'s slices restored');
    assert.ok(liqoOwned.length > 0, 'some of the restored slices are Liqo\'s');
    await waitFor(() => liqoOwned.every(({ name, writes }) => writer!.writes(name) > writes),
      { ...CONVERGE, description: `Liqo's writer re-applied the ${liqoOwned.length} restored slices it owns` });
    await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { ...CONVERGE, description: 'ready without FCCs' });
    // What the FCCs' going set off (passes, Liqo's writer applying again each slice and shadow it owns) is over: no
    // version of a slice or a shadow stored for QUIET_MS. What is stored from then on is the hub's outage's doing.
    const recorder = await recordVersions();
    const shadowRecorder = await recordVersions(SHADOWS);
    const lastStored = () => Math.max(0, ...[...recorder.versions, ...shadowRecorder.versions].map((v) => v.at));
    const quietFrom = Date.now();
    await waitFor(() => Date.now() - Math.max(quietFrom, lastStored()) >= QUIET_MS,
      { timeoutMs: 60_000, intervalMs: 200, description: `no slice or shadow stored for ${QUIET_MS} ms` });
    const settling = [...recorder.versions.map((v) => v.name), ...shadowRecorder.versions.map((v) => `shadow ${v.name}`)];
    process.stdout.write(`# after the FCCs went, ${settling.length} versions stored before ${QUIET_MS} ms of quiet: ${settling.join(', ') || '-'}\n`);
    recorder.versions.length = 0;
    shadowRecorder.versions.length = 0;
    const settled = await allAddresses();
    assert.equal(settled.get('stock'), '[["10.61.0.99"]]', 'the stock path needs no FCC');
    let recoveredMs = 0;
    let downMs = 0;
    try {
      await hub.stopApiServer();
      const stoppedAt = Date.now();
      // Away longer than the longest backoff (30 s), and long enough for the replica to turn not ready.
      await waitFor(async () => Date.now() - stoppedAt >= HUB_OUTAGE_MS && (await opsGet(running, '/readyz')).status === 503,
        { timeoutMs: HUB_OUTAGE_MS + 60_000, intervalMs: 250, description: 'the hub away, the replica not ready' });
      downMs = Date.now() - stoppedAt;
      // What the hub answers its reader from the moment it is asked to start: kube-apiserver refuses (403) for a few
      // seconds, until its authorizer has synced, and the product must not wait that out at its backoff's cap.
      const startedAt = Date.now();
      const reader = new KubeClient(hub.url, hub.ca, { token: hubReaderToken });
      const answers: { ms: number; status: number | 'away' }[] = [];
      let okAt: number | undefined;
      const firstOk = waitFor(async () => {
        // A request the starting server holds counts as away after 5 s: the probe never waits on one for good.
        let timer: NodeJS.Timeout | undefined;
        const status = await Promise.race([
          reader.request('GET', '/apis/ipam.liqo.io/v1alpha1/ips?limit=1').then((answer) => answer.status, () => 'away' as const),
          new Promise<'away'>((resolve) => { timer = setTimeout(() => resolve('away'), 5000); }),
        ]).finally(() => clearTimeout(timer));
        answers.push({ ms: Date.now() - startedAt, status });
        if (status === 200) okAt ??= Date.now() - startedAt;
        return okAt;
      }, { timeoutMs: 180_000, intervalMs: 100, description: 'the hub answers its reader 200' }).finally(() => reader.close());
      // The hub's IPAM is optional (a refusal is no failing source), so ready says nothing of it: the hub view, read
      // meanwhile, must be back within seconds of the hub's first 200, not after the backoff the outage grew to 30 s.
      const hubKnown = waitFor(async () => (okAt !== undefined && (await debugPairs(running)).hub.known ? Date.now() - startedAt : undefined),
        { timeoutMs: 180_000, intervalMs: 100, description: 'the hub view known after the hub\'s first 200' });
      // Awaited below; a failure before that must not leave them unhandled.
      firstOk.catch(() => {});
      hubKnown.catch(() => {});
      await hub.startApiServer();
      const backAt = Date.now();
      await waitFor(async () => (await opsGet(running, '/readyz')).status === 200, { timeoutMs: 120_000, intervalMs: 100, description: 'ready again once the hub answers' });
      recoveredMs = Date.now() - backAt;
      const okMs = await firstOk;
      const knownMs = await hubKnown.catch(() => undefined);
      const refused = answers.filter((answer) => answer.status === 403);
      const hubLog = logRecords(running).filter((r) => Date.parse(String(r.time)) >= startedAt && /hub's IPAM|shortcut source/.test(String(r.msg)))
        .map((r) => `+${Date.parse(String(r.time)) - startedAt} ms ${String(r.msg)} ${String(r.why ?? r.resource ?? '')}`);
      assert.ok(knownMs !== undefined && knownMs - okMs <= 10_000,
        `the hub answered its reader 403 for ${refused.length === 0 ? 0 : (refused.at(-1)?.ms ?? 0) - (refused[0]?.ms ?? 0)} ms (from +${refused[0]?.ms ?? '-'} ms), `
        + `200 from +${okMs} ms after it was started; the product's hub view was known again ${knownMs === undefined ? 'not within 180 s' : `at +${knownMs} ms`}, ready at +${backAt - startedAt + recoveredMs} ms. `
        + `The product said:\n${hubLog.join('\n')}`);
      const { hub: known } = await debugPairs(running);
      assert.ok(known.known && known.ips === 1, JSON.stringify(known));
      process.stdout.write(`# hub reader refused (403) ${refused.length} times, first 200 +${okMs} ms after the start, hub view known at +${knownMs} ms, ready at +${backAt - startedAt + recoveredMs} ms\n`);
    } finally {
      recorder.stop();
      shadowRecorder.stop();
    }
    process.stdout.write(`# hub API server away ${downMs} ms, back answering 404 for the FCCs: ready again ${recoveredMs} ms after it answered\n`);
    for (const record of logRecords(running).filter((r) => r.msg === 'shortcut source problem, retrying' || r.msg === 'shortcut source recovered').slice(-12)) {
      process.stdout.write(`#   ${String(record.time)} ${String(record.resource)} ${String(record.msg)} ${String(record.err ?? '')}\n`);
    }
    const written = [...recorder.versions, ...shadowRecorder.versions.map((v) => ({ ...v, name: `shadow ${v.name}` }))];
    if (written.length > 0) {
      // What the product did to the objects written, for a failure to name the writer.
      const names = new Set(written.map((v) => v.name.replace(/^shadow /, '')));
      for (const record of logRecords(running).filter((r) => [...names].some((name) => JSON.stringify(r).includes(`demo/${name}`))).slice(-20)) {
        process.stdout.write(`#   ${JSON.stringify(record)}\n`);
      }
    }
    assert.deepEqual(written, [], 'nothing was stored while the hub was away or after it came back');
    assert.deepEqual(await allAddresses(), settled);
    // Each source tries again within the backoff's cap (30 s); a young API server may answer that first try 429 (its
    // priority and fairness not yet set up for the caller), and then the next one.
    assert.ok(recoveredMs < 70_000, `ready ${recoveredMs} ms after the hub answered: within two retries at the backoff's cap`);
  });
});
