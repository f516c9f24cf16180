// Lease-based leader election for the controller, as client-go's tools/leaderelection does it, and the fence that
// goes with it. Every replica computes the same f and patches under a resourceVersion test, so two leaders only
// waste writes while both views are current; a leader frozen past its Lease (a GC pause, a stopped VM, a node under
// memory pressure) is another matter: it resumes with the view it had, and whatever it writes before it learns that
// another replica leads now is planned on that stale view. So leadership is a rule, not a flag: a replica leads only
// while its last successful renewal is younger than the renew deadline, on its own monotonic clock, and callers ask
// isLeader() before every write.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { isObject, objectAt, stringField } from '../core/json.ts';
import { namespacedName, resourceVersionOf } from '../core/object-name.ts';
import { describeError, httpStatus } from '../kube/client.ts';
import type { Logger } from '../log.ts';
import { microTime } from '../util/micro-time.ts';
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
  /** Wall-clock time for the Lease's fields (MicroTime); Date.now by default. */
  readonly now?: () => number;
  /**
   * The clock of the leadership rule: monotonic, so that a step of the wall clock neither extends nor ends a term,
   * and advancing while the process is stopped (performance.now by default).
   */
  readonly monotonic?: () => number;
}

/** Renew deadline by default: below the Lease's 15 s, so a leader stops acting before another may take over. */
const DEFAULT_RENEW_DEADLINE_MS = 10_000;

export class LeaderElector {
  private leader = false;
  /** Monotonic time at which the last successful renewal was sent: the term is measured from the request's start. */
  private renewedAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private unsupported = false;
  private readonly renewProblems = new ProblemLatch();
  /** The Lease as this replica's last successful write left it, while it leads: renewed without reading it first. */
  private observed: unknown;
  private readonly api: CustomObjectsApi;
  private readonly now: () => number;
  private readonly monotonic: () => number;

  constructor(private readonly options: LeaderElectionOptions) {
    this.api = options.config.makeApiClient(CustomObjectsApi);
    this.now = options.now ?? Date.now;
    this.monotonic = options.monotonic ?? (() => performance.now());
  }

  /**
   * client-go's rule: leading while the last successful renewal is younger than the renew deadline. A replica that
   * was frozen past it is no leader the moment it resumes, before any timer of its own has run; without a Lease API
   * every replica reconciles.
   */
  isLeader(): boolean {
    if (this.unsupported) return true;
    if (!this.leader) return false;
    if (this.monotonic() - this.renewedAt < this.renewDeadlineMs) return true;
    // The term lapsed between renewals (a renewal slow under load, a pause): said now, so that the next renewal
    // starts a new term with onChange(true), and the pass it asks for catches up on whatever was skipped meanwhile.
    this.setLeader(false);
    return false;
  }

  private get renewDeadlineMs(): number {
    return this.options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
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
    if (!leader) this.observed = undefined;
    if (leader === this.leader) return;
    this.leader = leader;
    this.options.logger.info({ lease: namespacedName(this.options.namespace, this.options.name), identity: this.options.identity },
      leader ? 'became the controller leader' : 'no longer the controller leader');
    this.options.onChange?.(leader);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    // The term may have lapsed while this replica could not run at all: say so before asking the API server.
    if (this.leader && !this.isLeader()) this.setLeader(false);
    const sent = this.monotonic();
    try {
      const leader = await this.tryAcquireOrRenew();
      if (leader) this.renewedAt = sent;
      // A renewal answered after the deadline (the process stopped while it was in flight) starts no term.
      this.setLeader(leader && this.monotonic() - sent < this.renewDeadlineMs);
      this.renewProblems.clear();
    } catch (error) {
      // A 404 may also be the Lease deleted between read and write: only a missing Lease API turns election off. A
      // 403 is a failure like any other, retried: an API server just restarted answers 403 until its authorizer has
      // synced, and a replica that gave up election for good on it would reconcile beside the leader for ever.
      if (httpStatus(error) === 404 && await this.leaseApiMissing()) {
        // No Lease API: every replica reconciles, which is still correct.
        if (!this.unsupported) this.options.logger.warn({ err: describeError(error) }, 'leader election unavailable (no Lease API on this cluster), reconciling from this replica anyway');
        this.unsupported = true;
        this.setLeader(true);
        return;
      }
      const message = describeError(error);
      if (this.renewProblems.isNew(message)) this.options.logger.warn({ err: message }, 'lease not renewed');
      if (this.leader && !this.isLeader()) this.setLeader(false);
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

  /** The Lease written over `lease` (its resourceVersion the test: a Lease written since answers 409); the answer is kept. */
  private async replace(lease: unknown, spec: Record<string, unknown>): Promise<void> {
    const current = isObject(lease) ? lease : {};
    const currentSpec = objectAt(current, 'spec') ?? {};
    this.observed = await this.api.replaceNamespacedCustomObject({
      group: GROUP, version: VERSION, namespace: this.options.namespace, plural: PLURAL, name: this.options.name,
      body: { ...current, spec: { ...currentSpec, ...spec } },
    });
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const seconds = Math.ceil(this.durationMs / 1000);
    const mine = { holderIdentity: this.options.identity, leaseDurationSeconds: seconds, renewTime: microTime(now) };
    // client-go's fast path: a leader renews the Lease as its own last write left it, one request instead of a read
    // and a write every 2 s. Any failure, a 409 from another replica's write included, falls back to reading it.
    // Only with the resourceVersion it was written at: a replace without one would not be refused after a takeover.
    if (this.leader && resourceVersionOf(this.observed) !== undefined) {
      try {
        await this.replace(this.observed, mine);
        return true;
      } catch {
        this.observed = undefined;
      }
    }
    const lease = await this.get();
    if (lease === undefined) {
      this.observed = await this.api.createNamespacedCustomObject({
        group: GROUP, version: VERSION, namespace: this.options.namespace, plural: PLURAL,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Lease', metadata: { name: this.options.name, namespace: this.options.namespace },
          spec: { ...mine, acquireTime: microTime(now), leaseTransitions: 0 } },
      });
      return true;
    }
    const holder = this.holder(lease);
    const spec = isObject(lease) ? objectAt(lease, 'spec') : undefined;
    if (holder === this.options.identity) {
      await this.replace(lease, mine);
      return true;
    }
    const renewed = Date.parse((spec && stringField(spec, 'renewTime')) ?? '');
    const duration = spec !== undefined && typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds * 1000 : this.durationMs;
    if (holder !== undefined && Number.isFinite(renewed) && renewed + duration > now) return false;
    const transitions = spec !== undefined && typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0;
    // The replace carries the resourceVersion read: two replicas taking over at once, only one succeeds (409).
    await this.replace(lease, { ...mine, acquireTime: microTime(now), leaseTransitions: transitions + 1 });
    return true;
  }
}
