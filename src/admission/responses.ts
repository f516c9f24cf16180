// The closed set of answers a review can get, and the one place that turns them into AdmissionReview JSON.
import type { SkipReason } from '../core/endpoint-slice.ts';
import type { SliceRewrite } from '../core/rewrite.ts';
import type { AdmissionRequest } from './review.ts';

/** Why a review is answered unpatched without a rewrite: the slice's own reasons, and those only a review has. */
export type ReviewSkipReason = SkipReason | 'operation' | 'deadline' | 'view-not-synced';

export type ReviewOutcome =
  /** `patch` is what the answer carries (`encodedPatch`); `patchFor(rewrite)` gives the operations, for people. */
  | { readonly kind: 'patched'; readonly rewrite: SliceRewrite; readonly patch: string }
  | { readonly kind: 'unchanged'; readonly rewrite: SliceRewrite }
  | { readonly kind: 'skipped'; readonly reason: ReviewSkipReason; readonly detail: string }
  /** Something broke inside the webhook: the write goes through untouched, the error is logged and counted. */
  | { readonly kind: 'error'; readonly error: unknown };

export const Outcome = {
  patched: (rewrite: SliceRewrite, patch: string): ReviewOutcome => ({ kind: 'patched', rewrite, patch }),
  unchanged: (rewrite: SliceRewrite): ReviewOutcome => ({ kind: 'unchanged', rewrite }),
  skipped: (reason: ReviewSkipReason, detail: string): ReviewOutcome => ({ kind: 'skipped', reason, detail }),
  errored: (error: unknown): ReviewOutcome => ({ kind: 'error', error }),
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
export function admissionResponse(request: Pick<AdmissionRequest, 'apiVersion' | 'uid'>, outcome: ReviewOutcome): AdmissionResponseBody {
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
