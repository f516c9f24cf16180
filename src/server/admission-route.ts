// POST /mutate/endpointslices: the only place that turns reviews into HTTP. Error policy:
//
//   situation                                  answer
//   ----------------------------------------   -------------------------------------------------------------
//   review decoded, slice rewritten            200, allowed, JSONPatch (base64)
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
import { decodeReview, type AdmissionRequest } from '../admission/review.ts';
import { sliceName } from '../core/endpoint-slice.ts';
import { parseDuration } from '../util/duration.ts';
import { errorMessage } from '../util/errors.ts';
import { describeEdits, type Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { ShortcutView } from '../view/shortcut-view.ts';

export const ADMISSION_PATH = '/mutate/endpointslices';

export interface AdmissionRouteOptions {
  readonly view: ShortcutView;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clusterId: string | undefined;
  /** Milliseconds since the request's headers arrived (the app stamps every request): budget and duration run from then. */
  readonly elapsedMs: (request: object) => number;
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
function deadline(elapsedMs: number, budget: number | undefined): ReviewOutcome | undefined {
  if (budget === undefined || elapsedMs <= budget) return undefined;
  return Outcome.skipped('deadline', `${elapsedMs.toFixed(0)} ms of a ${budget / DEADLINE_SHARE} ms timeout spent`);
}

const NOT_SYNCED = Object.freeze(Outcome.skipped('view-not-synced', 'the shortcut view has not synced yet'));

function review(request: AdmissionRequest, options: AdmissionRouteOptions): ReviewOutcome {
  try {
    return reviewEndpointSlice(request, options.view.current(), { clusterId: options.clusterId });
  } catch (error) {
    return Outcome.errored(error);
  }
}

const OUTCOME_LEVEL = { patched: 'info', unchanged: 'debug', skipped: 'debug', error: 'error' } as const;

function logOutcome(logger: Logger, request: AdmissionRequest, outcome: ReviewOutcome, elapsedMs: number): void {
  // Building the line costs more than the rest of the route's own work: not for a line the level drops.
  if (!logger.isLevelEnabled(OUTCOME_LEVEL[outcome.kind])) return;
  const context = { uid: request.uid, operation: request.operation, slice: sliceName(request.object), dryRun: request.dryRun, ms: Number(elapsedMs.toFixed(3)) };
  switch (outcome.kind) {
    case 'patched':
      logger.info({ ...context, cluster: outcome.rewrite.slice.clusterId, changed: outcome.rewrite.edits.length,
        changes: describeEdits(outcome.rewrite.edits), annotations: outcome.rewrite.annotations.map((a) => a.key) },
      'slice patched');
      return;
    case 'unchanged':
      logger.debug(context, 'slice unchanged');
      return;
    case 'skipped':
      logger.debug({ ...context, reason: outcome.reason, detail: outcome.detail }, 'slice left alone');
      return;
    case 'error':
      logger.error({ ...context, err: errorMessage(outcome.error) }, 'review failed, allowed without a patch');
  }
}

export function admissionRoute<S extends RawServerBase>(app: AnyFastify<S>, options: AdmissionRouteOptions): void {
  const budgetMs = budgets();
  app.post(ADMISSION_PATH, async (request, reply) => {
    const decoded = decodeReview(request.body);
    // Refused like every other bad body: the app's error handler counts, logs and answers.
    if (!decoded.ok) throw Object.assign(new Error(`malformed AdmissionReview: ${decoded.message}`), { statusCode: 400 });
    const admission = decoded.value;
    const budget = budgetMs(request.query);
    let outcome = options.view.isSynced() ? deadline(options.elapsedMs(request), budget) ?? review(admission, options) : NOT_SYNCED;
    // Checked again after the work: a patch the API server has stopped waiting for helps nobody.
    if (outcome.kind === 'patched') outcome = deadline(options.elapsedMs(request), budget) ?? outcome;
    const elapsed = options.elapsedMs(request);
    options.metrics.observeReview(admission.operation, outcome, elapsed / 1000);
    // The line is written once the answer is on its way: a log line to a pipe is a write(2) on the event loop, about
    // 0.5 ms on a busy node under the bench's write path (CPU profile), and the API server's write need not wait for it.
    setImmediate(logOutcome, options.logger, admission, outcome, elapsed);
    return reply.code(200).send(admissionResponse(admission, outcome));
  });
}
