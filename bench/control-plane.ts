// The real control plane for the bench sections "scale" and "writepath": the e2e suite's kube-apiserver and etcd
// (test/e2e/support/control-plane.ts; `npm run build:controlplane` builds them once), the FCC CRD from manifests/, the
// piece of Liqo the webhook reads (Liqo's CRDs and a Connected Connection), LIQO.md's FCC, and the product as the
// chart runs it: the image's bundle, the Dockerfile's node flags and the chart's NODE_OPTIONS. Not product code.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildImageBundle, entrypointNodeFlags } from '../test/deploy/support/dockerfile.ts';
import { makeCerts, type TestCerts } from '../test/support/certs.ts';
import { fccObject } from '../test/support/builders.ts';
import { freePort } from '../test/support/free-port.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { startCanary, type Canary } from '../test/e2e/support/canary.ts';
import { startControlPlane, type ControlPlane } from '../test/e2e/support/control-plane.ts';
import type { KubeClient } from '../test/e2e/support/kube-client.ts';
import { createConnection, installCrds, liqoCrds } from '../test/e2e/support/liqo.ts';
import { shippedManifests } from '../test/e2e/support/objects.ts';

export const FCC_PATH = '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections';
const WEBHOOKS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const root = new URL('..', import.meta.url).pathname;
const SLOW = { timeoutMs: 120_000, intervalMs: 50 } as const;

/** The chart's default NODE_OPTIONS (values.yaml `nodeOptions`): what the pod's node runs with. */
export function chartNodeOptions(): string {
  const values = parse(readFileSync(join(root, 'charts/shortcut-webhook/values.yaml'), 'utf8')) as { nodeOptions?: unknown };
  return typeof values.nodeOptions === 'string' ? values.nodeOptions : '';
}

export function rss(pid: number | undefined): { rssMB: number; peakMB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return { rssMB: kB('VmRSS') / 1024, peakMB: kB('VmHWM') / 1024 };
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Where the API server calls the bench's webhooks. kube-apiserver speaks HTTP/1.1 to every webhook but one at a
 * loopback URL, where it lets ALPN choose HTTP/2 (k8s.io/apiserver pkg/util/webhook/client.go, isLocalHost): a
 * webhook registered at 127.0.0.1 is measured on a path no cluster takes, and the product (which offers h2) against
 * a minimal webhook that does not. So the webhooks listen on, and are registered at, an address of this machine that
 * is not the loopback: HTTP/1.1 for both, as a Service gets it. Without one, the loopback, and the JSON says so.
 */
export interface WebhookHost {
  readonly host: string;
  /** What the API server speaks to a webhook there. */
  readonly protocol: 'http/1.1' | 'h2 where offered (loopback)';
}

export function webhookHost(): WebhookHost {
  // BENCH_WEBHOOK_HOST=127.0.0.1 measures the loopback's HTTP/2 instead, for comparison.
  if (process.env.BENCH_WEBHOOK_HOST === '127.0.0.1') return { host: '127.0.0.1', protocol: 'h2 where offered (loopback)' };
  const address = Object.values(networkInterfaces()).flat().find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal);
  return address === undefined ? { host: '127.0.0.1', protocol: 'h2 where offered (loopback)' } : { host: address.address, protocol: 'http/1.1' };
}

/** The bench's serving certificate issued again by its CA, for `host` too (make-certs.sh names the loopback only). */
function certifyHost(certs: TestCerts, host: string): void {
  if (host === '127.0.0.1') return;
  const file = (name: string) => join(certs.dir, name);
  writeFileSync(file('ip.cnf'), `subjectAltName=DNS:localhost,IP:127.0.0.1,IP:${host}\nextendedKeyUsage=serverAuth\n`);
  execFileSync('openssl', ['req', '-new', '-key', certs.keyFile, '-subj', '/CN=bench', '-out', file('ip.csr')], { stdio: 'pipe' });
  execFileSync('openssl', ['x509', '-req', '-in', file('ip.csr'), '-CA', certs.caFile, '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '1',
    '-sha256', '-extfile', file('ip.cnf'), '-out', certs.certFile], { stdio: 'pipe' });
}

