// How logs, metrics, `explain` and caches name a Kubernetes object: `namespace/name`, or `name` when cluster-scoped.
export function namespacedName(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}
