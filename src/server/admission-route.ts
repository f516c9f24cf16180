// POST /mutate/endpointslices and /mutate/shadowendpointslices: the only place that turns reviews into HTTP. One
// straight line for both resources (decode → review → pure rule → patch → response); what differs is a
// ReviewedResource below. Error policy, the same for both:
//
//   situation                                  answer
//   ----------------------------------------   -------------------------------------------------------------
//   review decoded, object rewritten           200, allowed, JSONPatch (base64)
//   review decoded, nothing to change/skipped  200, allowed, no patch
//   review decoded, the webhook itself failed  200, allowed, no patch; logged and counted as result=error
//   review decoded, ?timeout= budget spent     200, allowed, no patch (an answer in time beats a late patch)
//   review decoded, view not synced yet        200, allowed, no patch (an empty view would strip every shortcut)
//   body not JSON / not an AdmissionReview     400 with a message (the API server then applies failurePolicy)
//   Content-Type not application/json          415
//   body over 7 MiB                            413
//
// Never a deny: a path optimisation must not block writes.
import type { RawServerBase } from 'fastify';
import type { AnyFastify } from './any-fastify.ts';
import { admissionResponse, Outcome, type ReviewOutcome } from '../admission/responses.ts';
import { reviewEndpointSlice } from '../admission/review-endpoint-slice.ts';
import { reviewShadowEndpointSlice, type ShadowReviewed } from '../admission/review-shadow-endpoint-slice.ts';
import { decodeReview, type AdmissionRequest } from '../admission/review.ts';
import { outcomeCounts } from '../core/direct-connections.ts';
import { sliceName } from '../core/endpoint-slice.ts';
import type { SliceRewrite } from '../core/rewrite.ts';
import type { IgnoredEntry } from '../core/trust.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { answeredSliceMembers } from '../admission/answered-slice.ts';
import { isObject, objectField, stringField } from '../core/json.ts';
import type { AnsweredMember, AnsweredVersions } from '../util/answered-versions.ts';
import { parseDuration } from '../util/duration.ts';
import { errorMessage } from '../util/errors.ts';
import { describeEdits, logIgnoredRecords, type Logger } from '../log.ts';
import type { AdmissionResource, Metrics } from '../metrics.ts';
import type { ShortcutView } from '../view/shortcut-view.ts';

export const ADMISSION_PATH = '/mutate/endpointslices';
export const SHADOW_ADMISSION_PATH = '/mutate/shadowendpointslices';

/** What differs between the resources the webhook reviews; the route around it is one for all. */
interface ReviewedResource<T> {
  readonly resource: AdmissionResource;
  readonly path: string;
  /** How the log calls the object. */
  readonly noun: 'slice' | 'shadow';
  review(request: AdmissionRequest, snapshot: Snapshot, clusterId: string | undefined): ReviewOutcome<T>;
  /** The resource's own metrics, after the counts every review gets. */
  observe(metrics: Metrics, outcome: ReviewOutcome<T>): void;
  /** What the log line of a patched object says about the change. */
  patched(rewrite: T): Record<string, unknown>;
  /** Record entries the review did not use (core/trust.ts), said once per object. */
  ignored(rewrite: T): readonly IgnoredEntry[];
  /** What the object answered for is stored as, for the healing watch to pass it over; none: every copy is planned. */
  answered?(rewrite: T): readonly AnsweredMember[] | undefined;
}

const ENDPOINT_SLICES: ReviewedResource<SliceRewrite> = {
  resource: 'endpointslices',
  path: ADMISSION_PATH,
  noun: 'slice',
  review: (request, snapshot, clusterId) => reviewEndpointSlice(request, snapshot, { clusterId }),
  observe: (metrics, outcome) => metrics.observeRewrite(outcome),
  patched: (rewrite) => ({
    cluster: rewrite.slice.clusterId, changed: rewrite.edits.length, changes: describeEdits(rewrite.edits),
    annotations: rewrite.annotations.map((a) => a.key),
  }),
  ignored: (rewrite) => rewrite.ignored,
  answered: answeredSliceMembers,
};

