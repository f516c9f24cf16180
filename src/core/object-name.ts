// How logs, metrics, `explain` and caches name a Kubernetes object: `namespace/name`, or `name` when cluster-scoped.
export function namespacedName(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Order by `namespace/name`: stable output (states, details) whatever order the API or a file listed objects in. */
export function byRef(a: { readonly ref: string }, b: { readonly ref: string }): number {
  return a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0;
}
