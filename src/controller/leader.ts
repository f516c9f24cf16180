// Lease-based leader election for the controller, as client-go does it. Cheap insurance, not a correctness need:
// every replica computes the same f and patches under a resourceVersion test, so two leaders only waste writes.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { isObject, objectAt, stringField } from '../core/json.ts';
import { namespacedName } from '../core/object-name.ts';
import { describeError, httpStatus } from '../kube/client.ts';
import type { Logger } from '../log.ts';
import { ProblemLatch } from '../util/problem-latch.ts';

const GROUP = 'coordination.k8s.io';
const VERSION = 'v1';
const PLURAL = 'leases';

export interface LeaderElectionOptions {
  readonly config: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly logger: Logger;
  readonly leaseDurationMs?: number;
  readonly renewIntervalMs?: number;
  /** A leader that could not renew for this long stops acting as one, before others may take over. */
  readonly renewDeadlineMs?: number;
  readonly onChange?: (leader: boolean) => void;
  readonly now?: () => number;
}

/** Lease times are MicroTime: RFC 3339 with six fractional digits. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private leader = false;
  private lastRenew = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private unsupported = false;
  private readonly renewProblems = new ProblemLatch();
  private readonly api: CustomObjectsApi;
  private readonly now: () => number;

  constructor(private readonly options: LeaderElectionOptions) {
    this.api = options.config.makeApiClient(CustomObjectsApi);
    this.now = options.now ?? Date.now;
  }

  isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    this.ticking = this.tick();
  }

  /** Gives the lease up so another replica takes over at once instead of after the lease duration. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    // A renewal in flight could otherwise land after the release and hold the lease for a full duration.
    await this.ticking;
    if (!this.leader || this.unsupported) return;
    this.setLeader(false);
    try {
      const lease = await this.get();
      if (lease !== undefined && this.holder(lease) === this.options.identity) {
        await this.replace(lease, { holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(this.now()) });
      }
    } catch {
      // Not releasing only delays the next leader by one lease duration.
    }
  }

  private get durationMs(): number {
    return this.options.leaseDurationMs ?? 15_000;
  }

  private setLeader(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    this.options.logger.info({ lease: namespacedName(this.options.namespace, this.options.name), identity: this.options.identity },
      leader ? 'became the controller leader' : 'no longer the controller leader');
    this.options.onChange?.(leader);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const leader = await this.tryAcquireOrRenew();
      this.setLeader(leader);
      this.renewProblems.clear();
    } catch (error) {
      const status = httpStatus(error);
      // A 404 may also be the Lease deleted between read and write: only a missing Lease API turns election off.
      if (status === 403 || (status === 404 && await this.leaseApiMissing())) {
        // No Lease API or no right to it: every replica reconciles, which is still correct.
        if (!this.unsupported) this.options.logger.warn({ err: describeError(error) }, 'leader election unavailable, reconciling from this replica anyway');
        this.unsupported = true;
        this.setLeader(true);
        return;
      }
      const message = describeError(error);
      if (this.renewProblems.isNew(message)) this.options.logger.warn({ err: message }, 'lease not renewed');
      if (this.leader && this.now() - this.lastRenew > (this.options.renewDeadlineMs ?? 10_000)) this.setLeader(false);
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => { this.ticking = this.tick(); }, this.options.renewIntervalMs ?? 2_000);
    this.timer.unref();
  }

  private holder(lease: unknown): string | undefined {
    const spec = isObject(lease) ? objectAt(lease, 'spec') : undefined;
    return (spec && stringField(spec, 'holderIdentity')) || undefined;
  }

  private async get(): Promise<unknown> {
    try {
      return await this.api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.options.namespace, plural: PLURAL, name: this.options.name });
    } catch (error) {
      if (httpStatus(error) === 404 && !(await this.leaseApiMissing())) return undefined;
      throw error;
    }
  }

  /** A 404 for the Lease means "create it"; a 404 for the whole resource means no Lease API. */
  private async leaseApiMissing(): Promise<boolean> {
    try {
      await this.api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.options.namespace, plural: PLURAL, limit: 1 });
      return false;
    } catch (error) {
      return httpStatus(error) === 404;
    }
  }

  private replace(lease: unknown, spec: Record<string, unknown>): Promise<unknown> {
    const current = isObject(lease) ? lease : {};
    const currentSpec = objectAt(current, 'spec') ?? {};
    return this.api.replaceNamespacedCustomObject({
      group: GROUP, version: VERSION, namespace: this.options.namespace, plural: PLURAL, name: this.options.name,
      body: { ...current, spec: { ...currentSpec, ...spec } },
    });
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const seconds = Math.ceil(this.durationMs / 1000);
    const mine = { holderIdentity: this.options.identity, leaseDurationSeconds: seconds, renewTime: microTime(now) };
    const lease = await this.get();
    if (lease === undefined) {
      await this.api.createNamespacedCustomObject({
        group: GROUP, version: VERSION, namespace: this.options.namespace, plural: PLURAL,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Lease', metadata: { name: this.options.name, namespace: this.options.namespace },
          spec: { ...mine, acquireTime: microTime(now), leaseTransitions: 0 } },
      });
      this.lastRenew = now;
      return true;
    }
    const holder = this.holder(lease);
    const spec = isObject(lease) ? objectAt(lease, 'spec') : undefined;
    if (holder === this.options.identity) {
      await this.replace(lease, mine);
      this.lastRenew = now;
      return true;
    }
    const renewed = Date.parse((spec && stringField(spec, 'renewTime')) ?? '');
    const duration = spec !== undefined && typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds * 1000 : this.durationMs;
    if (holder !== undefined && Number.isFinite(renewed) && renewed + duration > now) return false;
    const transitions = spec !== undefined && typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0;
    // The replace carries the resourceVersion read: two replicas taking over at once, only one succeeds (409).
    await this.replace(lease, { ...mine, acquireTime: microTime(now), leaseTransitions: transitions + 1 });
    this.lastRenew = now;
    return true;
  }
}
