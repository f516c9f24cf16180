// Names fixed by SPEC.md that the deployment artefacts must wire to.

/** SPEC §6: the flags of `serve`; each also reads SHORTCUT_WEBHOOK_<FLAG_IN_UPPER_SNAKE>. */
export const serveFlags = [
  'host',
  'port',
  'ops-port',
  'tls-cert',
  'tls-key',
  'cluster-id',
  'shortcuts',
  'hub',
  'kubeconfig',
  'shortcuts-kubeconfig',
  'shortcuts-namespace',
  'no-controller',
  'resync-interval',
  'log-level',
  // Beyond the contract's list: the product's own.
  'stale-view-after',
  'max-reviews-in-flight',
  'max-review-bytes-in-flight',
  'debug-pairs',
  'connection-stale-after',
] as const;

export function envNameOf(flag: string): string {
  return `SHORTCUT_WEBHOOK_${flag.toUpperCase().replaceAll('-', '_')}`;
}

/** SPEC §4, with their label names. */
export const webhookMetrics: ReadonlyMap<string, readonly string[]> = new Map([
  ['shortcut_webhook_admission_requests_total', ['operation', 'result', 'resource']],
  ['shortcut_webhook_admission_duration_seconds', []],
  ['shortcut_webhook_addresses_rewritten_total', []],
  ['shortcut_webhook_addresses_restored_total', []],
  ['shortcut_webhook_pairs', ['state']],
  ['shortcut_webhook_view_last_sync_timestamp_seconds', []],
  ['shortcut_webhook_view_watch_restarts_total', []],
  ['shortcut_webhook_slices_reconciled_total', ['result']],
  ['shortcut_webhook_shadow_addresses_total', ['outcome']],
  // Beyond the contract's list: the controller's shadow pass (SPEC §9).
  ['shortcut_webhook_shadows_reconciled_total', ['result']],
  // SPEC §10: what an operator sees of each peer's path.
  ['shortcut_webhook_failover_seconds', ['direction']],
  ['shortcut_webhook_peer_path', ['peer', 'path', 'reason', 'connection']],
  ['shortcut_webhook_objects_healed_total', ['resource', 'reason']],
  ['shortcut_webhook_stored_objects', ['peer', 'path', 'resource']],
]);

export const histogramMetrics = new Set(['shortcut_webhook_admission_duration_seconds', 'shortcut_webhook_failover_seconds']);

/** The kube-apiserver's admission webhook metrics (k8s.io/apiserver pkg/admission/metrics) and their labels. */
export const apiServerMetrics: ReadonlyMap<string, readonly string[]> = new Map([
  ['apiserver_admission_webhook_admission_duration_seconds', ['name', 'type', 'operation', 'rejected']],
  ['apiserver_admission_webhook_rejection_count', ['name', 'type', 'operation', 'error_type', 'rejection_code']],
  ['apiserver_admission_webhook_fail_open_count', ['name', 'type']],
  ['apiserver_admission_webhook_request_total', ['name', 'type', 'operation', 'code', 'rejected']],
]);

export const apiServerHistograms = new Set(['apiserver_admission_webhook_admission_duration_seconds']);

/** Labels every Prometheus series gets from a ServiceMonitor scrape or a recording context. */
export const targetLabels = new Set(['namespace', 'pod', 'job', 'instance', 'service', 'container', 'endpoint', 'le']);

export const admissionResults = ['patched', 'unchanged', 'skipped', 'error'] as const;

export const unusableReasons = [
  'not-connected',
  'tunnel-down',
  'invalid-cidr',
  'family-mismatch',
  'prefix-mismatch',
  'conflict',
  'chain',
  'not-this-cluster',
] as const;

export const reflectionLabel = { key: 'endpointslice.kubernetes.io/managed-by', value: 'endpointslice.reflection.liqo.io' } as const;

/** Liqo's webhook certificate manager rewrites the caBundle of webhook configurations carrying this label. */
export const liqoWebhookLabel = 'liqo.io/webhook';

export const webhookPath = '/mutate/endpointslices';
/** SPEC §9: the second route, for Liqo's ShadowEndpointSlices. */
export const shadowWebhookPath = '/mutate/shadowendpointslices';
export const leaseName = 'shortcut-webhook-controller';
