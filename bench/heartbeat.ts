// Section "heartbeat": no false failover while a gateway's heartbeats come on time, under load. On the real API
// server (bench/control-plane.ts), with the product as the chart runs it and --connection-stale-after at its default
// (30 s), the leaf's Connection to cluster3 is written as Liqo v1.2.0's gateway writes it
// (pkg/gateway/connection/connections_controller.go ForgeUpdateConnectionCallback, k8s.go UpdateConnectionStatus): on
// each answered ping (every 2 s) the Connection is read, and its status updated whole, `value: Connected` and
// `latency: {value, timestamp: now}`, once now is more than ping-update-status-interval (10 s) past the stored
// timestamp (kept to the second): a heartbeat every 10 to 12 s. Meanwhile, for BENCH_HEARTBEAT_SECONDS (600):
//   - a steady stream of Liqo-style server-side applies (the reflection's field manager, forced) of SLICES reflected
//     slices of cluster3's hub, each moving a hub-only address, through the product's webhook, paced at
//     BENCH_HEARTBEAT_APPLIES_PER_SECOND (20);
//   - every CHURN_MS, one Service churns: its slice deleted and the Service deleted and created again, then the slice
//     reflected anew through the webhook;
//   - a busy child process spinning on a core, for CPU pressure on the 2-core machine.
// The verdict, zero false failovers: a watch on the slices checks every stored version, none may be on the hub path;
// /metrics, read every second, gives cluster3's peer_path always direct, and failover_seconds{to-hub} and
// addresses_restored_total stay 0; the product's log never says connection-stale nor DirectNetworkLost.
// Then the positive control, so the section cannot pass by measuring nothing: the load stops, the heartbeats stop
// (the Connection still reads Connected), and every slice must be back on the hub path within the bound plus the pass
// that moves them (its failover_seconds), not before the bound. BENCH_TINY: a few seconds, with a heartbeat every 1 to
// 1.25 s and a bound of 4 s. Prints one JSON line.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { CONNECTION_STALE_AFTER_MS } from '../src/config.ts';
import { heartbeatNow } from '../test/support/builders.ts';
import { waitFor } from '../test/support/wait-for.ts';
import type { KubeClient, KubeObject } from '../test/e2e/support/kube-client.ts';
import { cpuSeconds, rawClient, startBench } from './control-plane.ts';
import { createNamespaces, createSlices, ENDPOINTS, reflectedSlice, sliceName, sliceNamespace, watchSlices } from './reflected-slices.ts';
import { progress, round, sized, sleep } from './stats.ts';

const SECONDS = Number(process.env.BENCH_HEARTBEAT_SECONDS ?? sized(600, 8));
/** Liqo's ping-interval and ping-update-status-interval (defaults 2 s and 10 s); tiny: the same ratio, faster. */
const PING_MS = sized(2000, 250);
const INTERVAL_MS = sized(10_000, 1000);
/** The product's default; tiny: the e2e's ratio to the interval, passed as the flag. */
const STALE_AFTER_MS = sized(CONNECTION_STALE_AFTER_MS, 4000);
const SLICES = sized(100, 4);
const APPLIES_PER_SECOND = Number(process.env.BENCH_HEARTBEAT_APPLIES_PER_SECOND ?? 20);
const CHURN_MS = sized(20_000, 2000);
const SAMPLE_MS = sized(1000, 250);
const CONNECTIONS = '/apis/networking.liqo.io/v1beta1/namespaces/liqo-tenant-cluster3/connections';
const CONNECTION = `${CONNECTIONS}/cluster3`;
const LIQO_MANAGER = 'shadow-endpointslice-controller';
/** The timer of a Connection gone silent and its view rebuild, on a loaded machine: above the pass it starts. */
const CONTROL_SLACK_MS = 2000;

