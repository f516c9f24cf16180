// How logs, metrics, `explain` and caches name a Kubernetes object: `namespace/name`, or `name` when cluster-scoped.
import { isObject, objectAt, stringField, type JsonObject } from './json.ts';

export function namespacedName(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** An object's `namespace/name` from its metadata; `fallbackName` (a list position) when it has no name. */
export function refOf(object: JsonObject, fallbackName = ''): string {
  const metadata = objectAt(object, 'metadata');
  return namespacedName((metadata && stringField(metadata, 'namespace')) || '', (metadata && stringField(metadata, 'name')) || fallbackName);
}

/** The resourceVersion an object was read or written at; undefined for anything without one. */
export function resourceVersionOf(object: unknown): string | undefined {
  const metadata = isObject(object) ? objectAt(object, 'metadata') : undefined;
  return metadata && stringField(metadata, 'resourceVersion');
}

/** Code-unit order, as Go's sort.Strings: the same on every machine, unlike localeCompare. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Order by `namespace/name`: stable output (states, details) whatever order the API or a file listed objects in. */
export function byRef(a: { readonly ref: string }, b: { readonly ref: string }): number {
  return compareText(a.ref, b.ref);
}
