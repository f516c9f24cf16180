// Prometheus metrics (docs/reference.md#metrics). One registry per process (or per test), never prom-client's global one.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReviewOutcome } from './admission/responses.ts';
import type { ShadowReviewed } from './admission/review-shadow-endpoint-slice.ts';
import { outcomeCounts, SHADOW_OUTCOMES } from './core/direct-connections.ts';
import { UNUSABLE_REASONS, type PairState } from './core/pairs.ts';
import { UNTOUCHED_REASONS, type AddressEdit } from './core/rewrite.ts';
import type { BuildInfo } from './version.ts';

/** Every value of the pairs{state} label: a series for each exists from the start, at zero. */
const PAIR_STATES: readonly string[] = ['usable', ...UNUSABLE_REASONS];

const PREFIX = 'shortcut_webhook_';
/**
 * How often nodejs_eventloop_lag_* samples the loop. prom-client's 10 ms default wakes an idle replica 100 times a
 * second: 7 ms of CPU per second doing nothing (bench section writepath, idle figures). At 100 ms a stall of a
 * scavenge or a list's fold still shows; only stalls shorter than the interval are caught by chance.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

export type ReconcileResult = 'patched' | 'unchanged' | 'conflict' | 'error' | 'gone';

/**
 * Why a stored object the healing watch patched was out of step: `not-reviewed`, written while the view had not
 * moved, so the webhook never saw it (it fails open); `stale-view`, written while the view was moving, so reviewed
 * by a replica whose view was older, or before the pass for the change reached it.
 */
export type HealReason = 'not-reviewed' | 'stale-view';
const HEAL_REASONS: readonly HealReason[] = ['not-reviewed', 'stale-view'];

/** The resource a review was for, by its route; `unknown` for a body refused before it reached one. */
export type AdmissionResource = 'endpointslices' | 'shadowendpointslices';
const ADMISSION_RESOURCES: readonly AdmissionResource[] = ['endpointslices', 'shadowendpointslices'];

/** The result label is the outcome's kind; every value, so each series exists from the start. */
const ADMISSION_RESULTS: readonly ReviewOutcome<unknown>['kind'][] = ['patched', 'unchanged', 'skipped', 'error'];
const RECONCILE_RESULTS: readonly ReconcileResult[] = ['patched', 'unchanged', 'conflict', 'error', 'gone'];

/** Operations are client input: anything but the four Kubernetes knows is `other`, so labels stay bounded. */
const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function operationLabel(operation: string): string {
  return OPERATIONS.has(operation) ? operation : 'other';
}

export interface MetricsOptions {
  /** Labels of shortcut_webhook_build_info; without them there is no such series (tests that do not need it). */
  readonly build?: BuildInfo;
  /**
   * prom-client's default metrics of the process (CPU, resident memory, heap, event-loop lag, GC, handles) under their
   * usual unprefixed names (process_*, nodejs_*), as dashboards for any Node.js service expect them. Opt-in: they start
   * an event-loop monitor, which only the serving process wants.
   */
  readonly processMetrics?: boolean;
}