/** Liqo's gateway, for the leaf's Connection to cluster3: pings answered every PING_MS, a status update once due. */
class Gateway {
  writes = 0;
  /** Updates the API server refused (a conflict with another writer) or did not answer: retried at the next pong. */
  failed = 0;
  /** performance.now() of the last update the API server acknowledged. */
  lastWriteAt = 0;
  maxWriteGapMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly admin: KubeClient) {}

  start(): void {
    this.timer = setInterval(() => this.pong(), PING_MS);
    this.pong();
  }

  /** The gateway frozen: no update after this returns. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }

  /** A pong: the receiver handles them one at a time, so one that comes while an update runs waits for none. */
  private pong(): void {
    if (this.inFlight !== undefined) return;
    this.inFlight = this.update().finally(() => { this.inFlight = undefined; });
  }

  private async update(): Promise<void> {
    try {
      const connection = await this.admin.get<KubeObject>(CONNECTION);
      const status = (connection.status ?? {}) as { value?: string; latency?: { timestamp?: string } };
      const now = Date.now();
      const stored = Date.parse(status.latency?.timestamp ?? '');
      if (status.value === 'Connected' && Number.isFinite(stored) && now - stored <= INTERVAL_MS) return;
      await this.admin.ok('PUT', `${CONNECTION}/status`,
        { ...connection, status: { ...status, value: 'Connected', latency: { value: `${1 + (this.writes % 3)}ms`, timestamp: heartbeatNow(now) } } });
      const at = performance.now();
      if (this.writes > 0) this.maxWriteGapMs = Math.max(this.maxWriteGapMs, at - this.lastWriteAt);
      this.writes++;
      this.lastWriteAt = at;
    } catch {
      this.failed++;
    }
  }
}

/** One sample of the product's /metrics: cluster3's path and reason, and the counters the verdict reads. */
interface MetricsSample { readonly path: string; readonly reason: string; readonly toHub: number; readonly toHubSeconds: number; readonly restored: number; readonly reconcilePatched: number }

function parseMetrics(text: string): MetricsSample {
  const line = text.split('\n').find((l) => l.startsWith('shortcut_webhook_peer_path{') && l.includes('peer="cluster3"') && l.endsWith(' 1')) ?? '';
  const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(line)?.[1] ?? 'none';
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    path: label('path'), reason: label('reason'),
    toHub: value(/^shortcut_webhook_failover_seconds_count\{direction="to-hub"\} (\S+)$/m),
    toHubSeconds: value(/^shortcut_webhook_failover_seconds_sum\{direction="to-hub"\} (\S+)$/m),
    restored: value(/^shortcut_webhook_addresses_restored_total (\S+)$/m),
    reconcilePatched: value(/^shortcut_webhook_slices_reconciled_total\{result="patched"\} (\S+)$/m),
  };
}

