// A real Kubernetes control plane on loopback for the end-to-end tests: etcd and kube-apiserver, built from the
// Go module in test/e2e/controlplane (see build.ts), started with their own certificates, a service-account signing
// key and RBAC, torn down with their whole process groups.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { waitFor } from '../../support/wait-for.ts';
import { buildControlPlane } from '../controlplane/build.ts';
import { KubeClient } from './kube-client.ts';
import { freePort } from '../../support/free-port.ts';

export interface ControlPlane {
  readonly url: string;
  /** The CA that signed the API server's serving certificate (and the admin client certificate). */
  readonly ca: Buffer;
  /** A kubeconfig file for `system:masters`. */
  readonly adminKubeconfig: string;
  readonly admin: KubeClient;
  readonly dir: string;
  /** kube-apiserver's log file (stderr), for reading after the fact. */
  readonly apiServerLog: string;
  /** Milliseconds from spawning etcd to /readyz answering ok. */
  readonly startupMs: number;
  /** A kubeconfig file for a bearer token, trusting this API server. */
  writeTokenKubeconfig(name: string, token: string): string;
  /**
   * Stops kube-apiserver alone (etcd keeps the data): the cluster's API is away until startApiServer. `crash`: SIGKILL,
   * so requests in flight fail at once, where SIGTERM lets the server finish them first.
   */
  stopApiServer(options?: { readonly crash?: boolean }): Promise<void>;
  /**
   * Starts kube-apiserver again on the same port with the same flags, and `extraFlags`; resolves with the ms until
   * /readyz said ok.
   */
  startApiServer(options?: { readonly extraFlags?: readonly string[] }): Promise<number>;
  stop(): Promise<void>;
}


function openssl(dir: string, args: readonly string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, the API server's serving pair (127.0.0.1, localhost), an admin client pair and the service-account keys. */
function makePki(dir: string): void {
  openssl(dir, ['req', '-x509', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-sha256',
    '-days', '2', '-subj', '/CN=e2e-kubernetes-ca', '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-keyout', 'ca.key', '-out', 'ca.crt']);
  const sign = (name: string, subject: string, extensions: string) => {
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(dir, ['req', '-new', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-subj', subject,
      '-keyout', `${name}.key`, '-out', `${name}.csr`]);
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
      '-sha256', '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
  };
  sign('apiserver', '/CN=kube-apiserver', 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n'
    + 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,DNS:kubernetes.default.svc,IP:127.0.0.1\n');
  sign('admin', '/O=system:masters/CN=e2e-admin', 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n'
    + 'extendedKeyUsage=clientAuth\n');
  openssl(dir, ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key']);
  openssl(dir, ['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

function kubeconfig(url: string, ca: Buffer, user: Record<string, string>): string {
  return stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'e2e',
    clusters: [{ name: 'e2e', cluster: { server: url, 'certificate-authority-data': ca.toString('base64') } }],
    users: [{ name: 'e2e', user }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'e2e' } }],
  });
}

/** Every process group started here, killed on `exit` too: a test that throws or a ^C leaves no etcd behind. */
const groups = new Set<number>();
let exitHookInstalled = false;
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
function track(child: ChildProcess): void {
  if (child.pid === undefined) return;
  const pid = child.pid;
  groups.add(pid);
  child.once('exit', () => groups.delete(pid));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => { for (const group of groups) killGroup(group, 'SIGKILL'); });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        for (const group of groups) killGroup(group, 'SIGKILL');
        process.exit(130);
      });
    }
  }
}

/** Starts `binary` in a process group of its own, its output appended to `logFile`, killed with the suite. */
export function spawnLogged(binary: string, args: readonly string[], logFile: string): ChildProcess {
  const log = openSync(logFile, 'a');
  // detached: a process group of its own, so that stopping it reaches anything it started.
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  track(child);
  return child;
}

