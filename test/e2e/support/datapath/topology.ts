// A miniature of Liqo v1.2.0's data path in network namespaces: per cluster one node (it routes, as the node and its
// CNI would), its pods, and one gateway per peer; per peering a WireGuard tunnel (wireguard-go) between the two
// gateways over a link of their own. The nftables tables and routes are liqo-rules.ts's, generated from the
// cluster's Liqo objects. Packets are counted per peering: those one of its two gateways forwards into its tunnel
// and out of it (a table `swdp-count` of the test's own, not Liqo's).
//
//   pod --veth-- node --veth "liqo.node"-- gateway for P --eth0 (underlay), liqo-tunnel (wireguard-go)-- gateway ...
import { execFile, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { waitFor } from '../../../support/wait-for.ts';
import { buildWireguard } from '../../datapath-tools/build.ts';
import {
  CLIENT_INTERFACE_IP, SERVER_INTERFACE_IP, TUNNEL_INTERFACE, decodeConfiguration, decodeIp, gatewayRoutes, gatewayRuleset,
  nodeRoutes, nodeRuleset, tunnelPeer, type LiqoConfiguration, type LiqoIp, type RouteSpec,
} from './liqo-rules.ts';
import { Lab, removeLeftovers } from './netns.ts';

export interface PodSpec {
  readonly name: string;
  readonly ip: string;
}

export interface ClusterSpec {
  /** The cluster ID (Liqo's), e.g. cluster2. */
  readonly id: string;
  /** A short name for namespaces and interfaces, e.g. c2. */
  readonly short: string;
  /** The cluster's own Liqo Configurations, one per peer, as JSON objects. */
  readonly configurations: readonly unknown[];
  /** The cluster's ipam.liqo.io IPs (a hub's, one per offloaded pod). */
  readonly ips?: readonly unknown[];
  readonly pods: readonly PodSpec[];
  /**
   * Networks this cluster reaches through a peer's gateway without a Configuration mapping them: the hub-view pod
   * CIDRs that a hub reflecting hub-view addresses hands out (an FCC's podCIDR). Not Liqo v1.2.0's: see the docs.
   */
  readonly throughPeer?: readonly { readonly peer: string; readonly cidr: string }[];
}

export interface LinkSpec {
  /** How the link is called in counts and output, e.g. `leaf2-hub`. */
  readonly name: string;
  readonly server: string;
  readonly client: string;
}

export interface DataPathSpec {
  readonly clusters: readonly ClusterSpec[];
  readonly links: readonly LinkSpec[];
}

interface Gateway {
  readonly cluster: ClusterSpec;
  readonly cfg: LiqoConfiguration;
  readonly peer: string;
  readonly ns: string;
  readonly mode: 'server' | 'client';
  /** The gateway's address on its link to the node, and the node's. */
  readonly address: string;
  readonly nodeAddress: string;
  readonly nodeInterface: string;
}

/** The gateway's interface towards the node (Liqo: a Geneve interface per node). */
const NODE_LINK = 'liqo.node';
const WG_PORT = 51820;
/** The policy routing table of a gateway's Liqo routes (Liqo names one per Configuration). */
const GATEWAY_TABLE = '100';
const COUNT_TABLE = 'swdp-count';
const run = promisify(execFile);

export type LinkCounts = Record<string, number>;

const ECHO_SERVER = `import dgram from 'node:dgram';
const socket = dgram.createSocket('udp4');
socket.on('message', (message, remote) => socket.send(message, remote.port, remote.address));
socket.bind(Number(process.argv[2]), () => process.stdout.write('listening\\n'));
`;

// One request per stdin line ({"id","host","port","timeoutMs"}), one answer per stdout line ({"id","ok","ms"});
// requests may overlap (the echo carries the id back).
const PROBE_CLIENT = `import dgram from 'node:dgram';
import { createInterface } from 'node:readline';
const socket = dgram.createSocket('udp4');
const pending = new Map();
socket.on('message', (message, remote) => {
  const id = message.toString();
  const waiting = pending.get(id);
  if (waiting === undefined) return;
  clearTimeout(waiting.timer);
  pending.delete(id);
  process.stdout.write(JSON.stringify({ id, ok: true, from: remote.address, ms: Number(process.hrtime.bigint() - waiting.at) / 1e6 }) + '\\n');
});
socket.bind(0, () => {
  process.stdout.write(JSON.stringify({ ready: true }) + '\\n');
  createInterface({ input: process.stdin }).on('line', (line) => {
    const { id, host, port, timeoutMs } = JSON.parse(line);
    const timer = setTimeout(() => {
      pending.delete(id);
      process.stdout.write(JSON.stringify({ id, ok: false, ms: timeoutMs }) + '\\n');
    }, timeoutMs);
    pending.set(id, { at: process.hrtime.bigint(), timer });
    socket.send(id, port, host);
  });
});
`;

function nodeIp(index: number): string {
  return `172.31.0.${index + 1}`;
}

function key(): { privateHex: string; publicHex: string } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  // The raw 32 bytes end both DER encodings (PKCS#8 and SPKI) of an X25519 key.
  const raw = (der: Buffer) => der.subarray(der.length - 32).toString('hex');
  return { privateHex: raw(privateKey.export({ format: 'der', type: 'pkcs8' })), publicHex: raw(publicKey.export({ format: 'der', type: 'spki' })) };
}