const SHADOW_ENDPOINT_SLICES: ReviewedResource<ShadowReviewed> = {
  resource: 'shadowendpointslices',
  path: SHADOW_ADMISSION_PATH,
  noun: 'shadow',
  review: (request, snapshot, clusterId) => reviewShadowEndpointSlice(request, snapshot, { clusterId }),
  observe: (metrics, outcome) => metrics.observeShadowRepair(outcome),
  patched: (repair) => ({
    cluster: repair.shadow.clusterId, hub: repair.shadow.hub, changed: repair.kind === 'changed' ? repair.edits.length : 0,
    changes: repair.kind === 'changed' ? describeEdits(repair.edits) : [], outcomes: outcomeCounts(repair.addresses),
    annotations: repair.kind === 'changed' ? repair.annotations.map((a) => a.key) : [],
  }),
  ignored: (repair) => repair.ignored,
};

const RESOURCE_PATHS: readonly { readonly path: string; readonly resource: AdmissionResource }[] = [ENDPOINT_SLICES, SHADOW_ENDPOINT_SLICES];

/** The resource a request was sent for, by its path: how a refused body is counted. */
export function resourceOfUrl(url: string): AdmissionResource | 'unknown' {
  const path = url.split('?', 1)[0];
  return RESOURCE_PATHS.find((resource) => resource.path === path)?.resource ?? 'unknown';
}

export interface AdmissionRouteOptions {
  readonly view: ShortcutView;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clusterId: string | undefined;
  /** Milliseconds since the request's headers arrived (the app stamps every request): budget and duration run from then. */
  readonly elapsedMs: (request: object) => number;
  /** Where each answer is noted for the controller's healing watch (absent without a controller). */
  readonly answered?: AnsweredVersions | undefined;
}

/** What is left of the API server's `?timeout=` once this share is kept back for the answer to travel. */
const DEADLINE_SHARE = 0.8;

function budgetOf(timeout: string): number | undefined {
  const ms = parseDuration(timeout);
  return ms === undefined || ms === 0 ? undefined : ms * DEADLINE_SHARE;
}

/** `?timeout=` is the same on every call from one API server: parsed once per distinct value, not per review. */
function budgets(): (query: unknown) => number | undefined {
  let last: { timeout: string; budget: number | undefined } | undefined;
  return (query) => {
    if (typeof query !== 'object' || query === null || !('timeout' in query) || typeof query.timeout !== 'string') return undefined;
    if (last?.timeout !== query.timeout) last = { timeout: query.timeout, budget: budgetOf(query.timeout) };
    return last.budget;
  };
}

/** A skip when the budget is spent, else undefined. */
function deadline(elapsedMs: number, budget: number | undefined): ReviewOutcome<never> | undefined {
  if (budget === undefined || elapsedMs <= budget) return undefined;
  return Outcome.skipped('deadline', `${elapsedMs.toFixed(0)} ms of a ${budget / DEADLINE_SHARE} ms timeout spent`);
}

const NOT_SYNCED = Object.freeze(Outcome.skipped('view-not-synced', 'the shortcut view has not synced yet'));

/** The outcome, and the version of the view it was decided on (none where the view itself failed). */
function review<T>(resource: ReviewedResource<T>, request: AdmissionRequest, options: AdmissionRouteOptions): { outcome: ReviewOutcome<T>; viewVersion: number | undefined } {
  try {
    const snapshot = options.view.current();
    return { outcome: resource.review(request, snapshot, options.clusterId), viewVersion: snapshot.version };
  } catch (error) {
    return { outcome: Outcome.errored(error), viewVersion: undefined };
  }
}

