// Admission request → outcome, for reflected EndpointSlices. Pure: the snapshot is passed in, nothing is logged.
import { asEndpointSlice, ENDPOINT_SLICE_KIND, isSkip, LIQO_WRITER_MANAGER } from '../core/endpoint-slice.ts';
import { isUnchanged, rewriteEndpointSlice, type TraceObserver } from '../core/rewrite.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { encodedPatch } from './patch.ts';
import { Outcome, type ReviewOutcome } from './responses.ts';
import type { AdmissionRequest } from './review.ts';

export interface ReviewOptions {
  /** `--cluster-id`: the local cluster for slices without the destination label. */
  readonly clusterId?: string | undefined;
  /** Sees every address (the offline `--explain`); absent on the server's hot path. */
  readonly observe?: TraceObserver | undefined;
}

const MUTATED_OPERATIONS = new Set(['CREATE', 'UPDATE']);

export function reviewEndpointSlice(request: AdmissionRequest, snapshot: Snapshot, options: ReviewOptions = {}): ReviewOutcome {
  if (!MUTATED_OPERATIONS.has(request.operation)) {
    return Outcome.skipped('operation', `${request.operation} is not CREATE or UPDATE`);
  }
  const { kind } = request;
  if (kind !== undefined && (kind.group !== 'discovery.k8s.io' || kind.version !== 'v1' || kind.kind !== ENDPOINT_SLICE_KIND)) {
    return Outcome.skipped('not-endpointslice', `${kind.group}/${kind.version} ${kind.kind} is not discovery.k8s.io/v1 EndpointSlice`);
  }
  // The review's kind vouches for the object's type; an object written without apiVersion/kind (a hand-made
  // review, a tool that strips them) is read as what the API server says it is.
  const object = kind === undefined ? request.object : asEndpointSlice(request.object);
  // Liqo's writer sends every address as it computes it now: what it sends is never restored (RewriteOptions.liqoWrite).
  const liqoWrite = request.fieldManager === LIQO_WRITER_MANAGER;
  const rewrite = rewriteEndpointSlice(object, snapshot, { clusterId: options.clusterId, liqoWrite }, options.observe);
  if (isSkip(rewrite)) return Outcome.skipped(rewrite.skip, rewrite.detail);
  // The patch is made here, inside the route's error handling: a failure to make it is an allowed write, not a 500.
  return isUnchanged(rewrite) ? Outcome.unchanged(rewrite) : Outcome.patched(rewrite, encodedPatch(rewrite));
}
