// Liqo v1.2.0's connection check (pkg/gateway/connection/conncheck, pkg/gateway/connection/k8s.go) as a process of a
// gateway namespace, next to its wireguard-go: what makes a Connection's status. Every gateway answers PINGs on its
// tunnel address with PONGs (the receiver); the leaf's gateway also PINGs the peer gateway's tunnel address every
// ping interval (the sender) and, on each PONG, writes its Connection's status (`Connected`, the latency and a
// timestamp of now) when the value changes or the stored timestamp is older than ping-update-status-interval; when
// no PONG came for loss-threshold intervals, it writes `Error` (the disconnect observer). The writes go to the
// leaf's API server through the run's unix socket (kube-proxy.ts), as a Status().Update: a PUT of the object last
// read, a conflict read again at the next PONG. A gateway stopped (SIGSTOP) stops its tunnel and this at once.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { waitFor } from '../../../support/wait-for.ts';
import type { Lab } from './netns.ts';

/** Liqo's ping-port. */
const PING_PORT = 12345;

export interface ConncheckTiming {
  /** Liqo's ping-interval (2 s). */
  readonly pingMs: number;
  /** Liqo's ping-loss-threshold (5): PINGs without a PONG before the Connection is written `Error`. */
  readonly lossThreshold: number;
  /** Liqo's ping-update-status-interval (10 s): the heartbeat's period while PONGs arrive. */
  readonly updateStatusMs: number;
}

export interface ConncheckWriter {
  /** The Connection's API path. */
  readonly path: string;
  /** The unix socket forwarded to the API server. */
  readonly socket: string;
  /** A kubeconfig whose first cluster and user are used (CA, client certificate and key as data). */
  readonly kubeconfig: string;
}

export interface ConncheckOptions {
  readonly lab: Lab;
  /** The gateway namespace. */
  readonly ns: string;
  /** The gateway's own tunnel address (the receiver listens there), and the peer's. */
  readonly address: string;
  readonly peerAddress: string;
  /** The peer's cluster ID: the key of Liqo's messages. */
  readonly peer: string;
  readonly timing: ConncheckTiming;
  /** The leaf's side: PINGs the peer and writes the Connection. Without it, the receiver alone (the peer's side). */
  readonly writer?: ConncheckWriter;
}

