// `shortcut-webhook status` on two real control planes, with Liqo v1.2.0's own writer and the real webhook: the
// direct-connections world (support/direct-world.ts: the hub remapped cluster3 and cluster4; the leaf has a direct
// network to cluster3 only). A Connection that goes to Error and back changes the status lines: each wait
// polls status itself until it prints the state the test then asserts, within a bound.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { StatusReport } from '../../src/commands/status.ts';
import type { PeerStatus } from '../../src/offline/status.ts';
import type { RunningServer } from '../support/process.ts';
import { runCli } from '../support/run-cli.ts';
import { killServer } from '../support/serve-cluster.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { liqoVersion } from './liqo-writer/build.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import type { KubeClient } from './support/kube-client.ts';
import { seedDirectWorld, startShippedWebhook, webShadow } from './support/direct-world.ts';
import { startLiqoWriter, type LiqoWriter } from './support/liqo.ts';
import { skipReason } from './support/skip.ts';
import { HubReflector } from './support/virtual-kubelet.ts';
import { connectionPath, CONVERGE } from './support/world-paths.ts';

const skip = skipReason();

describe(`status on real Kubernetes ${kubernetesVersion()} with Liqo ${liqoVersion()}'s writer and the webhook`, { skip }, () => {
  let hub: ControlPlane;
  let leaf: ControlPlane;
  let admin: KubeClient;
  let writer: LiqoWriter | undefined;
  let webhook: RunningServer | undefined;
  let reflector: HubReflector | undefined;
  const made: string[] = [];

  const status = async (): Promise<StatusReport> => {
    const run = await runCli(['status', '--kubeconfig', leaf.adminKubeconfig, '--shortcuts-kubeconfig', hub.adminKubeconfig, '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as StatusReport;
  };
  const peer = (report: StatusReport, id: string): PeerStatus | undefined => report.peers?.find((p) => p.peer === id);
  /**
   * cluster3's address takes `path`, and nothing is out of step. The Service is counted once (its shadow and the
   * EndpointSlice Liqo writes from it are one Service's address, not two).
   */
  const settled = (report: StatusReport, path: 'direct' | 'hub'): boolean => {
    const counts = peer(report, 'cluster3')?.counts.addresses;
    return counts?.[path] === 1 && counts.direct + counts.hub + counts.none === 1
      && report.totals.outOfStep.shadowEndpointSlices === 0 && report.totals.outOfStep.endpointSlices === 0;
  };
  /** Polls status until it prints the state `expected` says (what the test then asserts); returns that report. */
  const untilStatus = (description: string, expected: (report: StatusReport) => boolean) =>
    waitFor(async () => {
      const report = await status();
      return expected(report) ? report : undefined;
    }, { ...CONVERGE, timeoutMs: 60_000, intervalMs: 250, description });
  const setTunnel = (value: string) =>
    admin.ok('PATCH', `${connectionPath('cluster3')}/status`, { status: { value } }, { contentType: 'application/merge-patch+json' });

  before(async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'shortcut-e2e-status-'));
    made.push(logDir);
    [hub, leaf] = await Promise.all([startControlPlane(), startControlPlane()]);
    admin = leaf.admin;
    await seedDirectWorld(admin, hub.admin);
    webhook = await startShippedWebhook({ leaf, hub, made });
    writer = startLiqoWriter(leaf.adminKubeconfig, join(logDir, 'liqo-writer.log'));
    reflector = new HubReflector(admin, 'demo');
    await reflector.reflect(webShadow());
  });

  after(async () => {
    reflector?.stop();
    await killServer(webhook);
    await writer?.stop();
    await Promise.all([leaf?.stop(), hub?.stop()]);
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  test('with the tunnel up, cluster3 is direct (the shadow repaired, the slice Liqo wrote in its direct network) and nothing is out of step', async () => {
    const report = await untilStatus('cluster3 direct, Liqo\'s slice written, the leaf in step', (r) => settled(r, 'direct') && r.totals.endpointSlices === 1
      && peer(r, 'cluster4')?.path === 'hub');
    const cluster3 = peer(report, 'cluster3');
    assert.equal(cluster3?.connection, 'Connected');
    // The slice Liqo wrote is left alone by the webhook (explain's reason, outside the hub's external view); its
    // address is in the leaf's view of cluster3's pods, so its path is direct. The Service counts once, by the slice:
    // its shadow (repaired) agrees on the path, so no second reason is shown.
    assert.deepEqual(cluster3?.why.map((w) => w.reason).sort(), ['not-hub-external']);
    assert.equal(cluster3?.path, 'direct');
    assert.equal(peer(report, 'cluster4')?.path, 'hub');
    assert.equal(peer(report, 'cluster1')?.role, 'hub');
    assert.match(cluster3?.since ?? '', /^\d{4}-\d\d-\d\dT/, 'a time from the Connection');
  });

  test('a Connection that goes to Error moves cluster3 to the hub path once the controller and Liqo have rewritten the objects', async () => {
    await setTunnel('Error');
    // Between the controller's repair of the shadow and Liqo's rewrite of the slice, status shows the slice's direct
    // address as black-holed (`none`): the wait is for both objects on the hub path.
    const report = await untilStatus('cluster3 on the hub path, shadow and slice, the leaf in step', (r) => settled(r, 'hub'));
    const cluster3 = peer(report, 'cluster3');
    assert.equal(cluster3?.connection, 'Error');
    assert.deepEqual(cluster3?.why.map((w) => w.reason), ['tunnel-down']);
    assert.equal(cluster3?.path, 'hub');
    assert.equal(cluster3?.view.directNetwork, 'tunnel-down');
  });

  test('and back to Connected moves it back to direct', async () => {
    await setTunnel('Connected');
    const report = await untilStatus('cluster3 direct again, shadow and slice, the leaf in step', (r) => settled(r, 'direct'));
    assert.equal(peer(report, 'cluster3')?.path, 'direct');
    assert.equal(peer(report, 'cluster3')?.connection, 'Connected');
  });
});