/** One exchange on wireguard-go's UAPI socket (https://www.wireguard.com/xplatform/); fails on a non-zero errno. */
function uapi(socket: string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    let answer = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      answer += chunk;
      if (!answer.endsWith('\n\n')) return;
      conn.end();
      if (/^errno=0$/m.test(answer)) resolve(answer);
      else reject(new Error(`wireguard-go refused ${request.split('\n')[0]}: ${answer.trim()}`));
    });
    conn.on('error', reject);
    conn.write(request);
  });
}

export interface ProbeResult {
  readonly ok: boolean;
  readonly ms: number;
  /** The links whose counters moved during the probe. */
  readonly links: readonly string[];
}

export class DataPath {
  readonly lab = new Lab();
  private readonly gateways: Gateway[] = [];
  private readonly clients = new Map<string, { stdin: Writable; answers: Map<string, (answer: { ok: boolean; ms: number }) => void> }>();
  private probeSeq = 0;
  /** Per link name, the gateway namespace whose counters stand for it. */
  private readonly counted = new Map<string, string>();
  /** Per link name, the two gateways' underlay namespaces, for cutting it. */
  private readonly ends = new Map<string, readonly [string, string]>();
  /** Gateway namespaces stopped by setGateway, with their pids. */
  private readonly frozen = new Map<string, number[]>();
  readonly wireguardBuild: { built: boolean; seconds: number };
  private readonly wireguardBinary: string;
  private readonly started = Date.now();
  private laidOutAt = 0;

  private constructor(readonly spec: DataPathSpec) {
    const built = buildWireguard();
    this.wireguardBuild = { built: built.built, seconds: built.seconds };
    this.wireguardBinary = join(built.dir, 'wireguard-go');
  }

  /** Milliseconds from the start to everything laid out (namespaces, tunnels, tables, routes). */
  get setupMs(): number {
    return this.laidOutAt - this.started;
  }

  static async start(spec: DataPathSpec): Promise<DataPath> {
    removeLeftovers();
    const path = new DataPath(spec);
    try {
      await path.layOut();
      path.laidOutAt = Date.now();
      return path;
    } catch (error) {
      await path.destroy();
      throw error;
    }
  }

  /** The node's own address. */
  nodeIp(cluster: string): string {
    return nodeIp(this.spec.clusters.indexOf(this.cluster(cluster)));
  }

  nodeNs(cluster: string): string {
    return this.lab.ns(`${this.cluster(cluster).short}-node`);
  }

  podNs(cluster: string, pod: string): string {
    return this.lab.ns(`${this.cluster(cluster).short}-${pod}`);
  }

  gatewayNs(cluster: string, peer: string): string {
    return this.lab.ns(`${this.cluster(cluster).short}-gw-${this.cluster(peer).short}`);
  }