const CONNCHECK = `import dgram from 'node:dgram';
import https from 'node:https';
import { readFileSync } from 'node:fs';
const o = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const log = (line) => process.stdout.write(new Date().toISOString() + ' ' + line + '\\n');
const socket = dgram.createSocket('udp4');
// pkg/utils/time FormatLatency
const formatLatency = (ms) => ms === 0 ? 'N/A' : ms >= 1 ? Math.floor(ms) + 'ms' : Math.floor(ms * 1000) + 'μs';
// metav1.Time: RFC 3339 to the second.
const metaTime = (ms) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const sentAt = new Map();
let lastPong = Date.now();
let connected = false;

function api(method, body) {
  return new Promise((resolve, reject) => {
    const request = https.request({ socketPath: o.writer.socket, host: '127.0.0.1', method, path: o.writer.path + '/status',
      ca: o.writer.ca, cert: o.writer.cert, key: o.writer.key, headers: { 'content-type': 'application/json' }, timeout: 5000 }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { text += chunk; });
      response.on('end', () => response.statusCode < 300 ? resolve(JSON.parse(text)) : reject(new Error(method + ' ' + response.statusCode + ': ' + text.slice(0, 200))));
    });
    request.on('timeout', () => request.destroy(new Error(method + ' timed out')));
    request.on('error', reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

// The object last read or written (controller-runtime's cache); undefined: read it before the next write.
let cached;
let writing = Promise.resolve();
// pkg/gateway/connection/k8s.go UpdateConnectionStatus, one write at a time.
function update(value, latencyMs, at) {
  writing = writing.then(async () => {
    try {
      cached ??= await api('GET');
      const status = cached.status ?? {};
      const stored = Date.parse(status.latency?.timestamp ?? '') || 0;
      if (status.value === value && !(at - stored > o.timing.updateStatusMs)) return;
      if (status.value !== value) log('changing connection status to ' + value);
      const next = { ...cached, status: { ...status, value, latency: { value: formatLatency(latencyMs), timestamp: at === 0 ? null : metaTime(at) } } };
      cached = await api('PUT', next);
    } catch (error) {
      cached = undefined;
      log('unable to update connection: ' + error.message);
    }
  });
}

socket.on('message', (buffer, remote) => {
  let message;
  try { message = JSON.parse(buffer.toString()); } catch { return; }
  if (message.msgType === 'PING') {
    socket.send(JSON.stringify({ ...message, msgType: 'PONG' }), remote.port, remote.address);
  } else if (message.msgType === 'PONG' && o.writer !== undefined) {
    const sent = sentAt.get(message.timeStamp);
    const at = Date.parse(message.timeStamp);
    if (sent === undefined || at < lastPong) return;
    sentAt.delete(message.timeStamp);
    lastPong = at;
    connected = true;
    update('Connected', Number(process.hrtime.bigint() - sent) / 1e6, Date.now());
  }
});

socket.bind(o.port, o.address, () => {
  log('conncheck receiver: started');
  if (o.writer === undefined) return;
  // conncheck.go RunSender: a PING every ping interval.
  setInterval(() => {
    const timeStamp = new Date().toISOString();
    sentAt.set(timeStamp, process.hrtime.bigint());
    for (const key of sentAt.keys()) if (sentAt.size > 2 * o.timing.lossThreshold) sentAt.delete(key);
    socket.send(JSON.stringify({ clusterID: o.peer, msgType: 'PING', timeStamp }), o.port, o.peerAddress);
  }, o.timing.pingMs);
  // receiver.go RunDisconnectObserver: Error once no PONG came for the loss threshold.
  setInterval(() => {
    if (Date.now() - lastPong <= o.timing.pingMs * o.timing.lossThreshold) return;
    if (connected) log('conncheck receiver: ' + o.peer + ' unreachable');
    connected = false;
    update('Error', 0, 0);
  }, Math.max(10, o.timing.pingMs * o.timing.lossThreshold / 10));
});
`;

/** Starts the connection check in a gateway namespace; resolves once its receiver listens. */
export async function startConncheck(options: ConncheckOptions): Promise<void> {
  const { lab, ns } = options;
  const script = join(lab.dir, 'conncheck.mjs');
  writeFileSync(script, CONNCHECK);
  const config = join(lab.dir, `${ns}-conncheck.json`);
  writeFileSync(config, JSON.stringify({
    port: PING_PORT, address: options.address, peerAddress: options.peerAddress, peer: options.peer, timing: options.timing,
    writer: options.writer === undefined ? undefined : { path: options.writer.path, socket: options.writer.socket, ...credentials(options.writer.kubeconfig) },
  }), { mode: 0o600 });
  const logFile = join(lab.dir, `${ns}-conncheck.log`);
  lab.spawn(ns, [process.execPath, script, config], logFile);
  await waitFor(() => readFileSync(logFile, 'utf8').includes('receiver: started'), { timeoutMs: 15_000, description: `the connection check in ${ns}` });
}

function credentials(kubeconfig: string): { ca: string; cert: string; key: string } {
  const config = parse(readFileSync(kubeconfig, 'utf8')) as {
    clusters: { cluster: Record<string, string> }[];
    users: { user: Record<string, string> }[];
  };
  const data = (value: string | undefined, what: string) => {
    if (value === undefined) throw new Error(`${kubeconfig} has no ${what}`);
    return Buffer.from(value, 'base64').toString('utf8');
  };
  return {
    ca: data(config.clusters[0]?.cluster['certificate-authority-data'], 'certificate-authority-data'),
    cert: data(config.users[0]?.user['client-certificate-data'], 'client-certificate-data'),
    key: data(config.users[0]?.user['client-key-data'], 'client-key-data'),
  };
}
