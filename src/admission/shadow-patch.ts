// JSON Patch (RFC 6902) for a repaired ShadowEndpointSlice, built from the repair's edits against the object exactly
// as received. The controller puts a `test` of the resourceVersion in front (optimistic concurrency); the webhook
// sends it as it is.
import type { ShadowRepair } from '../core/direct-connections.ts';
import type { JsonObject } from '../core/json.ts';
import { annotationOperations, encodePatch, type PatchOperation } from './patch.ts';

/** Whether the repaired object still has an annotations map (the last key removed takes the map with it). */
function mapLeft(object: JsonObject): boolean {
  const metadata = object.metadata;
  return typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) && Object.hasOwn(metadata, 'annotations');
}

/** The operations that turn the received shadow into `repair.object`; none when nothing changes. */
export function shadowPatchFor(repair: ShadowRepair): PatchOperation[] {
  if (repair.kind !== 'changed') return [];
  const operations: PatchOperation[] = repair.edits.map((edit) => ({
    op: 'replace', path: `/spec/template/endpoints/${edit.endpoint}/addresses/${edit.address}`, value: edit.to,
  }));
  operations.push(...annotationOperations(repair.shadow.annotations, repair.annotations, () => mapLeft(repair.object)));
  return operations;
}

/** The patch as an AdmissionReview carries it: base64 of its UTF-8 JSON. */
export function encodedShadowPatch(repair: ShadowRepair): string {
  return encodePatch(shadowPatchFor(repair));
}
