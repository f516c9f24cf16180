// Object builders for tests: the shapes Liqo and the API server really produce, with only what a test varies.
import { decodeFcc, type ForeignClusterConnection } from '../../src/core/fcc.ts';
import { ipv4, ipv6, type Family } from '../../src/core/ip.ts';
import type { Json, JsonObject } from '../../src/core/json.ts';
import { buildSnapshot, type Snapshot } from '../../src/core/snapshot.ts';
import { TUNNEL_CONNECTED, TUNNEL_UP, type TunnelState, type TunnelStates } from '../../src/core/leaf-views.ts';

export interface FccSpec {
  readonly name?: string;
  readonly namespace?: string;
  readonly a?: string;
  readonly b?: string;
  readonly connected?: boolean;
  readonly aPod?: string | null;
  readonly aRemapped?: string | null;
  readonly bPod?: string | null;
  readonly bRemapped?: string | null;
}

/** The FCC of LIQO.md's worked example unless told otherwise. */
export function fccObject(spec: FccSpec = {}): JsonObject {
  const a = spec.a ?? 'cluster2';
  const b = spec.b ?? 'cluster3';
  const side = (pod: string | null | undefined, remapped: string | null | undefined, defaults: [string, string]): JsonObject => ({
    ...(pod === null ? {} : { podCIDR: pod ?? defaults[0] }),
    ...(remapped === null ? {} : { remappedPodCIDR: remapped ?? defaults[1] }),
  });
  return {
    apiVersion: 'networking.liqo.io/v1beta1',
    kind: 'ForeignClusterConnection',
    metadata: { name: spec.name ?? `${a}-${b}`, namespace: spec.namespace ?? 'liqo' },
    spec: { foreignClusterA: a, foreignClusterB: b, networking: { mtu: 1450 } },
    status: {
      isConnected: spec.connected ?? true,
      phase: (spec.connected ?? true) ? 'Connected' : 'Connecting',
      lastUpdated: '2025-07-06T20:16:16Z',
      foreignClusterANetworking: side(spec.aPod, spec.aRemapped, ['10.63.0.0/16', '10.61.0.0/16']),
      foreignClusterBNetworking: side(spec.bPod, spec.bRemapped, ['10.60.0.0/16', '10.61.0.0/16']),
    },
  };
}

export function fcc(spec: FccSpec = {}): ForeignClusterConnection {
  return decodeFcc(fccObject(spec));
}

let version = 0;
/** Tunnel states from each peer's `status.value` (`Connected` is up, anything else `tunnel-down`). */
export function tunnelValues(entries: Iterable<readonly [peer: string, value: string]>): TunnelStates {
  return new Map([...entries].map(([peer, value]): [string, TunnelState] =>
    [peer, value === TUNNEL_CONNECTED ? TUNNEL_UP : { up: false, reason: 'tunnel-down', value }]));
}

export function snapshotOf(fccs: readonly ForeignClusterConnection[], tunnels?: TunnelStates): Snapshot {
  return buildSnapshot({ version: ++version, fccs, ...(tunnels === undefined ? {} : { tunnels }) });
}

/** A view that held these FCCs and holds them no more: no pair, but the records they left are still trusted (core/trust.ts). */
export function afterRemoval(former: readonly ForeignClusterConnection[]): Snapshot {
  return buildSnapshot({ version: ++version, fccs: [], formerFccs: former });
}

export interface SliceSpec {
  readonly name?: string;
  readonly namespace?: string;
  readonly addressType?: string;
  readonly destination?: string | null;
  readonly managedBy?: string;
  readonly addresses?: readonly (readonly Json[])[];
  readonly annotations?: Record<string, Json> | null;
  readonly extra?: JsonObject;
}