  private cluster(id: string): ClusterSpec {
    const found = this.spec.clusters.find((cluster) => cluster.id === id);
    if (found === undefined) throw new Error(`no cluster ${id} in the data path`);
    return found;
  }

  private configurationFor(cluster: ClusterSpec, peer: string): LiqoConfiguration {
    const cfg = cluster.configurations.map(decodeConfiguration).find((candidate) => candidate.peer === peer);
    if (cfg === undefined) throw new Error(`${cluster.id} has no Configuration for ${peer}: no gateway without one`);
    return cfg;
  }

  private async layOut(): Promise<void> {
    const { lab } = this;
    for (const [index, cluster] of this.spec.clusters.entries()) {
      const node = await lab.add(`${cluster.short}-node`);
      // The node's own address (its InternalIP), on loopback: nothing routes to it, kube-proxy names itself by it.
      await lab.ip(node, ['addr', 'add', `${nodeIp(index)}/32`, 'dev', 'lo']);
      for (const pod of cluster.pods) {
        const ns = await lab.add(`${cluster.short}-${pod.name}`);
        const hostSide = `p-${pod.name}`.slice(0, 15);
        await lab.veth(ns, 'eth0', node, hostSide);
        await lab.ip(ns, ['addr', 'add', `${pod.ip}/32`, 'dev', 'eth0']);
        await lab.ip(ns, ['route', 'add', '169.254.1.1', 'dev', 'eth0']);
        await lab.ip(ns, ['route', 'add', 'default', 'via', '169.254.1.1', 'dev', 'eth0']);
        await lab.ip(node, ['addr', 'add', '169.254.1.1/32', 'dev', hostSide]);
        await lab.ip(node, ['route', 'add', `${pod.ip}/32`, 'dev', hostSide]);
      }
    }
    let gatewayIndex = 0;
    for (const [linkIndex, link] of this.spec.links.entries()) {
      const pair: Gateway[] = [];
      for (const [side, peer, mode] of [[link.server, link.client, 'server'], [link.client, link.server, 'client']] as const) {
        const cluster = this.cluster(side);
        const ns = await lab.add(`${cluster.short}-gw-${this.cluster(peer).short}`);
        gatewayIndex++;
        const gateway: Gateway = {
          cluster, cfg: this.configurationFor(cluster, peer), peer, ns, mode,
          address: `10.80.${gatewayIndex}.2`, nodeAddress: `10.80.${gatewayIndex}.1`, nodeInterface: `gw-${this.cluster(peer).short}`,
        };
        const node = this.nodeNs(side);
        await lab.veth(ns, NODE_LINK, node, gateway.nodeInterface);
        await lab.ip(ns, ['addr', 'add', `${gateway.address}/30`, 'dev', NODE_LINK]);
        await lab.ip(node, ['addr', 'add', `${gateway.nodeAddress}/30`, 'dev', gateway.nodeInterface]);
        // Everything not for the tunnel goes back into the cluster (Liqo: the pod network and the Geneve overlay).
        await lab.ip(ns, ['route', 'add', 'default', 'via', gateway.nodeAddress]);
        pair.push(gateway);
        this.gateways.push(gateway);
      }
      const [server, client] = pair as [Gateway, Gateway];
      // The underlay: the two gateway pods' eth0, as the Internet between the clusters.
      await lab.veth(server.ns, 'eth0', client.ns, 'eth0');
      const underlay = (host: number) => `192.168.${linkIndex + 1}.${host}`;
      await lab.ip(server.ns, ['addr', 'add', `${underlay(1)}/30`, 'dev', 'eth0']);
      await lab.ip(client.ns, ['addr', 'add', `${underlay(2)}/30`, 'dev', 'eth0']);
      await this.tunnel(server, client, underlay(1), underlay(2));
      this.counted.set(link.name, client.ns);
      this.ends.set(link.name, [server.ns, client.ns]);
    }
    for (const cluster of this.spec.clusters) await this.program(cluster);
  }

