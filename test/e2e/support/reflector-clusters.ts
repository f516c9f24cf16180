// The two control planes the suites on Liqo's own reflector start alike (hub-reflector, direct-connections,
// forged-records): the Go builds (cached) first, outside any test's timeout, then a hub and a leaf, a folder for the
// processes' logs and the canary webhook that says when the API server has read a webhook configuration.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCerts } from '../../support/certs.ts';
import type { RunningServer } from '../../support/process.ts';
import { killServer } from '../../support/serve-cluster.ts';
import { buildControlPlane } from '../controlplane/build.ts';
import { buildHubReflector } from '../hub-reflector/build.ts';
import { buildLiqoWriter } from '../liqo-writer/build.ts';
import { startCanary, type Canary } from './canary.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';

export interface ReflectorClusters {
  readonly hub: ControlPlane;
  readonly leaf: ControlPlane;
  readonly canary: Canary;
  /** Where the suite's processes write their logs; in `made`, so the suite's `after` removes it. */
  readonly logDir: string;
}

/** `made` collects the folders the suite removes when it ends. */
export async function startReflectorClusters(name: string, made: string[]): Promise<ReflectorClusters> {
  buildControlPlane();
  buildLiqoWriter();
  buildHubReflector();
  const logDir = mkdtempSync(join(tmpdir(), `shortcut-e2e-${name}-`));
  made.push(logDir);
  const [hub, leaf] = await Promise.all([startControlPlane(), startControlPlane()]);
  const canaryCerts = makeCerts(undefined, 'canary');
  made.push(canaryCerts.dir);
  const canary = await startCanary(leaf.admin, canaryCerts);
  return { hub, leaf, canary, logDir };
}

/** What a suite on the reflector clusters started; any of it may be missing when its `before` failed part way. */
export interface ReflectorSuite {
  readonly reflector?: { stop(): Promise<unknown> } | undefined;
  readonly webhook?: RunningServer | undefined;
  readonly balancer?: { close(): Promise<unknown> } | undefined;
  readonly writer?: { stop(): Promise<unknown> } | undefined;
  readonly clusters: Partial<ReflectorClusters>;
}

/**
 * The suite's teardown, writers first (the reflector, the webhook and what fronts it, Liqo's writer), then the canary
 * and both control planes, then the folders in `made`.
 */
export async function stopReflectorClusters(suite: ReflectorSuite, made: readonly string[]): Promise<void> {
  await suite.reflector?.stop();
  await killServer(suite.webhook);
  await suite.balancer?.close();
  await suite.writer?.stop();
  await suite.clusters.canary?.close();
  await Promise.all([suite.clusters.leaf?.stop(), suite.clusters.hub?.stop()]);
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
}
