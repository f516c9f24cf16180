// YAML or JSON text → documents, each named by origin and position so that every error can say where it is.
import { isScalar, parseAllDocuments } from 'yaml';
import { failure, success, type Result } from '../core/result.ts';
import { errorMessage } from './errors.ts';

export interface Document {
  /** `file.yaml#2`, `stdin#1`: what messages call this document (1-based, as people count). */
  readonly name: string;
  readonly value: unknown;
}

export type ParsedDocuments = Result<readonly Document[]>;

/**
 * Concatenated JSON values (JSON Lines, or pretty objects one after another, as `--output json` and `jq` print
 * them), split at depth zero. Undefined when the text is not a sequence of two or more objects or arrays.
 */
function splitJsonValues(text: string): string[] | undefined {
  const values: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') { if (depth === 0) return undefined; inString = true; continue; }
    if (char === '{' || char === '[') {
      if (depth++ === 0) start = i;
    } else if (char === '}' || char === ']') {
      if (--depth < 0) return undefined;
      if (depth === 0) values.push(text.slice(start, i + 1));
    } else if (depth === 0 && !/\s/.test(char ?? '')) {
      return undefined;
    }
  }
  return depth === 0 && values.length > 1 ? values : undefined;
}

/**
 * A document with nothing in it: a trailing `---`, two in a row, or only a comment. yaml gives it an empty null
 * scalar rather than no contents; an explicit `null` or `~` is a document, and is refused later as not an object.
 */
function isEmptyDocument(contents: unknown): boolean {
  return contents === null || (isScalar(contents) && contents.value === null && contents.source === '');
}

/** JSON is YAML, so one parser reads both. Aliases are bounded so that a small file cannot expand without limit. */
export function parseDocuments(text: string, origin: string): ParsedDocuments {
  const jsonValues = splitJsonValues(text);
  if (jsonValues !== undefined) {
    const documents: Document[] = [];
    for (const [i, value] of jsonValues.entries()) {
      try {
        documents.push({ name: `${origin}#${i + 1}`, value: JSON.parse(value) });
      } catch (error) {
        return failure(`${origin}#${i + 1}: ${errorMessage(error)}`);
      }
    }
    return success(documents);
  }
  const documents: Document[] = [];
  const parsed = parseAllDocuments(text, { schema: 'core', uniqueKeys: true, prettyErrors: false });
  const all = Array.isArray(parsed) ? parsed : [];
  for (const [i, document] of all.entries()) {
    const name = `${origin}#${i + 1}`;
    const [error] = document.errors;
    if (error !== undefined) return failure(`${name}: ${error.message.split('\n')[0] ?? 'invalid YAML'}`);
    if (isEmptyDocument(document.contents)) continue;
    try {
      documents.push({ name, value: document.toJS({ maxAliasCount: 100 }) });
    } catch (error) {
      return failure(`${name}: ${errorMessage(error)}`);
    }
  }
  return success(documents);
}
