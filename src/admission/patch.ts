// JSON Patch (RFC 6902) built straight from the rewrite's edits: no clone, no diff of whole objects.
// Paths point into the object exactly as received, so everything the webhook does not know survives.
import type { Json } from '../core/json.ts';
import { editedAnnotations, type SliceRewrite } from '../core/rewrite.ts';

export type PatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: Json }
  | { readonly op: 'remove'; readonly path: string };

/** RFC 6901: `~` first, then `/`, so `liqo.io/x` becomes `liqo.io~1x`. */
export function escapePointer(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The annotation part of the patch: after the address replacements, in the order the rewrite lists its keys. */
function annotationOperations(rewrite: SliceRewrite): PatchOperation[] {
  const current = rewrite.slice.annotations;
  if (rewrite.annotations.length === 0) return [];
  if (current === undefined) {
    // No map yet (or a null one): adding it whole is the only valid way, child paths would not resolve.
    const map: Record<string, string> = {};
    for (const { key, value } of rewrite.annotations) if (value !== undefined) map[key] = value;
    return [{ op: 'add', path: '/metadata/annotations', value: map }];
  }
  // The last of the map's keys removed: the map goes too, as applyRewrite has it.
  if (editedAnnotations(rewrite) === undefined) return [{ op: 'remove', path: '/metadata/annotations' }];
  return rewrite.annotations.map(({ key, value }): PatchOperation => {
    const path = `/metadata/annotations/${escapePointer(key)}`;
    if (value === undefined) return { op: 'remove', path };
    return { op: Object.hasOwn(current, key) ? 'replace' : 'add', path, value };
  });
}

export function patchFor(rewrite: SliceRewrite): PatchOperation[] {
  const operations: PatchOperation[] = rewrite.edits.map((edit) => ({
    op: 'replace', path: `/endpoints/${edit.endpoint}/addresses/${edit.address}`, value: edit.to,
  }));
  operations.push(...annotationOperations(rewrite));
  return operations;
}

/** The patch as an AdmissionReview carries it: base64 of its UTF-8 JSON. */
export function encodedPatch(rewrite: SliceRewrite): string {
  return Buffer.from(JSON.stringify(patchFor(rewrite))).toString('base64');
}
