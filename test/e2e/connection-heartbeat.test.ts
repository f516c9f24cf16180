// A dead gateway is a dead network, on two real control planes with Liqo v1.2.0's own writer and the real webhook (the
// direct-connections world of support/direct-world.ts: the leaf has a direct network to cluster3). The leaf's
// Connection to cluster3 is written as Liqo's gateway writes it (pkg/gateway/connection/k8s.go UpdateConnectionStatus):
// on each answered ping, value and latency with a timestamp of now, once the stored timestamp (to the second) is older
// than ping-update-status-interval. Here the pings come every 500 ms and the interval is 2 s (Liqo: 2 s and 10 s), so
// a heartbeat every 2 to 3 s, and the webhook runs with --connection-stale-after 8s (the default's ratio: 30 s against
// 10 to 12 s). While it beats, cluster3 stays direct; when it stops, with the Connection still `Connected`, the shadow
// and the EndpointSlice Liqo writes from it move to the hub path within the bound plus one pass; when it beats again,
// back. A Connection without a timestamp (Liqo's pings off) never goes stale.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { StatusReport } from '../../src/commands/status.ts';
import { heartbeatNow } from '../support/builders.ts';
import type { RunningServer } from '../support/process.ts';
import { runCli } from '../support/run-cli.ts';
import { killServer } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { liqoVersion } from './liqo-writer/build.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import type { KubeClient, KubeObject } from './support/kube-client.ts';
import { seedDirectWorld, startShippedWebhook, webShadow } from './support/direct-world.ts';
import { startLiqoWriter, type LiqoWriter } from './support/liqo.ts';
import { skipReason } from './support/skip.ts';
import { HubReflector } from './support/virtual-kubelet.ts';
import { connectionPath, CONVERGE, SHADOWS, SLICES } from './support/world-paths.ts';

const PING_MS = 500;
const INTERVAL_MS = 2000;
const STALE_AFTER_MS = 8000;
/** One controller pass over this world's two objects, and Liqo's rewrite of the slice, on 2 loaded cores. */
const PASS_MS = 15_000;
/** How long the heartbeat runs on time, watched for a failover none should make: several bounds over. */
const ON_TIME_MS = 60_000;
/** cluster3's web-1 as the shadow lists it: repaired into cluster3's own pods (direct), or the hub's IP (hub path). */
const SHADOW_DIRECT = '10.200.0.11';
const SHADOW_HUB = '10.70.0.4';
/** The same pod in the EndpointSlice Liqo writes: the leaf's view of cluster3, or of the hub's external CIDR. */
const SLICE_DIRECT = '10.203.0.11';
const SLICE_HUB = '10.202.0.4';

const skip = skipReason();

