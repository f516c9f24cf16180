// Documents → FCCs: single objects, Lists of them, anything else reported and ignored.
import type { Document } from '../util/documents.ts';
import { decodeFcc, FCC_KIND, isFccObject, type ForeignClusterConnection } from '../core/fcc.ts';
import { field, isArray, isObject, stringField } from '../core/json.ts';

export interface FccDocuments {
  readonly fccs: readonly ForeignClusterConnection[];
  /** Documents that are not FCCs: said once in the log or on stderr, never fatal. */
  readonly ignored: readonly string[];
}

export function fccsFromDocuments(documents: readonly Document[]): FccDocuments {
  const fccs: ForeignClusterConnection[] = [];
  const ignored: string[] = [];
  const take = (value: unknown, name: string): void => {
    if (isFccObject(value)) {
      fccs.push(decodeFcc(value, name));
      return;
    }
    const items = isObject(value) && (stringField(value, 'kind') ?? '').endsWith('List') ? field(value, 'items') : undefined;
    if (isArray(items)) {
      items.forEach((item, i) => take(item, `${name}/items/${i}`));
      return;
    }
    const kind = isObject(value) ? stringField(value, 'kind') : undefined;
    ignored.push(`${name}: ${kind === undefined ? 'not a Kubernetes object' : `kind ${kind}`}, not a ${FCC_KIND}`);
  };
  for (const document of documents) take(document.value, document.name);
  return { fccs, ignored };
}