/** The answer as sent, for the healing watch to pass its stored copy over (a dry run stores nothing). */
function noteAnswer<T>(answered: AnsweredVersions, resource: ReviewedResource<T>, request: AdmissionRequest, outcome: ReviewOutcome<T>, viewVersion: number): void {
  if (request.dryRun || (outcome.kind !== 'patched' && outcome.kind !== 'unchanged')) return;
  let members: readonly AnsweredMember[] | undefined;
  try {
    members = resource.answered?.(outcome.rewrite);
  } catch {
    return; // Only a shortcut for the watch: its copy is then planned like every other.
  }
  const metadata = isObject(request.object) ? objectField(request.object, 'metadata') : undefined;
  const name = metadata && stringField(metadata, 'name');
  const namespace = metadata && stringField(metadata, 'namespace');
  if (members !== undefined && name !== undefined && namespace !== undefined) answered.note(resource.resource, namespace, name, viewVersion, members);
}

const OUTCOME_LEVEL = { patched: 'info', unchanged: 'debug', skipped: 'debug', error: 'error' } as const;

function logOutcome<T>(logger: Logger, resource: ReviewedResource<T>, request: AdmissionRequest, outcome: ReviewOutcome<T>, elapsedMs: number): void {
  if (outcome.kind === 'patched' || outcome.kind === 'unchanged') logIgnoredRecords(logger, resource.resource, sliceName(request.object), resource.ignored(outcome.rewrite));
  // Building the line costs more than the rest of the route's own work: not for a line the level drops.
  if (!logger.isLevelEnabled(OUTCOME_LEVEL[outcome.kind])) return;
  const { noun } = resource;
  const context = { uid: request.uid, operation: request.operation, [noun]: sliceName(request.object), dryRun: request.dryRun, ms: Number(elapsedMs.toFixed(3)) };
  switch (outcome.kind) {
    case 'patched':
      logger.info({ ...context, ...resource.patched(outcome.rewrite) }, `${noun} patched`);
      return;
    case 'unchanged':
      logger.debug(context, `${noun} unchanged`);
      return;
    case 'skipped':
      logger.debug({ ...context, reason: outcome.reason, detail: outcome.detail }, `${noun} left alone`);
      return;
    case 'error':
      logger.error({ ...context, err: errorMessage(outcome.error) }, 'review failed, allowed without a patch');
  }
}

/** The routes of both resources. */
export function admissionRoute<S extends RawServerBase>(app: AnyFastify<S>, options: AdmissionRouteOptions): void {
  resourceRoute(app, options, ENDPOINT_SLICES);
  resourceRoute(app, options, SHADOW_ENDPOINT_SLICES);
}

function resourceRoute<S extends RawServerBase, T>(app: AnyFastify<S>, options: AdmissionRouteOptions, resource: ReviewedResource<T>): void {
  const budgetMs = budgets();
  app.post(resource.path, async (request, reply) => {
    const decoded = decodeReview(request.body);
    // Refused like every other bad body: the app's error handler counts, logs and answers.
    if (!decoded.ok) throw Object.assign(new Error(`malformed AdmissionReview: ${decoded.message}`), { statusCode: 400 });
    const admission = decoded.value;
    const budget = budgetMs(request.query);
    const early = options.view.isSynced() ? deadline(options.elapsedMs(request), budget) : NOT_SYNCED;
    const { outcome: decided, viewVersion } = early === undefined ? review(resource, admission, options) : { outcome: early, viewVersion: undefined };
    // Checked again after the work: a patch the API server has stopped waiting for helps nobody.
    const outcome: ReviewOutcome<T> = decided.kind === 'patched' ? deadline(options.elapsedMs(request), budget) ?? decided : decided;
    if (options.answered?.wanted() === true && viewVersion !== undefined) noteAnswer(options.answered, resource, admission, outcome, viewVersion);
    const elapsed = options.elapsedMs(request);
    options.metrics.observeReview(resource.resource, admission.operation, outcome, elapsed / 1000);
    resource.observe(options.metrics, outcome);
    // The line is written once the answer is on its way: a log line to a pipe is a write(2) on the event loop, about
    // 0.5 ms on a busy node under the bench's write path (CPU profile), and the API server's write need not wait for it.
    setImmediate(logOutcome, options.logger, resource, admission, outcome, elapsed);
    return reply.code(200).send(admissionResponse(admission, outcome));
  });
}
