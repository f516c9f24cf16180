// JSON Patch (RFC 6902) for a repaired ShadowEndpointSlice, built from the repair's edits against the object exactly
// as received. The controller puts a `test` of the resourceVersion in front (optimistic concurrency); the webhook
// sends it as it is.
import type { ShadowRepair } from '../core/direct-connections.ts';
import { escapePointer, type PatchOperation } from './patch.ts';

type ChangedRepair = Extract<ShadowRepair, { kind: 'changed' }>;

function annotationOperations(repair: ChangedRepair): PatchOperation[] {
  const current = repair.shadow.annotations;
  if (repair.annotations.length === 0) return [];
  if (current === undefined) {
    // No map yet (or a null one): adding it whole is the only valid way, child paths would not resolve.
    const map: Record<string, string> = {};
    for (const { key, value } of repair.annotations) if (value !== undefined) map[key] = value;
    return [{ op: 'add', path: '/metadata/annotations', value: map }];
  }
  const metadata = repair.object.metadata;
  const left = typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) && Object.hasOwn(metadata, 'annotations');
  // The last key removed: the map goes too, as the repaired object has it.
  if (!left) return [{ op: 'remove', path: '/metadata/annotations' }];
  return repair.annotations.map(({ key, value }): PatchOperation => {
    const path = `/metadata/annotations/${escapePointer(key)}`;
    if (value === undefined) return { op: 'remove', path };
    return { op: Object.hasOwn(current, key) ? 'replace' : 'add', path, value };
  });
}

/** The operations that turn the received shadow into `repair.object`; none when nothing changes. */
export function shadowPatchFor(repair: ShadowRepair): PatchOperation[] {
  if (repair.kind !== 'changed') return [];
  const operations: PatchOperation[] = repair.edits.map((edit) => ({
    op: 'replace', path: `/spec/template/endpoints/${edit.endpoint}/addresses/${edit.address}`, value: edit.to,
  }));
  operations.push(...annotationOperations(repair));
  return operations;
}

/** The patch as an AdmissionReview carries it: base64 of its UTF-8 JSON. */
export function encodedShadowPatch(repair: ShadowRepair): string {
  return Buffer.from(JSON.stringify(shadowPatchFor(repair))).toString('base64');
}