export interface Product {
  readonly child: ChildProcess;
  readonly port: number;
  readonly opsPort: number;
  /** The JSON log records whose msg is one of those asked for at start; the rest is read and dropped. */
  readonly records: Record<string, unknown>[];
  readonly nodeFlags: readonly string[];
  readonly nodeOptions: string;
}

export interface ProductOptions {
  /** The msg of the log records to keep in `Product.records`. */
  readonly keep: readonly string[];
  readonly controller: boolean;
  /** More flags for `serve`, after the bench's own. */
  readonly args?: readonly string[];
  /** Called with every line the product logs, as it comes. */
  readonly onLine?: (line: string) => void;
}

export interface Bench {
  readonly cp: ControlPlane;
  readonly admin: KubeClient;
  readonly certs: TestCerts;
  /** Where the webhooks listen and are registered (`https://<host>:<port>/...`). */
  readonly webhook: WebhookHost;
  /** Builds the image's bundle and starts `serve` against this API server (admin credentials; RBAC is not measured). */
  startProduct(options: ProductOptions): Promise<Product>;
  /** A MutatingWebhookConfiguration as shipped, calling `url`, for the reflected slices labelled `bench.liqo.io/path=<path>`. */
  register(name: string, url: string, path?: string): Promise<void>;
  /** Deletes a configuration `register` made; resolves once the API server no longer calls it. */
  unregister(name: string): Promise<void>;
  setConnected(connected: boolean): Promise<void>;
  close(): Promise<void>;
}

