// The real kube-proxy (built from the Kubernetes module, datapath-tools/build.ts) in nftables mode, in a node
// namespace, reading a test control plane. The API server listens on the root namespace's loopback, which a process
// in another network namespace cannot reach; a unix socket can (it is a file, not an address of a namespace): the
// test process forwards a socket in its run folder to the API server, and a forwarder inside the node namespace
// listens on that namespace's 127.0.0.1:6443 and forwards to the socket. TLS goes end to end (the API server's
// certificate names 127.0.0.1). No traffic leaves the namespaces and loopback.
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { waitFor } from '../../../support/wait-for.ts';
import { buildKubeProxy } from '../../datapath-tools/build.ts';
import type { KubeClient } from '../kube-client.ts';
import type { Lab } from './netns.ts';

const IN_NAMESPACE_PORT = 6443;

// Inside the namespace: 127.0.0.1:<port> to the unix socket.
const FORWARDER = `import { createConnection, createServer } from 'node:net';
const [socket, port] = process.argv.slice(2);
createServer((client) => {
  const upstream = createConnection(socket);
  client.pipe(upstream).pipe(client);
  const close = () => { client.destroy(); upstream.destroy(); };
  client.on('error', close);
  upstream.on('error', close);
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\\n'));
`;

export interface KubeProxy {
  readonly logFile: string;
  /** The unix socket forwarded to the API server: any namespace's processes reach the API server through it. */
  readonly apiSocket: string;
  /** The build: false when cached. */
  readonly built: boolean;
  readonly buildSeconds: number;
  /** kube-proxy's nft table as the kernel holds it (and any table listed after it). */
  table(): Promise<string>;
  /** The end of its log, for failures. */
  logTail(): string;
  stop(): Promise<void>;
}

/** Forwards a unix socket at `path` to 127.0.0.1:`port` in this (the root) namespace. */
function socketToLoopback(path: string, port: number): Promise<Server> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(port, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  const close = server.close.bind(server);
  server.close = (callback) => {
    for (const socket of open) socket.destroy();
    return close(callback);
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve(server));
  });
}

export interface KubeProxyOptions {
  readonly lab: Lab;
  /** The node namespace. */
  readonly ns: string;
  /** A kubeconfig of the control plane (its server URL is replaced by the forwarded one). */
  readonly kubeconfig: string;
  readonly apiServerUrl: string;
  readonly clusterCidr: string;
  readonly nodeName: string;
  /** The node's address, as the kubelet reports it: kube-proxy waits up to 30 s for the Node to have one. */
  readonly nodeIp: string;
  /** Creates the Node (kube-proxy reads it; no kubelet here). */
  readonly admin: KubeClient;
}

export async function startKubeProxy(options: KubeProxyOptions): Promise<KubeProxy> {
  const { lab, ns } = options;
  const build = buildKubeProxy();
  // The Node as a kubelet would register it and report its address (status through the status subresource).
  await options.admin.ok('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: options.nodeName } });
  await options.admin.ok('PATCH', `/api/v1/nodes/${options.nodeName}/status`,
    { status: { addresses: [{ type: 'InternalIP', address: options.nodeIp }, { type: 'Hostname', address: options.nodeName }] } },
    { contentType: 'application/merge-patch+json' });
  const port = Number(new URL(options.apiServerUrl).port);
  const socket = join(lab.dir, 'apiserver.sock');
  const bridge = await socketToLoopback(socket, port);
  lab.onDestroy(() => new Promise((resolve) => bridge.close(() => resolve())));
  const forwarder = join(lab.dir, 'forward.mjs');
  writeFileSync(forwarder, FORWARDER);
  const forwarderLog = join(lab.dir, 'forwarder.log');
  lab.spawn(ns, [process.execPath, forwarder, socket, String(IN_NAMESPACE_PORT)], forwarderLog);
  await waitFor(() => readFileSync(forwarderLog, 'utf8').includes('listening'), { timeoutMs: 15_000, description: 'the API forwarder in the node namespace' });

  const config = parse(readFileSync(options.kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  for (const entry of config.clusters) entry.cluster.server = `https://127.0.0.1:${IN_NAMESPACE_PORT}`;
  const kubeconfig = join(lab.dir, 'kube-proxy.kubeconfig');
  writeFileSync(kubeconfig, stringify(config), { mode: 0o600 });
  const logFile = join(lab.dir, 'kube-proxy.log');
  const child = lab.spawn(ns, [join(build.dir, 'kube-proxy'),
    '--proxy-mode=nftables', `--kubeconfig=${kubeconfig}`, `--hostname-override=${options.nodeName}`,
    `--cluster-cidr=${options.clusterCidr}`, '--nodeport-addresses=primary',
    // Its own ports inside the namespace; the conntrack sysctls (global to the machine) left alone.
    '--healthz-bind-address=127.0.0.1:10256', '--metrics-bind-address=127.0.0.1:10249',
    '--conntrack-max-per-core=0', '--conntrack-tcp-timeout-established=0', '--conntrack-tcp-timeout-close-wait=0',
    '--v=2'], logFile);
  // `nft list table ip kube-proxy` answers ENOENT with nft 1.0.6 (Debian 12) while `list ruleset` shows the table:
  // the ruleset, from kube-proxy's table on.
  const table = async () => {
    const ruleset = await lab.exec(ns, ['nft', 'list', 'ruleset']);
    const at = ruleset.indexOf('table ip kube-proxy {');
    return at < 0 ? '' : ruleset.slice(at);
  };
  return {
    logFile, apiSocket: socket, built: build.built, buildSeconds: build.seconds, table,
    logTail: () => {
      try {
        return readFileSync(logFile, 'utf8').split('\n').filter((line) => !line.includes('FLAG:')).slice(-40).join('\n');
      } catch {
        return '(no log)';
      }
    },
    stop: () => lab.stop(child),
  };
}
