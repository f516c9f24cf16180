// Which stored slices need a write, and which write: the same f as the webhook, as a guarded JSON Patch. Pure.
import { patchFor } from '../admission/patch.ts';
import { asEndpointSlice, isSkip } from '../core/endpoint-slice.ts';
import { objectAt, stringField } from '../core/json.ts';
import { isUnchanged, rewriteEndpointSlice, type SliceRewrite } from '../core/rewrite.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { StoredPlan, StoredWrite } from './resource.ts';

export interface SliceWrite extends StoredWrite {
  readonly rewrite: SliceRewrite;
}

export type SlicePlan = StoredPlan<SliceWrite>;

export function planSlice(item: unknown, snapshot: Snapshot, options: { readonly clusterId?: string | undefined }): SlicePlan {
  const object = asEndpointSlice(item);
  const result = rewriteEndpointSlice(object, snapshot, options);
  if (isSkip(result)) return { kind: 'not-ours' };
  if (isUnchanged(result)) return { kind: 'in-step' };
  const metadata = objectAt(result.slice.object, 'metadata');
  const namespace = metadata && stringField(metadata, 'namespace');
  const name = metadata && stringField(metadata, 'name');
  const resourceVersion = metadata && stringField(metadata, 'resourceVersion');
  if (!namespace || !name || !resourceVersion) return { kind: 'not-ours' };
  return {
    kind: 'write',
    write: {
      namespace, name, resourceVersion, rewrite: result,
      patch: [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...patchFor(result)],
    },
  };
}