  private async tunnel(server: Gateway, client: Gateway, serverAddress: string, clientAddress: string): Promise<void> {
    const keys = new Map([[server, key()], [client, key()]]);
    mkdirSync('/run/wireguard', { recursive: true });
    for (const gateway of [server, client]) {
      // wireguard-go keeps its UAPI socket in /run/wireguard/<interface>.sock, and every gateway's interface is
      // liqo-tunnel: each runs in a mount namespace of its own where that folder is one of this run's.
      const sockets = join(this.lab.dir, `wg-${gateway.ns}`);
      mkdirSync(sockets, { recursive: true });
      this.lab.spawn(gateway.ns, ['env', 'WG_PROCESS_FOREGROUND=1', this.wireguardBinary, '-f', TUNNEL_INTERFACE], join(this.lab.dir, `${gateway.ns}-wireguard.log`),
        ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', 'mount --bind "$0" /run/wireguard && exec "$@"', sockets]);
      const socket = join(sockets, `${TUNNEL_INTERFACE}.sock`);
      // The socket file appears at bind(), a moment before wireguard-go listens on it: ask until it answers.
      await waitFor(async () => existsSync(socket) && await uapi(socket, 'get=1\n\n').then(() => true, () => false),
        { timeoutMs: 10_000, intervalMs: 20, description: `wireguard-go's socket in ${gateway.ns}` });
      const own = keys.get(gateway);
      const other = keys.get(gateway === server ? client : server);
      // Both ends know the other's endpoint (Liqo's server learns it from the client's first handshake): whichever
      // side sends first, the tunnel comes up.
      const endpoint = gateway === client ? `endpoint=${serverAddress}:${WG_PORT}\n` : `endpoint=${clientAddress}:${WG_PORT + 1}\n`;
      await uapi(socket, `set=1\nprivate_key=${own?.privateHex}\nlisten_port=${gateway === server ? WG_PORT : WG_PORT + 1}\nreplace_peers=true\n`
        + `public_key=${other?.publicHex}\n${endpoint}replace_allowed_ips=true\nallowed_ip=0.0.0.0/0\n\n`);
      const address = gateway.mode === 'server' ? SERVER_INTERFACE_IP : CLIENT_INTERFACE_IP;
      await this.lab.ip(gateway.ns, ['addr', 'add', `${address}/30`, 'dev', TUNNEL_INTERFACE]);
      await this.lab.ip(gateway.ns, ['link', 'set', TUNNEL_INTERFACE, 'up']);
    }
  }

  /** Liqo's tables and routes of one cluster, and the test's counters on its gateways. */
  private async program(cluster: ClusterSpec): Promise<void> {
    const node = this.nodeNs(cluster.id);
    const ips: LiqoIp[] = (cluster.ips ?? []).map(decodeIp);
    const gateways = this.gateways.filter((gateway) => gateway.cluster === cluster);
    const routes: RouteSpec[] = [];
    for (const gateway of gateways) routes.push(...nodeRoutes(gateway.cfg, gateway.address));
    for (const { peer, cidr } of cluster.throughPeer ?? []) {
      const gateway = gateways.find((candidate) => candidate.peer === peer);
      if (gateway === undefined) throw new Error(`${cluster.id} has no gateway for ${peer}`);
      routes.push({ dst: cidr, via: gateway.address, source: 'a hub reflecting hub-view addresses' });
    }
    for (const route of routes) await this.lab.ip(node, ['route', 'add', route.dst, 'via', route.via]);
    await this.nft(node, nodeRuleset(gateways.map((gateway) => gateway.cfg)));
    for (const gateway of gateways) {
      const own = gatewayRoutes(gateway.cfg, gateway.mode, NODE_LINK);
      const through: RouteSpec[] = (cluster.throughPeer ?? []).filter((entry) => entry.peer === gateway.peer)
        .map((entry) => ({ dst: entry.cidr, via: tunnelPeer(gateway.mode), iif: NODE_LINK, source: 'a hub reflecting hub-view addresses' }));
      for (const route of [...own, ...through]) {
        await this.lab.ip(gateway.ns, ['rule', 'add', ...(route.iif === undefined ? [] : ['iif', route.iif]), 'to', route.dst, 'lookup', GATEWAY_TABLE]);
        await this.lab.ip(gateway.ns, ['route', 'add', route.dst, 'via', route.via, 'table', GATEWAY_TABLE]);
      }
      await this.nft(gateway.ns, `${gatewayRuleset(gateway.cfg, ips)}\n${countTable()}`);
    }
  }

  private async nft(ns: string, ruleset: string): Promise<void> {
    writeFileSync(join(this.lab.dir, `${ns}.nft`), `${ruleset}\n`);
    await this.lab.exec(ns, ['nft', '-f', join(this.lab.dir, `${ns}.nft`)]);
  }

  /** The nft ruleset of a namespace as the kernel holds it. */
  ruleset(ns: string): Promise<string> {
    return this.lab.exec(ns, ['nft', 'list', 'ruleset']);
  }

  /** Packets the peerings carried so far, per link (both directions). */
  async counts(): Promise<LinkCounts> {
    const entries = await Promise.all([...this.counted].map(async ([link, ns]) => {
      const listing = JSON.parse(await this.lab.exec(ns, ['nft', '-j', 'list', 'counters', 'table', 'inet', COUNT_TABLE])) as {
        nftables: { counter?: { name: string; packets: number } }[];
      };
      const packets = listing.nftables.reduce((sum, item) => sum + (item.counter?.packets ?? 0), 0);
      return [link, packets] as const;
    }));
    return Object.fromEntries(entries);
  }

  /** The tunnel addresses of `cluster`'s gateway for `peer` and of the peer's gateway at the other end. */
  tunnelAddresses(cluster: string, peer: string): { own: string; peer: string } {
    const gateway = this.gateway(cluster, peer);
    return { own: gateway.mode === 'server' ? SERVER_INTERFACE_IP : CLIENT_INTERFACE_IP, peer: tunnelPeer(gateway.mode) };
  }

  /**
   * Stops (SIGSTOP) or resumes (SIGCONT) every process of `cluster`'s gateway for `peer`, as a gateway pod that hangs
   * and comes back: its tunnel and whatever else runs there (the connection check) at once. Returns the pids.
   */
  async setGateway(cluster: string, peer: string, state: 'frozen' | 'running'): Promise<number[]> {
    const { ns } = this.gateway(cluster, peer);
    const pids = (await run('ip', ['netns', 'pids', ns])).stdout.split('\n').map(Number).filter((pid) => pid > 0);
    if (pids.length === 0) throw new Error(`no process in ${ns}`);
    for (const pid of pids) process.kill(pid, state === 'frozen' ? 'SIGSTOP' : 'SIGCONT');
    if (state === 'frozen') this.frozen.set(ns, pids);
    else this.frozen.delete(ns);
    return pids;
  }

  private gateway(cluster: string, peer: string): Gateway {
    const found = this.gateways.find((gateway) => gateway.cluster.id === cluster && gateway.peer === peer);
    if (found === undefined) throw new Error(`${cluster} has no gateway for ${peer}`);
    return found;
  }

  /** Cuts or restores a peering's underlay (both gateways' eth0): its tunnel carries nothing while cut. */
  async setLink(link: string, state: 'up' | 'down'): Promise<void> {
    const ends = this.ends.get(link);
    if (ends === undefined) throw new Error(`no link ${link}`);
    for (const ns of ends) await this.lab.ip(ns, ['link', 'set', 'eth0', state]);
  }

  /** Starts a UDP echo server in a pod. */
  async echoServer(cluster: string, pod: string, port: number): Promise<void> {
    const script = join(this.lab.dir, 'echo.mjs');
    writeFileSync(script, ECHO_SERVER);
    const log = join(this.lab.dir, `${pod}-echo.log`);
    this.lab.spawn(this.podNs(cluster, pod), [process.execPath, script, String(port)], log);
    await waitFor(async () => (await this.lab.exec(this.podNs(cluster, pod), ['ss', '-uln'])).includes(`:${port} `),
      { timeoutMs: 15_000, description: `the echo server in ${pod}` });
  }

  private async client(cluster: string, pod: string) {
    const ns = this.podNs(cluster, pod);
    const running = this.clients.get(ns);
    if (running !== undefined) return running;
    const script = join(this.lab.dir, 'probe.mjs');
    writeFileSync(script, PROBE_CLIENT);
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, script], { detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
    this.lab.adopt(child);
    const { stdin, stdout } = child;
    if (stdin === null || stdout === null) throw new Error('the probe client has no pipes');
    const answers = new Map<string, (answer: { ok: boolean; ms: number } | Error) => void>();
    let ready: (outcome?: Error) => void = () => {};
    const isReady = new Promise<void>((resolve, reject) => {
      ready = (outcome) => (outcome === undefined ? resolve() : reject(outcome));
    });
    createInterface({ input: stdout }).on('line', (line) => {
      const answer = JSON.parse(line) as { ready?: boolean; id?: string; ok: boolean; ms: number };
      if (answer.ready) ready();
      if (answer.id !== undefined) answers.get(answer.id)?.(answer);
    });
    // A client that dies fails its start and every probe waiting on it, instead of leaving them waiting forever.
    child.once('exit', (code, signal) => {
      const died = new Error(`the probe client in ${ns} exited (${code ?? signal})`);
      this.clients.delete(ns);
      ready(died);
      for (const settle of answers.values()) settle(died);
    });
    await isReady;
    const entry = { stdin, answers };
    this.clients.set(ns, entry);
    return entry;
  }

  /** One UDP probe from a pod: whether it was answered within `timeoutMs`, and how fast. */
  async probeOnce(from: { cluster: string; pod: string }, to: { host: string; port: number }, timeoutMs = 1000): Promise<{ ok: boolean; ms: number }> {
    const client = await this.client(from.cluster, from.pod);
    const id = `probe-${++this.probeSeq}`;
    const answer = await new Promise<{ ok: boolean; ms: number } | Error>((resolve) => {
      client.answers.set(id, resolve);
      client.stdin.write(`${JSON.stringify({ id, host: to.host, port: to.port, timeoutMs })}\n`);
    });
    client.answers.delete(id);
    if (answer instanceof Error) throw answer;
    return answer;
  }

  /** One UDP probe from a pod: whether it was answered, and the links it crossed (the counters that moved). */
  async probe(from: { cluster: string; pod: string }, to: { host: string; port: number }, timeoutMs = 1000): Promise<ProbeResult> {
    const before = await this.counts();
    const answer = await this.probeOnce(from, to, timeoutMs);
    const after = await this.counts();
    return { ok: answer.ok, ms: answer.ms, links: Object.keys(after).filter((link) => (after[link] ?? 0) !== (before[link] ?? 0)) };
  }

  async destroy(): Promise<void> {
    // A stopped process keeps a SIGTERM pending: resumed, the gateways stop at once instead of at the SIGKILL.
    for (const pids of this.frozen.values()) {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // Gone already.
        }
      }
    }
    this.frozen.clear();
    await this.lab.destroy();
  }
}

/**
 * The test's own counters: the packets a gateway forwards into its tunnel and out of it, that is the cluster's
 * traffic the peering carries, in and out. Counted on the tunnel interface in the forward hook rather than as
 * WireGuard messages on the underlay: the gateway's own packets on its tunnel (Liqo's connection check, PINGs and
 * PONGs every ping interval, conncheck.ts) and wireguard-go's keepalives cross the same underlay in the same kind of
 * message, which nothing outside the tunnel tells apart, and neither is forwarded.
 */
function countTable(): string {
  return [
    `table inet ${COUNT_TABLE} {`,
    '  counter in {}',
    '  counter out {}',
    '  chain forward { type filter hook forward priority 0; policy accept;',
    `    iifname "${TUNNEL_INTERFACE}" counter name "in"`,
    `    oifname "${TUNNEL_INTERFACE}" counter name "out"`,
    '  }',
    '}',
  ].join('\n');
}