/** A slice as Liqo reflects it into a leaf: labels, RemotePod target refs, the hub as nodeName. */
export function sliceObject(spec: SliceSpec = {}): JsonObject {
  const labels: Record<string, Json> = {
    'endpointslice.kubernetes.io/managed-by': spec.managedBy ?? 'endpointslice.reflection.liqo.io',
    'liqo.io/managed-by': 'shadowendpointslice',
    'offloading.liqo.io/origin': 'cluster1',
    'kubernetes.io/service-name': 'web',
  };
  if (spec.destination !== null) labels['offloading.liqo.io/destination'] = spec.destination ?? 'cluster2';
  const metadata: Record<string, Json> = {
    name: spec.name ?? 'web-abcde',
    namespace: spec.namespace ?? 'demo',
    resourceVersion: '42',
    labels,
  };
  if (spec.annotations !== undefined) metadata.annotations = spec.annotations;
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata,
    addressType: spec.addressType ?? 'IPv4',
    endpoints: (spec.addresses ?? [['10.63.0.151']]).map((addresses, i) => ({
      addresses,
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'cluster1',
      targetRef: { kind: 'RemotePod', name: `web-${i}`, namespace: spec.namespace ?? 'demo' },
    })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    ...spec.extra,
  };
}

export function reviewObject(object: Json, options: { operation?: string; uid?: string; apiVersion?: string; oldObject?: Json; dryRun?: boolean } = {}): JsonObject {
  return {
    apiVersion: options.apiVersion ?? 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: options.uid ?? '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' },
      resource: { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
      requestKind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' },
      requestResource: { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
      name: 'web-abcde',
      namespace: 'demo',
      operation: options.operation ?? 'CREATE',
      userInfo: { username: 'system:serviceaccount:liqo:liqo-controller-manager' },
      object,
      oldObject: options.oldObject ?? null,
      dryRun: options.dryRun ?? false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}

/** True when `text` is an address of `family` written exactly as the webhook writes addresses. */
export function isCanonicalAddress(text: string, family: Family): boolean {
  return (family === 'IPv4' ? ipv4.parseCanonical(text) : ipv6.parseCanonical(text)) !== undefined;
}

export interface ConfigurationSpec {
  /** The peer this Configuration is for (label liqo.io/remote-cluster-id and the tenant namespace). */
  readonly peer: string;
  readonly localPod?: string | readonly string[];
  readonly remotePod?: string | readonly string[];
  readonly remotePodView?: string | readonly string[];
  readonly remoteExternal?: string | readonly string[];
  readonly remoteExternalView?: string | readonly string[];
}

const asList = (value: string | readonly string[]): readonly string[] => (typeof value === 'string' ? [value] : value);

/**
 * A leaf's Configuration for one peer as Liqo 1.x writes it (liqo-controller-manager's external-network
 * configuration controller): spec.local filled in by defaulting, status.remote the leaf's remapped view.
 * Defaults: cluster2 (pods 10.60/16, external 10.70/16) seeing the hub cluster1 (pods 10.200/16 unremapped,
 * external 10.70/16 seen at 10.71/16).
 */
export function configurationObject(spec: ConfigurationSpec): JsonObject {
  const list = (value: string | readonly string[] | undefined, fallback: string): Json[] => [...asList(value ?? fallback)];
  return {
    apiVersion: 'networking.liqo.io/v1beta1',
    kind: 'Configuration',
    metadata: {
      name: spec.peer, namespace: `liqo-tenant-${spec.peer}`, generation: 2, resourceVersion: '1234',
      labels: { 'liqo.io/remote-cluster-id': spec.peer },
    },
    spec: {
      local: { cidr: { pod: list(spec.localPod, '10.60.0.0/16'), external: ['10.70.0.0/16'] } },
      remote: { cidr: { pod: list(spec.remotePod, '10.200.0.0/16'), external: list(spec.remoteExternal, '10.70.0.0/16') } },
    },
    status: {
      conditions: [{ type: 'NetworkCIDRsConfigured', status: 'True', reason: 'NetworkCIDRsConfigured', message: 'All network CIDRs have been configured', observedGeneration: 2, lastTransitionTime: '2026-11-20T10:00:00Z' }],
      remote: { cidr: { pod: list(spec.remotePodView, '10.200.0.0/16'), external: list(spec.remoteExternalView, '10.71.0.0/16') } },
    },
  };
}

/** Now to the second, as a Kubernetes timestamp (metav1.Time): the heartbeat of a Connection just rewritten. */
export function heartbeatNow(now = Date.now()): string {
  return new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * A leaf's Liqo Connection to a peer (pkg/gateway/tunnel/wireguard/k8s.go EnsureConnection), its status as the gateway
 * writes it (pkg/gateway/connection/k8s.go): the latency's timestamp is the heartbeat, just written unless given;
 * `null` for none (Liqo's pings off), which never goes stale.
 */
export function connectionObject(peer: string, value: string, name = `gw-${peer}`, heartbeat: string | null = heartbeatNow()): JsonObject {
  return {
    apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection',
    metadata: { name, namespace: `liqo-tenant-${peer}`, labels: { 'liqo.io/remote-cluster-id': peer } },
    spec: { type: 'Client', gatewayRef: { apiVersion: 'networking.liqo.io/v1beta1', kind: 'WgGatewayClient', name: peer, namespace: `liqo-tenant-${peer}` } },
    status: heartbeat === null ? { value } : { value, latency: { value: '1.2ms', timestamp: heartbeat } },
  };
}

/** A hub's IP of an offloaded pod, as Liqo's ipmapping controller writes it: named after the pod, in its namespace. */
export function hubIpObject(spec: { pod: string; namespace?: string; ip: string; allocated?: string | null }): JsonObject {
  const namespace = spec.namespace ?? 'demo';
  return {
    apiVersion: 'ipam.liqo.io/v1alpha1', kind: 'IP',
    metadata: {
      name: spec.pod, namespace, resourceVersion: '77',
      labels: { 'offloading.liqo.io/pod-name': spec.pod, 'offloading.liqo.io/pod-namespace': namespace },
    },
    spec: { ip: spec.ip, masquerade: false },
    status: spec.allocated === null ? {} : { ip: spec.allocated ?? '10.70.0.12', cidr: '10.70.0.0/16' },
  };
}

export interface ShadowSpec {
  readonly name?: string;
  readonly namespace?: string;
  readonly addressType?: string;
  readonly destination?: string | null;
  readonly origin?: string | null;
  /** Per endpoint: its addresses and the hub pod its targetRef names (null: no targetRef). */
  readonly endpoints?: readonly { readonly addresses: readonly Json[]; readonly pod?: string | null }[];
  /** `liqo.io/direct-connections-data` as JSON text, or an object to serialise; null for none. */
  readonly data?: string | JsonObject | null;
  readonly annotations?: Record<string, Json> | null;
}

/**
 * A ShadowEndpointSlice as Liqo v1.2's virtual kubelet writes it on the leaf for a Service with
 * `liqo.io/use-direct-connections: "true"` (forge/endpointslices.go, reflection/exposition/endpointslice.go): the hub's
 * addresses untranslated in spec.template, the hub as nodeName, RemotePod target refs, and the data annotation.
 */
export function shadowObject(spec: ShadowSpec = {}): JsonObject {
  const namespace = spec.namespace ?? 'demo';
  const labels: Record<string, Json> = {
    'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io',
    'kubernetes.io/service-name': 'web',
  };
  if (spec.origin !== null) labels['offloading.liqo.io/origin'] = spec.origin ?? 'cluster1';
  if (spec.destination !== null) labels['offloading.liqo.io/destination'] = spec.destination ?? 'cluster2';
  const annotations: Record<string, Json> = { ...(spec.annotations ?? {}) };
  if (spec.data !== null && spec.data !== undefined) {
    annotations['liqo.io/direct-connections-data'] = typeof spec.data === 'string' ? spec.data : JSON.stringify(spec.data);
  }
  const metadata: Record<string, Json> = { name: spec.name ?? 'web-abcde', namespace, resourceVersion: '42', labels };
  if (spec.annotations !== null && Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return {
    apiVersion: 'offloading.liqo.io/v1beta1',
    kind: 'ShadowEndpointSlice',
    metadata,
    spec: {
      template: {
        addressType: spec.addressType ?? 'IPv4',
        endpoints: (spec.endpoints ?? []).map(({ addresses, pod }, i) => ({
          addresses: [...addresses],
          conditions: { ready: true },
          nodeName: 'cluster1',
          ...(pod === null ? {} : { targetRef: { kind: 'RemotePod', name: pod ?? `web-${i}`, namespace } }),
        })),
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    },
  };
}
