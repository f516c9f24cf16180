// JSON Patch (RFC 6902) built straight from the rewrite's edits: no clone, no diff of whole objects.
// Paths point into the object exactly as received, so everything the webhook does not know survives.
import type { Json } from '../core/json.ts';
import type { SliceRewrite } from '../core/rewrite.ts';

export type PatchOperation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: Json }
  | { readonly op: 'remove'; readonly path: string };

/** RFC 6901: `~` first, then `/`, so `liqo.io/x` becomes `liqo.io~1x`. */
function escapePointer(token: string): string {
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

/**
 * `JSON.stringify(patchFor(rewrite))`, byte for byte, written straight from the edits: on the webhook's hot path
 * serializing the operation objects cost six times as much as the text itself. An edit's `to` is canonical address
 * text (digits, a-f, dots, colons: the codecs print nothing else), so it needs no escaping.
 */
export function patchJson(rewrite: SliceRewrite): string {
  let text = '';
  for (const edit of rewrite.edits) {
    text += `,{"op":"replace","path":"/endpoints/${edit.endpoint}/addresses/${edit.address}","value":"${edit.to}"}`;
  }
  for (const operation of annotationOperations(rewrite)) text += `,${JSON.stringify(operation)}`;
  return `[${text.slice(1)}]`;
}

/**
 * The base64 of `patchJson`, as an AdmissionReview carries it. The text is ASCII by construction (addresses, digits,
 * the webhook's own annotation keys, values made of addresses), and for ASCII btoa's Latin-1 is UTF-8 and four times
 * as fast as a Buffer. Checked rather than trusted (its UTF-8 length is its length only if it is ASCII, 0.5 µs): a
 * future change that let another character in would otherwise make btoa throw, or encode it wrongly without a word.
 */
export function encodedPatch(rewrite: SliceRewrite): string {
  const text = patchJson(rewrite);
  return Buffer.byteLength(text) === text.length ? btoa(text) : Buffer.from(text).toString('base64');
}
