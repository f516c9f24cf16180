// The closed set of answers a review can get, and the one place that turns them into AdmissionReview JSON.
import type { SkipReason } from '../core/endpoint-slice.ts';
import type { SliceRewrite } from '../core/rewrite.ts';
import type { ShadowSkipReason } from '../core/shadow-endpoint-slice.ts';
import type { AdmissionRequest } from './review.ts';

/** Why a review is answered unpatched without a rewrite: the object's own reasons, and those only a review has. */
export type ReviewSkipReason = SkipReason | ShadowSkipReason | 'operation' | 'deadline' | 'view-not-synced';

/** `T` is what the resource's pure rule made of the object: a SliceRewrite for EndpointSlices, a repair for shadows. */
export type ReviewOutcome<T = SliceRewrite> =
  /** `patch` is what the answer carries (`encodedPatch`); `patchFor(rewrite)` gives the operations, for people. */
  | { readonly kind: 'patched'; readonly rewrite: T; readonly patch: string }
  | { readonly kind: 'unchanged'; readonly rewrite: T }
  | { readonly kind: 'skipped'; readonly reason: ReviewSkipReason; readonly detail: string }
  /** Something broke inside the webhook: the write goes through untouched, the error is logged and counted. */
  | { readonly kind: 'error'; readonly error: unknown };

export const Outcome = {
  patched: <T>(rewrite: T, patch: string): ReviewOutcome<T> => ({ kind: 'patched', rewrite, patch }),
  unchanged: <T>(rewrite: T): ReviewOutcome<T> => ({ kind: 'unchanged', rewrite }),
  skipped: (reason: ReviewSkipReason, detail: string): ReviewOutcome<never> => ({ kind: 'skipped', reason, detail }),
  errored: (error: unknown): ReviewOutcome<never> => ({ kind: 'error', error }),
} as const;

export interface AdmissionResponseBody {
  readonly apiVersion: string;
  readonly kind: 'AdmissionReview';
  readonly response: {
    readonly uid: string;
    readonly allowed: true;
    readonly patchType?: 'JSONPatch';
    readonly patch?: string;
  };
}

/** Every outcome is `allowed: true`: a path optimisation must never block a write. Only `patched` carries a patch. */
export function admissionResponse(request: Pick<AdmissionRequest, 'apiVersion' | 'uid'>, outcome: ReviewOutcome<unknown>): AdmissionResponseBody {
  const base = { apiVersion: request.apiVersion, kind: 'AdmissionReview', response: { uid: request.uid, allowed: true } } as const;
  if (outcome.kind !== 'patched') return base;
  return {
    ...base,
    response: {
      ...base.response,
      patchType: 'JSONPatch',
      patch: outcome.patch,
    },
  };
}