export async function startBench(): Promise<Bench> {
  const cp = await startControlPlane();
  const { admin } = cp;
  const certs = makeCerts(undefined, 'shortcut-webhook');
  const webhook = webhookHost();
  certifyHost(certs, webhook.host);
  const children: ChildProcess[] = [];
  let canary: Canary | undefined;
  const bundleDir = join(root, '.tmp', `bench-${process.pid}`);
  const close = async () => {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // With BENCH_NODE_FLAGS (e.g. --cpu-prof, which writes its profile at exit) the product stops as in a pod, on
      // SIGTERM; SIGKILL after 30 s, or at once otherwise.
      const graceful = (process.env.BENCH_NODE_FLAGS ?? '').trim() !== '';
      child.kill(graceful ? 'SIGTERM' : 'SIGKILL');
      const killer = graceful ? setTimeout(() => child.kill('SIGKILL'), 30_000) : undefined;
      await exited;
      clearTimeout(killer);
    }
    await canary?.close();
    await cp.stop();
    rmSync(certs.dir, { recursive: true, force: true });
    rmSync(bundleDir, { recursive: true, force: true });
  };
  try {
    canary = await startCanary(admin, makeCerts(undefined, 'canary'));
    for (const name of ['demo', 'liqo', 'liqo-tenant-cluster3', 'shortcut-webhook']) {
      await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    // Liqo's own CRDs (from the Liqo v1.2.0 module, as the e2e installs them) and the FCC CRD of manifests/.
    await installCrds(admin, [...liqoCrds(), ...shippedManifests().filter((object) => object.kind === 'CustomResourceDefinition')]);
    // Established is not yet served: retry the first create until the new resource answers.
    const fcc = fccObject();
    await waitFor(async () => (await admin.request('POST', FCC_PATH, fcc)).status === 201, { ...SLOW, description: 'FCCs are served' });
    await admin.ok('PATCH', `${FCC_PATH}/cluster2-cluster3/status`, { status: fcc.status }, { contentType: 'application/merge-patch+json' });
    await createConnection(admin, 'cluster3', 'Connected', 'cluster3');
  } catch (error) {
    await close();
    throw error;
  }

  const startProduct: Bench['startProduct'] = async ({ keep, controller, args = [], onLine }) => {
    mkdirSync(bundleDir, { recursive: true });
    const bundle = join(bundleDir, 'shortcut-webhook.mjs');
    const built = buildImageBundle(bundle);
    if (built.status !== 0) throw new Error(`the Dockerfile's build step failed: ${built.stderr}`);
    const [port, opsPort] = [await freePort(), await freePort()];
    const nodeFlags = entrypointNodeFlags();
    const nodeOptions = chartNodeOptions();
    // BENCH_NODE_FLAGS adds node flags for a look inside (e.g. --trace-gc); BENCH_PRODUCT_LOG keeps the whole log.
    const extraFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
    const logFile = process.env.BENCH_PRODUCT_LOG;
    const child = spawn(process.execPath, [...nodeFlags, ...extraFlags, bundle, 'serve', '--host', webhook.host, '--port', String(port),
      '--ops-port', String(opsPort), '--tls-cert', certs.certFile, '--tls-key', certs.keyFile, '--kubeconfig', cp.adminKubeconfig,
      '--resync-interval', '0', ...(controller ? [] : ['--no-controller']), ...args], {
      cwd: root, stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', NODE_OPTIONS: nodeOptions, POD_NAMESPACE: 'shortcut-webhook', POD_NAME: 'bench-0' },
    });
    children.push(child);
    const records: Record<string, unknown>[] = [];
    const tail: string[] = [];
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      if (logFile !== undefined) appendFileSync(logFile, lines.map((line) => `${line}\n`).join(''));
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        onLine?.(line);
        if (!keep.some((msg) => line.includes(`"msg":"${msg}"`))) continue;
        records.push(JSON.parse(line) as Record<string, unknown>);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => tail.push(chunk.toString()));
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${tail.join('\n')}`);
      try {
        return (await fetch(`http://${webhook.host}:${opsPort}/readyz`)).status === 200;
      } catch {
        return false;
      }
    }, { ...SLOW, description: 'the product is ready' });
    return { child, port, opsPort, records, nodeFlags, nodeOptions };
  };

  const register: Bench['register'] = async (name, url, path) => {
    const shipped = shippedManifests().find((object) => object.kind === 'MutatingWebhookConfiguration');
    const [hook] = (shipped?.webhooks ?? []) as Record<string, unknown>[];
    if (shipped === undefined || hook === undefined) throw new Error('no MutatingWebhookConfiguration in manifests/');
    const selector = hook.objectSelector as { matchLabels: Record<string, string> };
    const configuration = {
      ...shipped, metadata: { name },
      webhooks: [{
        ...hook, name: `${name}.bench.liqo.io`, clientConfig: { url, caBundle: certs.ca.toString('base64') },
        objectSelector: { matchLabels: { ...selector.matchLabels, ...(path === undefined ? {} : { 'bench.liqo.io/path': path }) } },
      }],
    };
    await admin.ok('POST', WEBHOOKS, configuration);
    await canary?.configurationsSeen();
  };

  const unregister: Bench['unregister'] = async (name) => {
    await admin.ok('DELETE', `${WEBHOOKS}/${name}`);
    await canary?.configurationsSeen();
  };

  const setConnected = async (connected: boolean) => {
    const status = connected ? fccObject().status : { isConnected: false, phase: 'Failed' };
    await admin.ok('PATCH', `${FCC_PATH}/cluster2-cluster3/status`, { status }, { contentType: 'application/merge-patch+json' });
  };

  return { cp, admin, certs, webhook, startProduct, register, unregister, setConnected, close };
}

/** A keep-alive HTTPS client for the bench's own writes: no retries, no library between it and the API server. */
export function rawClient(cp: ControlPlane, maxSockets: number): {
  send(method: string, path: string, body: string, contentType: string): Promise<{ status: number; text: string }>;
  close(): void;
} {
  const key = readFileSync(join(cp.dir, 'admin.key'));
  const cert = readFileSync(join(cp.dir, 'admin.crt'));
  const agent = new Agent({ keepAlive: true, maxSockets, ca: cp.ca, key, cert });
  return {
    send: (method, path, body, contentType) => new Promise((resolve, reject) => {
      const req = request(new URL(path, cp.url), { method, agent, headers: { 'content-type': contentType, accept: 'application/json',
        'content-length': Buffer.byteLength(body) } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    }),
    close: () => agent.destroy(),
  };
}