const bench = await startBench();
const burner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
process.on('exit', () => burner.kill('SIGKILL'));
const stops: (() => void)[] = [() => burner.kill('SIGKILL')];
try {
  // The gateway beats before the product starts, so that it sees a heartbeat from its first list on.
  const gateway = new Gateway(bench.admin);
  gateway.start();
  await waitFor(() => gateway.writes > 0, { timeoutMs: 60_000, description: 'the first heartbeat written' });
  stops.push(() => { void gateway.stop(); });

  // The product's own word on the peer, from its log as it comes.
  const said = { stale: [] as string[], lost: 0, late: 0 };
  const product = await bench.startProduct({
    keep: [], controller: true,
    args: STALE_AFTER_MS === CONNECTION_STALE_AFTER_MS ? [] : ['--connection-stale-after', `${STALE_AFTER_MS / 1000}s`],
    onLine: (line) => {
      if (line.includes('connection-stale') && said.stale.length < 20) said.stale.push(line);
      if (line.includes('"reason":"DirectNetworkLost"')) said.lost++;
      if (line.includes('heartbeat timer ran late')) said.late++;
    },
  });
  await bench.register('shortcut-webhook', `https://${bench.webhook.host}:${product.port}/mutate/endpointslices`);
  await createNamespaces(bench.admin);
  const slices = await watchSlices(bench.admin);
  stops.push(slices.stop);
  let watchEnded = false;
  void slices.ended.then(() => { watchEnded = true; });
  const client = rawClient(bench.cp, 2);
  stops.push(client.close);
  await createSlices(client, 0, SLICES, 2);
  await waitFor(() => slices.counts.shortcut === SLICES, { timeoutMs: 120_000, description: `all ${SLICES} slices stored on the shortcut` });

  // The heartbeats as a watcher of the Connection sees them, like the product's own watch: the longest silence.
  const seen = { count: 0, at: 0, maxGapMs: 0, stamp: '' };
  const connections = await bench.admin.get<{ metadata: { resourceVersion: string } }>(CONNECTIONS);
  const connectionWatch = await bench.admin.watch(CONNECTIONS, connections.metadata.resourceVersion, (event) => {
    const stamp = ((event.object.status ?? {}) as { latency?: { timestamp?: string } }).latency?.timestamp ?? '';
    if (event.type !== 'MODIFIED' || stamp === seen.stamp) return;
    const at = performance.now();
    if (seen.count > 0) seen.maxGapMs = Math.max(seen.maxGapMs, at - seen.at);
    seen.count++;
    seen.at = at;
    seen.stamp = stamp;
  });
  stops.push(connectionWatch.stop);

  const metrics = async () => parseMetrics(await (await fetch(`http://${bench.webhook.host}:${product.opsPort}/metrics`)).text());
  const before = await metrics();
  const writesBefore = gateway.writes;
  const failedBefore = gateway.failed;
  gateway.maxWriteGapMs = 0;
  slices.countHub();
  const cpuBefore = cpuSeconds(burner.pid);
  progress(`heartbeat: ${SECONDS} s of heartbeats every ${INTERVAL_MS / 1000} s (bound ${STALE_AFTER_MS / 1000} s) under ${APPLIES_PER_SECOND} applies/s, a churn every ${CHURN_MS / 1000} s and a busy core`);

  const started = performance.now();
  const ends = started + SECONDS * 1000;
  const load = { applies: 0, failedApplies: 0, churns: 0, samples: 0, offDirect: [] as string[], loadMax: 0 };
  const churning = new Set<number>();
  /** The slice whose apply is on its way, which a churn waits for. */
  let applying: number | undefined;
  const versions = new Map<number, number>();

  // Liqo's reflection applying the next version of each slice in turn, at a steady pace (behind by more than a
  // second, it starts the pace again rather than bursting).
  const applies = (async () => {
    let due = performance.now();
    for (let n = 0; performance.now() < ends; n++) {
      due += 1000 / APPLIES_PER_SECOND;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      else if (wait < -1000) due = performance.now();
      const i = n % SLICES;
      if (churning.has(i)) continue;
      const version = (versions.get(i) ?? 0) + 1;
      versions.set(i, version);
      applying = i;
      const body = JSON.stringify(reflectedSlice(i, version));
      const answer = await client.send('PATCH', `/apis/discovery.k8s.io/v1/namespaces/${sliceNamespace(i)}/endpointslices/${sliceName(i)}?fieldManager=${LIQO_MANAGER}&force=true`,
        body, 'application/apply-patch+yaml');
      applying = undefined;
      if (answer.status >= 300) load.failedApplies++;
      else load.applies++;
    }
  })();

  // A Service deleted and created again on the hub: Liqo deletes its reflected slice and reflects the new one.
  const churns = (async () => {
    for (let n = 0; performance.now() + CHURN_MS < ends; n++) {
      await sleep(CHURN_MS);
      const i = (n * 7) % SLICES;
      const [namespace, name] = [sliceNamespace(i), sliceName(i)];
      churning.add(i);
      try {
        await waitFor(() => applying !== i, { timeoutMs: 30_000, intervalMs: 5, description: `the apply of ${name} answered` });
        await bench.admin.ok('DELETE', `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices/${name}`);
        await bench.admin.request('DELETE', `/api/v1/namespaces/${namespace}/services/${name}`);
        await bench.admin.ok('POST', `/api/v1/namespaces/${namespace}/services`,
          { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] } });
        versions.delete(i);
        await bench.admin.ok('POST', `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, reflectedSlice(i));
        load.churns++;
      } finally {
        churning.delete(i);
      }
    }
  })();

  // The product's metrics, read on a steady clock while it all runs.
  const sampling = (async () => {
    while (performance.now() < ends) {
      const sample = await metrics();
      load.samples++;
      load.loadMax = Math.max(load.loadMax, loadavg()[0] ?? 0);
      if ((sample.path !== 'direct' || sample.reason !== 'direct') && load.offDirect.length < 20) {
        load.offDirect.push(`${round((performance.now() - started) / 1000, 1)} s: ${sample.path} (${sample.reason})`);
      }
      await sleep(SAMPLE_MS);
    }
  })();
  let lastReport = started;
  while (performance.now() < ends) {
    await sleep(Math.min(1000, Math.max(0, ends - performance.now())));
    if (watchEnded) throw new Error('the API server ended the watch on the slices: versions could go unchecked');
    if (performance.now() - lastReport >= 60_000) {
      lastReport = performance.now();
      progress(`heartbeat: ${round((lastReport - started) / 1000, 0)} s, ${gateway.writes - writesBefore} heartbeats, ${load.applies} applies, ${slices.onHub.count} versions on the hub path`);
    }
  }
  await Promise.all([applies, churns, sampling]);
  const soakSeconds = (performance.now() - started) / 1000;
  const after = await metrics();
  const soak = {
    heartbeats: gateway.writes - writesBefore, heartbeatsFailed: gateway.failed - failedBefore,
    maxWriteGapSeconds: round(gateway.maxWriteGapMs / 1000, 2), heartbeatsSeen: seen.count, maxSeenGapSeconds: round(seen.maxGapMs / 1000, 2),
    applies: load.applies, appliesFailed: load.failedApplies, appliesPerSecond: round(load.applies / soakSeconds, 1), churns: load.churns,
    versionsChecked: slices.versions(), violations: slices.violations.length, versionsOnHub: slices.onHub.count,
    metricsSamples: load.samples, samplesOffDirect: load.offDirect.length,
    failoversToHub: after.toHub - before.toHub, addressesRestored: after.restored - before.restored,
    reconcilePatched: after.reconcilePatched - before.reconcilePatched,
    staleLogLines: said.stale.length, directNetworkLostLogLines: said.lost, heartbeatTimerLate: said.late,
    burnerCpuSeconds: round(cpuSeconds(burner.pid) - cpuBefore, 1), loadAverageMax: round(load.loadMax, 2),
  };
  // A false failover is the product moving cluster3 off the direct network: its own count, with every other sign of one.
  const falseFailovers = soak.failoversToHub;
  const signs = soak.versionsOnHub + soak.samplesOffDirect + soak.staleLogLines + soak.directNetworkLostLogLines + soak.addressesRestored + soak.violations;
  for (const line of [...slices.violations, ...slices.onHub.first, ...load.offDirect, ...said.stale]) progress(`heartbeat: ${line.slice(0, 400)}`);
  progress(`heartbeat: ${soak.heartbeats} heartbeats, ${soak.applies} applies, ${soak.churns} churns, ${falseFailovers} false failovers, ${signs} other signs of one`);

  // The positive control: the gateway stops, the load with it; the Connection still reads Connected.
  const staleBefore = said.stale.length;
  await gateway.stop();
  const silentSince = gateway.lastWriteAt;
  progress('heartbeat: the heartbeats stop');
  await waitFor(() => slices.counts.hub === SLICES, { timeoutMs: STALE_AFTER_MS + 180_000, intervalMs: 20, description: `all ${SLICES} slices on the hub path` });
  const tookMs = performance.now() - silentSince;
  const moved = await waitFor(async () => {
    const sample = await metrics();
    return sample.toHub > after.toHub ? sample : undefined;
  }, { timeoutMs: 60_000, intervalMs: 100, description: 'the failover observed in failover_seconds' });
  const connection = await bench.admin.get<KubeObject>(CONNECTION);
  const control = {
    tookSeconds: round(tookMs / 1000, 2), passSeconds: round(moved.toHubSeconds - after.toHubSeconds, 2),
    reason: moved.reason, connectionValue: String((connection.status as { value?: unknown } | undefined)?.value),
    staleLogLines: said.stale.length - staleBefore, versionsChecked: slices.versions(), violations: slices.violations.length,
  };
  progress(`heartbeat: every slice on the hub path ${control.tookSeconds} s after the last heartbeat (bound ${STALE_AFTER_MS / 1000} s, pass ${control.passSeconds} s), reason ${control.reason}`);
  console.log(JSON.stringify({
    seconds: round(soakSeconds, 1), pingSeconds: PING_MS / 1000, intervalSeconds: INTERVAL_MS / 1000, staleAfterSeconds: STALE_AFTER_MS / 1000,
    slices: SLICES, endpoints: ENDPOINTS, nodeFlags: product.nodeFlags, nodeOptions: product.nodeOptions,
    ...soak, falseFailovers, otherSigns: signs,
    control: { ...control, inBound: tookMs >= STALE_AFTER_MS - 1000 && tookMs <= STALE_AFTER_MS + control.passSeconds * 1000 + CONTROL_SLACK_MS
      && control.reason === 'connection-stale' && control.connectionValue === 'Connected' && control.violations === 0, slackSeconds: CONTROL_SLACK_MS / 1000 },
  }));
} finally {
  for (const stop of stops.reverse()) stop();
  await bench.close();
}
