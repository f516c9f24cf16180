// How logs, metrics, `explain` and caches name a Kubernetes object: `namespace/name`, or `name` when cluster-scoped.
import { objectAt, stringField, type JsonObject } from './json.ts';

export function namespacedName(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** An object's `namespace/name` from its metadata; `fallbackName` (a list position) when it has no name. */
export function refOf(object: JsonObject, fallbackName = ''): string {
  const metadata = objectAt(object, 'metadata');
  return namespacedName((metadata && stringField(metadata, 'namespace')) || '', (metadata && stringField(metadata, 'name')) || fallbackName);
}

/** Order by `namespace/name`: stable output (states, details) whatever order the API or a file listed objects in. */
export function byRef(a: { readonly ref: string }, b: { readonly ref: string }): number {
  return a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0;
}