/** Liqo's gateway writing its Connection's heartbeat: pings answered every PING_MS, a write once INTERVAL_MS passed. */
class GatewayHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private stamp = 0;
  writes = 0;
  /** Writes the API server refused or did not answer: Liqo's gateway retries at the next pong, and so does this. */
  failed = 0;
  /** performance.now() of the last write the API server acknowledged. */
  lastWriteAt = 0;

  constructor(private readonly admin: KubeClient, private readonly peer: string) {}

  start(): void {
    this.timer = setInterval(() => {
      const now = Date.now();
      if (now - this.stamp <= INTERVAL_MS) return;
      const timestamp = heartbeatNow(now);
      this.stamp = Date.parse(timestamp);
      this.inFlight = this.inFlight.then(async () => {
        try {
          await this.admin.ok('PATCH', `${connectionPath(this.peer)}/status`,
            { status: { value: 'Connected', latency: { value: '3ms', timestamp } } }, { contentType: 'application/merge-patch+json' });
          this.writes++;
          this.lastWriteAt = performance.now();
        } catch {
          this.failed++;
          this.stamp = 0;
        }
      });
    }, PING_MS);
  }

  /** The gateway frozen: no write after this returns. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }
}

function addresses(object: KubeObject | undefined): string[] {
  const endpoints = object?.kind === 'ShadowEndpointSlice' ? (object.spec as { template: { endpoints?: unknown } }).template.endpoints : object?.endpoints;
  return ((endpoints ?? []) as { addresses: string[] }[]).flatMap((endpoint) => endpoint.addresses);
}

describe(`Connection heartbeats on real Kubernetes ${kubernetesVersion()} with Liqo ${liqoVersion()}'s writer and the webhook`, { skip }, () => {
  let hub: ControlPlane;
  let leaf: ControlPlane;
  let admin: KubeClient;
  let writer: LiqoWriter | undefined;
  let webhook: RunningServer | undefined;
  let reflector: HubReflector | undefined;
  let gateway: GatewayHeartbeat;
  const made: string[] = [];

  /** Which path cluster3's pod takes in the stored shadow and in Liqo's EndpointSlice; `mixed` while they differ. */
  const path = async (): Promise<'direct' | 'hub' | 'mixed'> => {
    const shadow = addresses(await admin.get<KubeObject>(`${SHADOWS}/web`));
    const slice = addresses(await admin.get<KubeObject>(`${SLICES}/web`).catch(() => undefined));
    if (shadow.includes(SHADOW_DIRECT) && slice.includes(SLICE_DIRECT)) return 'direct';
    if (shadow.includes(SHADOW_HUB) && slice.includes(SLICE_HUB)) return 'hub';
    return 'mixed';
  };
  const until = (want: 'direct' | 'hub', timeoutMs: number) =>
    waitFor(async () => (await path()) === want, { timeoutMs, intervalMs: 100, description: `cluster3's shadow and slice on the ${want} path` });
  const failoversToHub = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${webhook?.opsPort}/metrics`)).text();
    return Number(/shortcut_webhook_failover_seconds_count\{direction="to-hub"\} (\d+)/.exec(text)?.[1] ?? 0);
  };

  before(async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'shortcut-e2e-heartbeat-'));
    made.push(logDir);
    [hub, leaf] = await Promise.all([startControlPlane(), startControlPlane()]);
    admin = leaf.admin;
    await seedDirectWorld(admin, hub.admin);
    gateway = new GatewayHeartbeat(admin, 'cluster3');
    gateway.start();
    webhook = await startShippedWebhook({ leaf, hub, made, serveArgs: ['--connection-stale-after', `${STALE_AFTER_MS / 1000}s`] });
    writer = startLiqoWriter(leaf.adminKubeconfig, join(logDir, 'liqo-writer.log'));
    reflector = new HubReflector(admin, 'demo');
    await reflector.reflect(webShadow());
  });

  after(async () => {
    await gateway?.stop();
    reflector?.stop();
    await killServer(webhook);
    await writer?.stop();
    await Promise.all([leaf?.stop(), hub?.stop()]);
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  test('a Connection rewritten at the cadence stays direct, bound after bound', async (t) => {
    await until('direct', 60_000);
    const writes = gateway.writes;
    const start = performance.now();
    while (performance.now() - start < ON_TIME_MS) {
      assert.equal(await path(), 'direct', `cluster3 left the direct path ${((performance.now() - start) / 1000).toFixed(1)} s into the on-time heartbeats`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    t.diagnostic(`${gateway.writes - writes} heartbeats in ${ON_TIME_MS / 1000} s (${gateway.failed} writes failed), none moved cluster3`);
    assert.ok(gateway.writes - writes >= ON_TIME_MS / (INTERVAL_MS + 1000) - 1, `the gateway kept writing (${gateway.writes - writes} heartbeats)`);
    assert.equal(await failoversToHub(), 0);
  });

  test('when its rewrites stop, with the Connection still Connected, the shadow and the slice move to the hub path within the bound plus one pass', async (t) => {
    await gateway.stop();
    const silentSince = gateway.lastWriteAt;
    await until('hub', STALE_AFTER_MS + PASS_MS + 10_000);
    const took = performance.now() - silentSince;
    t.diagnostic(`moved to the hub path ${took.toFixed(0)} ms after the last heartbeat (bound ${STALE_AFTER_MS} ms)`);
    assert.ok(took >= STALE_AFTER_MS - 1000, `not before the bound: moved ${took.toFixed(0)} ms after the last heartbeat`);
    assert.ok(took <= STALE_AFTER_MS + PASS_MS, `within the bound plus one pass: ${took.toFixed(0)} ms after the last heartbeat`);
    const connection = await admin.get<KubeObject>(connectionPath('cluster3'));
    assert.equal((connection.status as { value: string }).value, 'Connected', 'nothing said otherwise');
    // The peer's Event says the gateway stopped reporting and since when.
    const [lost] = await waitFor(async () => {
      const { items } = await admin.get<{ items: { reason: string; note: string }[] }>('/apis/events.k8s.io/v1/namespaces/liqo-tenant-cluster3/events');
      const found = items.filter((event) => event.reason === 'DirectNetworkLost');
      return found.length > 0 ? found : undefined;
    }, { ...CONVERGE, description: 'the DirectNetworkLost Event on the Connection' });
    assert.match(lost?.note ?? '', /connection-stale: the leaf's Liqo Connection liqo-tenant-cluster3\/gw-cluster3 to cluster3 reads Connected, but its gateway stopped reporting: no heartbeat since \d{4}-\d\d-\d\dT/);
    assert.equal(await failoversToHub(), 1);
    // status, a one-shot reader, allows the bound twice at first sight: once that passed, it shows the heartbeat's age.
    const report = await waitFor(async () => {
      const run = await runCli(['status', '--kubeconfig', leaf.adminKubeconfig, '--shortcuts-kubeconfig', hub.adminKubeconfig,
        '--connection-stale-after', `${STALE_AFTER_MS / 1000}s`, '-o', 'json']);
      assert.equal(run.code, 0, run.stderr);
      const parsed = JSON.parse(run.stdout) as StatusReport;
      return parsed.peers?.find((p) => p.peer === 'cluster3')?.connection?.startsWith('connection-stale') === true ? parsed : undefined;
    }, { timeoutMs: 60_000, intervalMs: 1000, description: 'status shows cluster3\'s Connection stale' });
    const cluster3 = report.peers?.find((p) => p.peer === 'cluster3');
    assert.match(cluster3?.connection ?? '', /^connection-stale \(last heartbeat \d+s ago, \d{4}-\d\d-\d\dT[\d:.]+Z\)$/);
    assert.equal(cluster3?.path, 'hub');
    assert.deepEqual(cluster3?.why.map((w) => w.reason), ['connection-stale']);
  });

  test('when it beats again, both go back to the direct path within a pass', async (t) => {
    gateway = new GatewayHeartbeat(admin, 'cluster3');
    gateway.start();
    await waitFor(async () => gateway.writes > 0, { ...CONVERGE, description: 'the first heartbeat written' });
    const resumed = gateway.lastWriteAt;
    await until('direct', PASS_MS + 10_000);
    const took = performance.now() - resumed;
    t.diagnostic(`back on the direct path ${took.toFixed(0)} ms after the first heartbeat`);
    assert.ok(took <= PASS_MS, `back within a pass: ${took.toFixed(0)} ms after the first heartbeat`);
  });

  test('a Connection without a latency timestamp (pings off) never goes stale', async () => {
    await gateway.stop();
    await admin.ok('PATCH', `${connectionPath('cluster3')}/status`, { status: { value: 'Connected', latency: null } }, { contentType: 'application/merge-patch+json' });
    const start = performance.now();
    while (performance.now() - start < 2 * STALE_AFTER_MS + 4000) {
      assert.equal(await path(), 'direct', `cluster3 left the direct path ${((performance.now() - start) / 1000).toFixed(1)} s after its heartbeat was removed`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(await failoversToHub(), 1, 'no failover since the one the stopped heartbeat made');
  });
});