export class Metrics {
  readonly registry = new Registry();
  readonly admissionRequests = new Counter({
    name: `${PREFIX}admission_requests_total`, help: 'Admission reviews answered, by operation, result and resource (endpointslices, shadowendpointslices; unknown for a body refused before a route).',
    labelNames: ['operation', 'result', 'resource'] as const, registers: [this.registry],
  });
  readonly admissionDuration = new Histogram({
    name: `${PREFIX}admission_duration_seconds`, help: 'Time from request to answer, body parsing included.',
    // 100 µs to 10 s: the rewrite itself takes microseconds, the API server gives up after timeoutSeconds (≤ 30 s).
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly admissionShed = new Counter({
    name: `${PREFIX}admission_shed_total`,
    help: 'Requests answered 503 at once, unread or unparsed, because the reviews in flight were at their bound (--max-reviews-in-flight, --max-review-bytes-in-flight), by resource (unknown off the two routes); the API server fails open on them.',
    labelNames: ['resource'] as const, registers: [this.registry],
  });
  readonly addressesRewritten = new Counter({
    name: `${PREFIX}addresses_rewritten_total`, help: 'Addresses moved into the shortcut space by admission patches and by the controller\'s patches.', registers: [this.registry],
  });
  readonly addressesRestored = new Counter({
    name: `${PREFIX}addresses_restored_total`, help: 'Addresses restored to their hub address by admission patches and by the controller\'s patches.', registers: [this.registry],
  });
  /**
   * Beyond the metrics the contract lists: why reviewed addresses were left exactly as they came (neither changed
   * nor flagged). A leaf behind an upstream-Liqo hub shows them all as hub-external; a leaf no FCC names, as no-fcc (not-hub-external where the leaf sees the hub's external CIDR).
   */
  readonly addressesUntouched = new Counter({
    name: `${PREFIX}addresses_untouched_total`,
    help: 'Addresses left unchanged and unflagged by admission reviews, by reason: not-canonical, no-fcc, not-hub-external, no-pair, or on the stock path hub-external, no-hub-ip, no-peer, no-shortcut, tunnel-down, connection-stale.',
    labelNames: ['reason'] as const, registers: [this.registry],
  });
  readonly recordsIgnored = new Counter({
    name: `${PREFIX}records_ignored_total`,
    help: 'Entries of the product\'s records (original addresses, a shadow\'s restore data) on reviewed or stored objects that the product could not have written, and did not use, by resource.',
    labelNames: ['resource'] as const, registers: [this.registry],
  });
  readonly shadowAddresses = new Counter({
    name: `${PREFIX}shadow_addresses_total`,
    help: 'Addresses listed in ShadowEndpointSlices\' liqo.io/direct-connections-data by reviews, by outcome: direct, repaired, hub-path, unresolved.',
    labelNames: ['outcome'] as const, registers: [this.registry],
  });
  readonly pairs = new Gauge({
    name: `${PREFIX}pairs`, help: 'ForeignClusterConnection sides of the local cluster(s), by state: usable or the reason it is not.',
    labelNames: ['state'] as const, registers: [this.registry],
  });
  private lastSync: (() => number | undefined) | undefined;
  readonly viewLastSync = new Gauge({
    name: `${PREFIX}view_last_sync_timestamp_seconds`, help: 'When the shortcut view last matched its source (Unix seconds).',
    registers: [this.registry],
    collect: () => {
      const at = this.lastSync?.();
      if (at !== undefined) this.viewLastSync.set(at / 1000);
    },
  });
  readonly viewWatchRestarts = new Counter({
    name: `${PREFIX}view_watch_restarts_total`, help: 'Times a watch of the shortcut source was opened again after the server broke it or ended it early (not at its own timeout).', registers: [this.registry],
  });
  readonly hubIps = new Gauge({
    name: `${PREFIX}hub_ips`, help: 'IPs of offloaded pods known from the hub\'s IPAM (the stock-Liqo path); 0 while it is not read.',
    registers: [this.registry],
  });
  readonly hubReaders = new Gauge({
    name: `${PREFIX}hub_readers`,
    help: 'One per hub of this leaf: read (a reader stands for it), away (its reader failing past --stale-view-after: its objects wait) or not-read (a consumer no reader stands for: its objects are left alone, hub-not-read).',
    labelNames: ['hub', 'state'] as const, registers: [this.registry],
  });
  readonly slicesReconciled = new Counter({
    name: `${PREFIX}slices_reconciled_total`, help: 'Stored slices visited by the controller, by result.',
    labelNames: ['result'] as const, registers: [this.registry],
  });
  readonly shadowsReconciled = new Counter({
    name: `${PREFIX}shadows_reconciled_total`, help: 'Stored ShadowEndpointSlices (Liqo\'s direct connections) visited by the controller, by result.',
    labelNames: ['result'] as const, registers: [this.registry],
  });

  readonly objectsHealed = new Counter({
    name: `${PREFIX}objects_healed_total`,
    help: 'Stored objects the controller\'s healing watch patched within seconds of a write that left them out of step, by resource and why.',
    labelNames: ['resource', 'reason'] as const, registers: [this.registry],
  });

  readonly healingEvents = new Counter({
    name: `${PREFIX}healing_events_total`,
    help: 'Stored versions the healing watch received, by resource and how it handled them: passed-over (the webhook had just answered for that version on the same view), planned.',
    labelNames: ['resource', 'handling'] as const, registers: [this.registry],
  });

  readonly failoverSeconds = new Histogram({
    name: `${PREFIX}failover_seconds`,
    help: 'From a change of a peer\'s path observed in the view to the end of the pass that patched its stored objects, by direction (to-hub, to-direct).',
    labelNames: ['direction'] as const, buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600], registers: [this.registry],
  });
  readonly peerPath = new Gauge({
    name: `${PREFIX}peer_path`,
    help: 'The path the view gives each peer\'s traffic (1 for the current one): direct or hub, why (the contract\'s reason, direct when direct), and the leaf\'s Liqo Connection state to it (none without one).',
    labelNames: ['peer', 'path', 'reason', 'connection'] as const, registers: [this.registry],
  });

  readonly storedObjects = new Gauge({
    name: `${PREFIX}stored_objects`,
    help: 'Stored EndpointSlices and ShadowEndpointSlices by peer and the path the view gives its addresses there (direct, hub, none), from the controller\'s last complete pass; an object with addresses of several peers or paths counts once for each.',
    labelNames: ['peer', 'path', 'resource'] as const, registers: [this.registry],
  });

  constructor(options: MetricsOptions = {}) {
    if (options.build !== undefined) {
      // The usual build_info idiom: a constant 1 whose labels say what runs, to join on or alert on mixed versions.
      new Gauge({
        name: `${PREFIX}build_info`, help: 'The running build: version, git commit (empty when unknown) and Node.js version; always 1.',
        labelNames: ['version', 'commit', 'node'] as const, registers: [this.registry],
      }).set({ version: options.build.version, commit: options.build.commit ?? '', node: options.build.node }, 1);
    }
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    for (const state of PAIR_STATES) this.pairs.set({ state }, 0);
    // Series exist from the start, so rate() and alerts see a zero rather than nothing.
    for (const resource of ADMISSION_RESOURCES) {
      for (const operation of ['CREATE', 'UPDATE']) {
        for (const result of ADMISSION_RESULTS) this.admissionRequests.inc({ operation, result, resource }, 0);
      }
    }
    for (const outcome of SHADOW_OUTCOMES) this.shadowAddresses.inc({ outcome }, 0);
    for (const resource of ADMISSION_RESOURCES) this.admissionShed.inc({ resource }, 0);
    for (const result of RECONCILE_RESULTS) {
      this.slicesReconciled.inc({ result }, 0);
      this.shadowsReconciled.inc({ result }, 0);
    }
    for (const reason of UNTOUCHED_REASONS) this.addressesUntouched.inc({ reason }, 0);
    for (const resource of ADMISSION_RESOURCES) for (const reason of HEAL_REASONS) this.objectsHealed.inc({ resource, reason }, 0);
    for (const resource of ADMISSION_RESOURCES) this.recordsIgnored.inc({ resource }, 0);
    for (const resource of ADMISSION_RESOURCES) for (const handling of ['passed-over', 'planned']) this.healingEvents.inc({ resource, handling }, 0);
  }

  /** The view's path per peer, replacing the last: a peer gone from the view has no series. */
  setPeerPaths(states: readonly { readonly peer: string; readonly path: string; readonly reason: string; readonly connection: string | undefined }[]): void {
    this.peerPath.reset();
    for (const { peer, path, reason, connection } of states) this.peerPath.set({ peer, path, reason, connection: connection ?? 'none' }, 1);
  }

  /** The sync time is read at scrape time, so it is never stale between changes. */
  trackView(view: { lastSync(): number | undefined }): void {
    this.lastSync = () => view.lastSync();
  }

  /** One answered review of either resource: what every route counts alike. */
  observeReview(resource: AdmissionResource, operation: string, outcome: ReviewOutcome<unknown>, seconds: number): void {
    this.admissionRequests.inc({ operation: operationLabel(operation), result: outcome.kind, resource });
    this.admissionDuration.observe(seconds);
  }

  /** What an EndpointSlice review did to its addresses. */
  observeRewrite(outcome: ReviewOutcome): void {
    if (outcome.kind !== 'patched' && outcome.kind !== 'unchanged') return;
    const { untouched } = outcome.rewrite;
    for (const reason of UNTOUCHED_REASONS) if (untouched[reason] > 0) this.addressesUntouched.inc({ reason }, untouched[reason]);
    if (outcome.kind === 'patched') this.observeEdits(outcome.rewrite.edits);
    this.observeIgnored('endpointslices', outcome.rewrite.ignored.length);
  }

  /** Record entries a review or a pass did not use (core/trust.ts). */
  observeIgnored(resource: AdmissionResource, count: number): void {
    if (count > 0) this.recordsIgnored.inc({ resource }, count);
  }

  /**
   * Addresses a patch moved, whoever wrote it: an admission answer, or the controller's patch of a stored slice (which
   * the webhook then sees already in step, so it is counted here, once).
   */
  observeEdits(edits: readonly AddressEdit[]): void {
    let rewritten = 0;
    for (const edit of edits) if (edit.kind === 'rewritten') rewritten++;
    if (rewritten > 0) this.addressesRewritten.inc(rewritten);
    const restored = edits.length - rewritten;
    if (restored > 0) this.addressesRestored.inc(restored);
  }

  /** What a ShadowEndpointSlice review made of each listed address. */
  observeShadowRepair(outcome: ReviewOutcome<ShadowReviewed>): void {
    if (outcome.kind !== 'patched' && outcome.kind !== 'unchanged') return;
    const counts = outcomeCounts(outcome.rewrite.addresses);
    for (const name of SHADOW_OUTCOMES) if (counts[name] > 0) this.shadowAddresses.inc({ outcome: name }, counts[name]);
    this.observeIgnored('shadowendpointslices', outcome.rewrite.ignored.length);
  }

  /** Bodies refused before a review exists (400, 413, 415): counted as errors of an unknown operation, by the route they were sent to. */
  observeRefused(resource: AdmissionResource | 'unknown', seconds: number): void {
    this.admissionRequests.inc({ operation: 'unknown', result: 'error', resource });
    this.admissionDuration.observe(seconds);
  }

  setPairStates(states: readonly PairState[]): void {
    const counts = new Map<string, number>(PAIR_STATES.map((state): [string, number] => [state, 0]));
    for (const state of states) {
      const key = state.usable ? 'usable' : state.reason;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [state, count] of counts) this.pairs.set({ state }, count);
  }
}
