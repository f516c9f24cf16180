// Apart from client.ts so that serve can ask it without loading the Kubernetes client (file mode on a laptop).

/** True inside a pod, where the service account token and KUBERNETES_SERVICE_HOST are there. */
export function inCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

/** The origin of credentials read from the pod's service account, not from a kubeconfig file. */
export const IN_CLUSTER_ORIGIN = 'in-cluster service account';