/** SIGTERM to the child's process group, SIGKILL after 5 s; resolves when it has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child.pid, 'SIGTERM');
  const timer = setTimeout(() => { if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL'); }, 5000);
  await exited;
  clearTimeout(timer);
}

/** Waits for `ready`; a process that exits meanwhile fails at once, with the end of its log. */
async function readyOrExited(child: ChildProcess, name: string, logFile: string, ready: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  await waitFor(async () => exited() || await ready(), { timeoutMs, intervalMs: 20, description: `${name} ready` });
  if (exited()) {
    const tail = readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
    throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail}`);
  }
}

/**
 * How many times a start whose port was taken is tried on other ports. The ports are free when chosen and bound by
 * etcd and kube-apiserver only seconds later; in between, any listen on port 0 on the machine (the other test files'
 * servers, another control plane's own choice) can be handed the same one.
 */
const START_ATTEMPTS = 3;

/** Builds (first time only) and starts etcd and kube-apiserver; resolves when /readyz says ok. */
export async function startControlPlane(): Promise<ControlPlane> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePorts();
    } catch (error) {
      // Go's listen error, in the log tail of the process that exited: anything else is a failure as it stands.
      if (attempt >= START_ATTEMPTS || !/bind: address already in use/.test(String(error))) throw error;
      process.stdout.write(`# control plane: a port was taken before it was bound, starting again on others (attempt ${attempt + 1})\n`);
    }
  }
}

async function startOnFreePorts(): Promise<ControlPlane> {
  const { dir: bin } = buildControlPlane();
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-e2e-'));
  const started = Date.now();
  makePki(dir);
  const [etcdClient, etcdPeer, securePort] = [await freePort(), await freePort(), await freePort()];
  const etcdLog = join(dir, 'etcd.log');
  const apiServerLog = join(dir, 'kube-apiserver.log');
  const etcd = spawnLogged(join(bin, 'etcd'), ['-data-dir', join(dir, 'etcd-data'),
    '-listen-client', `http://127.0.0.1:${etcdClient}`, '-listen-peer', `http://127.0.0.1:${etcdPeer}`], etcdLog);
  let apiServer: ChildProcess | undefined;
  const stop = async () => {
    if (apiServer !== undefined) await stopChild(apiServer);
    await stopChild(etcd);
  };
  try {
    await readyOrExited(etcd, 'etcd', etcdLog, () => readFileSync(etcdLog, 'utf8').includes('etcd ready'), 30_000);
    const ca = readFileSync(join(dir, 'ca.crt'));
    const url = `https://127.0.0.1:${securePort}`;
    const adminConfig = kubeconfig(url, ca, {
      'client-certificate-data': readFileSync(join(dir, 'admin.crt')).toString('base64'),
      'client-key-data': readFileSync(join(dir, 'admin.key')).toString('base64'),
    });
    const adminKubeconfig = join(dir, 'admin.kubeconfig');
    writeFileSync(adminKubeconfig, adminConfig, { mode: 0o600 });
    const admin = new KubeClient(url, ca, { cert: readFileSync(join(dir, 'admin.crt')), key: readFileSync(join(dir, 'admin.key')) });
    const launchApiServer = async (extraFlags: readonly string[] = []) => {
      const running = spawnLogged(join(bin, 'kube-apiserver'), [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${securePort}`,
        // No kubernetes.default Service endpoints: nothing runs in pods here, and a loopback address may not be one.
        '--endpoint-reconciler-type=none',
        `--tls-cert-file=${join(dir, 'apiserver.crt')}`, `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
        `--client-ca-file=${join(dir, 'ca.crt')}`,
        '--authorization-mode=Node,RBAC',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${join(dir, 'sa.pub')}`, `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
        '--service-cluster-ip-range=10.96.0.0/16',
        `--cert-dir=${join(dir, 'cert-dir')}`,
        '--profiling=false',
        '--v=1',
        ...extraFlags,
      ], apiServerLog);
      apiServer = running;
      await readyOrExited(running, 'kube-apiserver', apiServerLog, async () => {
        try {
          return (await admin.request('GET', '/readyz')).status === 200;
        } catch {
          return false; // Not listening yet.
        }
      }, 60_000);
    };
    await launchApiServer();
    const startupMs = Date.now() - started;
    return {
      url, ca, adminKubeconfig, admin, dir, apiServerLog, startupMs,
      writeTokenKubeconfig: (name, token) => {
        const file = join(dir, `${name}.kubeconfig`);
        writeFileSync(file, kubeconfig(url, ca, { token }), { mode: 0o600 });
        return file;
      },
      stopApiServer: async (options = {}) => {
        if (apiServer === undefined) return;
        if (options.crash === true && apiServer.pid !== undefined && apiServer.exitCode === null && apiServer.signalCode === null) {
          const exited = new Promise<void>((resolve) => apiServer?.once('exit', () => resolve()));
          killGroup(apiServer.pid, 'SIGKILL');
          await exited;
          return;
        }
        await stopChild(apiServer);
      },
      startApiServer: async (options = {}) => {
        const begun = Date.now();
        await launchApiServer(options.extraFlags);
        return Date.now() - begun;
      },
      stop: async () => {
        admin.close();
        await stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
