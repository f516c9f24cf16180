// Admission request → outcome, for reflected EndpointSlices. Pure: the snapshot is passed in, nothing is logged.
import { asEndpointSlice, ENDPOINT_SLICE_KIND, isSkip, LIQO_WRITER_MANAGER } from '../core/endpoint-slice.ts';
import { isUnchanged, rewriteEndpointSlice, type TraceObserver } from '../core/rewrite.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { encodedPatch } from './patch.ts';
import { Outcome, type ReviewOutcome } from './responses.ts';
import { notForRule, recordCheck, type AdmissionRequest } from './review.ts';

export interface ReviewOptions {
  /** `--cluster-id`: the local cluster for slices without the destination label. */
  readonly clusterId?: string | undefined;
  /** Sees every address (the offline `--explain`); absent on the server's hot path. */
  readonly observe?: TraceObserver | undefined;
}

const ENDPOINT_SLICE_GVK = { group: 'discovery.k8s.io', version: 'v1', kind: ENDPOINT_SLICE_KIND } as const;

export function reviewEndpointSlice(request: AdmissionRequest, snapshot: Snapshot, options: ReviewOptions = {}): ReviewOutcome {
  const gate = notForRule(request, ENDPOINT_SLICE_GVK, 'not-endpointslice');
  if (gate !== undefined) return Outcome.skipped(gate.reason, gate.detail);
  const { kind } = request;
  // The review's kind vouches for the object's type; an object written without apiVersion/kind (a hand-made
  // review, a tool that strips them) is read as what the API server says it is.
  const object = kind === undefined ? request.object : asEndpointSlice(request.object);
  // Liqo's writer sends every address itself: none of them is ours to restore (SliceOptions.addressesAsSent).
  const rewrite = rewriteEndpointSlice(object, snapshot, {
    clusterId: options.clusterId, addressesAsSent: request.fieldManager === LIQO_WRITER_MANAGER, records: recordCheck(request),
  }, options.observe);
  if (isSkip(rewrite)) return Outcome.skipped(rewrite.skip, rewrite.detail);
  // The patch is made here, inside the route's error handling: a failure to make it is an allowed write, not a 500.
  return isUnchanged(rewrite) ? Outcome.unchanged(rewrite) : Outcome.patched(rewrite, encodedPatch(rewrite));
}
