// Which stored slices need a write, and which write: the same f as the webhook, as a guarded JSON Patch. Pure.
import { patchFor } from '../admission/patch.ts';
import { asEndpointSlice, isSkip } from '../core/endpoint-slice.ts';
import { isUnchanged, rewriteEndpointSlice, type AddressEdit } from '../core/rewrite.ts';
import type { IgnoredEntry } from '../core/trust.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { guardedWrite, type StoredPlan, type StoredWrite } from './resource.ts';

/**
 * What is kept of a slice from its plan to its log line: the edits, not the rewrite (which holds the whole rewritten
 * slice), so up to --max-concurrent-patches writes in flight hold a few strings each rather than whole slices.
 */
export interface SliceWrite extends StoredWrite {
  readonly edits: readonly AddressEdit[];
  /** Record entries the plan did not use (core/trust.ts): the write takes them off the stored slice. */
  readonly ignored: readonly IgnoredEntry[];
}

export type SlicePlan = StoredPlan<SliceWrite>;

export function planSlice(item: unknown, snapshot: Snapshot, options: { readonly clusterId?: string | undefined }): SlicePlan {
  const object = asEndpointSlice(item);
  const result = rewriteEndpointSlice(object, snapshot, options);
  if (isSkip(result)) return { kind: 'not-ours' };
  if (isUnchanged(result)) return { kind: 'in-step' };
  return guardedWrite(result.slice.object, patchFor(result), { edits: result.edits, ignored: result.ignored });
}
