// JSON Patch (RFC 6902) built straight from the rewrite's edits: no clone, no diff of whole objects.
// Paths point into the object exactly as received, so everything the webhook does not know survives.
import type { Json, JsonObject } from '../core/json.ts';
import { editedAnnotations, type SliceRewrite } from '../core/rewrite.ts';

export type PatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: Json }
  | { readonly op: 'remove'; readonly path: string };

/** RFC 6901: `~` first, then `/`, so `liqo.io/x` becomes `liqo.io~1x`. */
export function escapePointer(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The annotation part of a patch, after the address replacements, in the order the rule lists its keys: `current` is
 * the map as received (undefined: none, or null), `mapLeft` whether the result still has one (asked only when it matters: on the hot path, most reviews edit no annotation). Both resources' rules
 * edit annotations the same way.
 */
export function annotationOperations(
  current: JsonObject | undefined, edits: readonly { readonly key: string; readonly value: string | undefined }[], mapLeft: () => boolean,
): PatchOperation[] {
  if (edits.length === 0) return [];
  if (current === undefined) {
    // No map yet (or a null one): adding it whole is the only valid way, child paths would not resolve.
    const map: Record<string, string> = {};
    for (const { key, value } of edits) if (value !== undefined) map[key] = value;
    return [{ op: 'add', path: '/metadata/annotations', value: map }];
  }
  // The last of the map's keys removed: the map goes too, as the rule's result has it.
  if (!mapLeft()) return [{ op: 'remove', path: '/metadata/annotations' }];
  return edits.map(({ key, value }): PatchOperation => {
    const path = `/metadata/annotations/${escapePointer(key)}`;
    if (value === undefined) return { op: 'remove', path };
    return { op: Object.hasOwn(current, key) ? 'replace' : 'add', path, value };
  });
}

/** The patch as an AdmissionReview carries it: base64 of its UTF-8 JSON. */
export function encodePatch(operations: readonly PatchOperation[]): string {
  return Buffer.from(JSON.stringify(operations)).toString('base64');
}

export function patchFor(rewrite: SliceRewrite): PatchOperation[] {
  const operations: PatchOperation[] = rewrite.edits.map((edit) => ({
    op: 'replace', path: `/endpoints/${edit.endpoint}/addresses/${edit.address}`, value: edit.to,
  }));
  operations.push(...annotationOperations(rewrite.slice.annotations, rewrite.annotations, () => editedAnnotations(rewrite) !== undefined));
  return operations;
}

export function encodedPatch(rewrite: SliceRewrite): string {
  return encodePatch(patchFor(rewrite));
}
