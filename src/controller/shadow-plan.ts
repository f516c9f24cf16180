// Which stored ShadowEndpointSlices need a write, and which write: the same repair as the webhook's shadow route
// (docs/reference.md, "Liqo's own direct connections"), as a guarded JSON Patch. Pure.
import { shadowPatchFor } from '../admission/shadow-patch.ts';
import { repairShadowEndpointSlice, type ShadowRepair } from '../core/direct-connections.ts';
import { asShadowEndpointSlice } from '../core/shadow-endpoint-slice.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { guardedWrite, type StoredPlan, type StoredWrite } from './resource.ts';

export type ShadowChange = Extract<ShadowRepair, { kind: 'changed' }>;

/** What the log line of a stored shadow needs, not the repaired object (as SliceWrite keeps only its edits). */
export interface ShadowWrite extends StoredWrite {
  readonly edits: ShadowChange['edits'];
  readonly addresses: ShadowChange['addresses'];
  /** Record entries the plan did not use (core/trust.ts): the write takes them off the stored shadow. */
  readonly ignored: ShadowChange['ignored'];
}

export type ShadowPlan = StoredPlan<ShadowWrite>;

/**
 * A listed item (a list's items carry no apiVersion or kind) planned against one snapshot. A stored shadow restored
 * and repaired anew gives back the stored object when the view has not moved: `in-step`, nothing is written.
 */
export function planShadow(item: unknown, snapshot: Snapshot, options: { readonly clusterId?: string | undefined }): ShadowPlan {
  const repair = repairShadowEndpointSlice(asShadowEndpointSlice(item), snapshot, options);
  if (repair.kind === 'skip') return { kind: 'not-ours' };
  if (repair.kind === 'unchanged') return { kind: 'in-step' };
  return guardedWrite(repair.shadow.object, shadowPatchFor(repair), { edits: repair.edits, addresses: repair.addresses, ignored: repair.ignored });
}
