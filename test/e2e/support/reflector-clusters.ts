// The two control planes the suites on Liqo's own reflector start alike (hub-reflector, direct-connections,
// forged-records): the Go builds (cached) first, outside any test's timeout, then a hub and a leaf, a folder for the
// processes' logs and the canary webhook that says when the API server has read a webhook configuration.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCerts } from '../../support/certs.ts';
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
