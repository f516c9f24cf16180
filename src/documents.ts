// YAML or JSON text → documents, each named by origin and position so that every error can say where it is.
import { parseAllDocuments } from 'yaml';

export interface Document {
  /** `file.yaml#2`, `stdin#1`: what messages call this document (1-based, as people count). */
  readonly name: string;
  readonly value: unknown;
}

export type ParsedDocuments =
  | { readonly ok: true; readonly documents: readonly Document[] }
  | { readonly ok: false; readonly message: string };

/** JSON is YAML, so one parser reads both. Aliases are bounded so that a small file cannot expand without limit. */
export function parseDocuments(text: string, origin: string): ParsedDocuments {
  const documents: Document[] = [];
  const parsed = parseAllDocuments(text, { schema: 'core', uniqueKeys: true, prettyErrors: false });
  const all = Array.isArray(parsed) ? parsed : [];
  for (const [i, document] of all.entries()) {
    const name = `${origin}#${i + 1}`;
    const [error] = document.errors;
    if (error !== undefined) return { ok: false, message: `${name}: ${error.message.split('\n')[0] ?? 'invalid YAML'}` };
    if (document.contents === null) continue;
    try {
      documents.push({ name, value: document.toJS({ maxAliasCount: 100 }) });
    } catch (error) {
      return { ok: false, message: `${name}: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  return { ok: true, documents };
}
