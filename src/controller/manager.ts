// The controller's runnables, built and started together as controller-runtime's manager does: the Lease elector,
// the reconciler (passes and the healing watch), and what reports each peer's path (Events, failover time). serve's
// composition root builds one and starts and stops it; nothing here reads flags.
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { EventRecorder, peerObject, type ObjectReference } from '../kube/events.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { SnapshotStore } from '../view/shortcut-view.ts';
import { STORED_KINDS } from './kinds.ts';
import { LeaderElector } from './leader.ts';
import { PeerEvents } from './peer-events.ts';
import { SliceReconciler } from './reconciler.ts';
import type { AnsweredVersions } from '../util/answered-versions.ts';

export const LEASE_NAME = 'shortcut-webhook-controller';

export interface ControllerManagerOptions {
  readonly config: KubeConfig;
  readonly store: SnapshotStore;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clusterId: string | undefined;
  /** The pod's namespace (the Lease's, the Deployment's); undefined outside a pod: no election, this replica alone. */
  readonly namespace: string | undefined;
  /** The pod's name (POD_NAME): the Lease holder and the Events' reporting instance. */
  readonly podName: string | undefined;
  readonly resyncIntervalMs: number;
  readonly maxConcurrentPatches: number;
  readonly maxPatchesPerSecond: number;
  readonly watchTimeoutSeconds?: number | undefined;
  /** The webhook's answers in this process (serve's one), whose stored copies the healing watch passes over. */
  readonly answered?: AnsweredVersions | undefined;
}

/**
 * The Deployment that runs this pod, which Events regard where a peer has no Liqo object on the leaf: a
 * Deployment's pods are named `<deployment>-<pod-template-hash>-<suffix>`.
 */
export function deploymentOf(podName: string | undefined, namespace: string): ObjectReference | undefined {
  const parts = (podName ?? '').split('-');
  if (parts.length < 3) return undefined;
  return { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: parts.slice(0, -2).join('-') };
}

export class ControllerManager {
  private readonly elector: LeaderElector | undefined;
  private readonly recorder: EventRecorder;
  private readonly reconciler: SliceReconciler;

  constructor(options: ControllerManagerOptions) {
    const { config, store, logger, metrics, namespace } = options;
    const identity = options.podName || `${hostname()}-${process.pid}`;
    const elector = namespace === undefined ? undefined : new LeaderElector({
      config, namespace, name: LEASE_NAME, identity, logger,
      onChange: (leader) => { if (leader) this.reconciler.trigger('became the leader', 0); },
    });
    if (elector === undefined) logger.info('no POD_NAMESPACE: no leader election, this replica reconciles alone');
    this.elector = elector;
    this.recorder = new EventRecorder({ config, logger, instance: identity });
    const deployment = namespace === undefined ? undefined : deploymentOf(options.podName, namespace);
    const peers = new PeerEvents({
      clusterId: options.clusterId, events: this.recorder, metrics, logger,
      isLeader: () => elector?.isLeader() ?? true,
      regarding: (peer) => peerObject(config, peer, deployment),
    });
    store.subscribe((snapshot) => { if (store.isSynced()) peers.observe(snapshot); });
    this.reconciler = new SliceReconciler({
      config, view: store, clusterId: options.clusterId, logger, metrics, resyncIntervalMs: options.resyncIntervalMs, resources: STORED_KINDS,
      maxConcurrentWrites: options.maxConcurrentPatches, maxWritesPerSecond: options.maxPatchesPerSecond,
      onPassDone: (pass) => peers.passDone(pass), answered: options.answered,
      ...(elector === undefined ? {} : { isLeader: () => elector.isLeader() }),
      ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
    });
  }

  /** Whether this replica's controller writes now: it leads, or no election runs (one replica). */
  leads(): boolean {
    return this.elector?.isLeader() ?? true;
  }

  start(): void {
    this.elector?.start();
    this.reconciler.start();
  }

  /** The reconciler first (no write after), the Events it left, then the Lease given up for the next leader. */
  async stop(): Promise<void> {
    await this.reconciler.stop();
    await this.recorder.flush();
    await this.elector?.stop();
  }
}
