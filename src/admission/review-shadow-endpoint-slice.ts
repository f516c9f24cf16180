// Admission request → outcome, for ShadowEndpointSlices the hub's virtual kubelet writes with Liqo's direct
// connections. Pure: the snapshot is passed in, nothing is logged. The same line as review-endpoint-slice.ts.
import { repairShadowEndpointSlice, type ShadowRepair } from '../core/direct-connections.ts';
import { asShadowEndpointSlice, SHADOW_GROUP, SHADOW_KIND, SHADOW_VERSION } from '../core/shadow-endpoint-slice.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { Outcome, type ReviewOutcome } from './responses.ts';
import { notForRule, recordCheck, type AdmissionRequest } from './review.ts';
import { encodedShadowPatch } from './shadow-patch.ts';

/** What a review answers with: the repair, never a skip (a skip is the outcome's own kind). */
export type ShadowReviewed = Exclude<ShadowRepair, { kind: 'skip' }>;

export interface ShadowReviewOptions {
  /** `--cluster-id`: the leaf for shadows without the destination label. */
  readonly clusterId?: string | undefined;
}

const SHADOW_GVK = { group: SHADOW_GROUP, version: SHADOW_VERSION, kind: SHADOW_KIND } as const;

export function reviewShadowEndpointSlice(request: AdmissionRequest, snapshot: Snapshot, options: ShadowReviewOptions = {}): ReviewOutcome<ShadowReviewed> {
  const gate = notForRule(request, SHADOW_GVK, 'not-shadowendpointslice');
  if (gate !== undefined) return Outcome.skipped(gate.reason, gate.detail);
  const { kind } = request;
  // As for EndpointSlices: the review's kind vouches for an object written without apiVersion/kind.
  const object = kind === undefined ? request.object : asShadowEndpointSlice(request.object);
  const repair = repairShadowEndpointSlice(object, snapshot, { clusterId: options.clusterId, records: recordCheck(request) });
  if (repair.kind === 'skip') return Outcome.skipped(repair.reason, repair.detail);
  // The patch is made here, inside the route's error handling: a failure to make it is an allowed write, not a 500.
  return repair.kind === 'unchanged' ? Outcome.unchanged(repair) : Outcome.patched(repair, encodedShadowPatch(repair));
}
