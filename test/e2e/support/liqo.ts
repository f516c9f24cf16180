// Liqo in the end-to-end tests: its own CRDs and its own leaf writer, both from the Liqo module (liqo-writer/build.ts),
// and the Liqo objects the tests write as Liqo's other components would (the hub's virtual kubelet, the networking
// controllers, the IPAM). Field shapes and names are Liqo v1.2.0's (apis/, sources named where a detail matters).
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { configurationObject, connectionObject, hubIpObject, type ConfigurationSpec } from '../../support/builders.ts';
import { waitFor } from '../../support/wait-for.ts';
import { buildLiqoWriter, LIQO_CRDS } from '../liqo-writer/build.ts';
import { spawnLogged, stopChild } from './control-plane.ts';
import type { KubeClient, KubeObject } from './kube-client.ts';
import { pathOf, selfPath } from './objects.ts';

const ESTABLISHED = { timeoutMs: 30_000, intervalMs: 25 } as const;
/** Liqo's label naming the peer an object is about (pkg/consts RemoteClusterID). */
export const REMOTE_CLUSTER_ID = 'liqo.io/remote-cluster-id';

/** Liqo's CRDs as its chart ships them (deployments/liqo/charts/liqo-crds/crds), unchanged. */
export function liqoCrds(): KubeObject[] {
  const { dir } = buildLiqoWriter();
  return LIQO_CRDS.map((file) => parse(readFileSync(join(dir, 'crds', file), 'utf8')) as KubeObject);
}

/** Creates CRDs and waits until each is Established (served). */
export async function installCrds(client: KubeClient, crds: readonly KubeObject[]): Promise<void> {
  for (const crd of crds) await client.ok('POST', pathOf(crd), crd);
  for (const crd of crds) {
    await waitFor(async () => {
      const stored = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(selfPath(crd));
      return stored.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, { ...ESTABLISHED, description: `${crd.metadata?.name} established` });
  }
}

/**
 * Creates `object` without its status, then writes the status through the status subresource, as Liqo's controllers
 * do (a create's status is dropped). `status` may depend on the created object (its generation).
 */
export async function createWithStatus(client: KubeClient, object: KubeObject,
  status: Record<string, unknown> | ((created: KubeObject) => Record<string, unknown>)): Promise<KubeObject> {
  const { status: _dropped, ...bare } = object;
  const created = await client.ok('POST', pathOf(object), bare);
  return setStatus(client, created, typeof status === 'function' ? status(created) : status);
}

export function setStatus(client: KubeClient, object: KubeObject, status: Record<string, unknown>): Promise<KubeObject> {
  return client.ok('PATCH', `${selfPath(object)}/status`, { status }, { contentType: 'application/merge-patch+json' });
}

/**
 * A peer's ForeignCluster as Liqo keeps it on a cluster (apis/core/v1beta1): found by label, networking enabled and
 * its connection Established, API server Established. The shadowendpointslice-controller marks endpoints ready only
 * then, and maps addresses only with networking enabled.
 */
export function foreignCluster(clusterId: string): { object: KubeObject; status: Record<string, unknown> } {
  const condition = (type: string) => ({ type, status: 'Established', lastTransitionTime: '2026-11-20T10:00:00Z', reason: type, message: '' });
  return {
    object: {
      apiVersion: 'core.liqo.io/v1beta1', kind: 'ForeignCluster',
      metadata: { name: clusterId, labels: { [REMOTE_CLUSTER_ID]: clusterId } },
      spec: { clusterID: clusterId },
    },
    status: {
      role: 'Provider',
      modules: {
        networking: { enabled: true, conditions: [condition('NetworkConnectionStatus')] },
        authentication: { enabled: true },
        offloading: { enabled: true },
      },
      conditions: [condition('APIServerStatus')],
      tenantNamespace: { local: `liqo-tenant-${clusterId}`, remote: 'liqo-tenant-cluster2' },
    },
  };
}

/**
 * A Configuration for `spec.peer` (builders.ts defaults: the leaf cluster2 seeing the hub cluster1), created as Liqo
 * creates it: spec first, then the status with `NetworkCIDRsConfigured=True` at the generation it describes (Liqo's
 * AreConfigurationNetworkCIDRsConfigured: without it the writer maps nothing).
 */
export async function createConfiguration(client: KubeClient, spec: ConfigurationSpec): Promise<KubeObject> {
  const object = configurationObject(spec) as KubeObject;
  delete object.metadata?.resourceVersion;
  delete object.metadata?.generation;
  const status = object.status as { conditions: Record<string, unknown>[] };
  return createWithStatus(client, object, (created) => ({
    ...status,
    conditions: status.conditions.map((condition) => ({ ...condition, observedGeneration: created.metadata?.generation })),
  }));
}

/**
 * A leaf's Connection to a peer with its `status.value` (`Connected`, `Connecting` or `Error`, connection_types.go).
 * Nothing rewrites it, so it carries no heartbeat (as with Liqo's pings off) unless one is given: a heartbeat that is
 * never rewritten is a dead gateway (connection-stale). connection-heartbeat.test.ts writes heartbeats as Liqo does.
 */
export function createConnection(client: KubeClient, peer: string, value: string, name?: string, heartbeat: string | null = null): Promise<KubeObject> {
  const object = connectionObject(peer, value, name, heartbeat) as KubeObject;
  return createWithStatus(client, object, object.status as Record<string, unknown>);
}

export interface ShadowSpec {
  readonly name: string;
  readonly namespace?: string;
  /** The hub (label offloading.liqo.io/origin). */
  readonly origin?: string;
  readonly destination?: string;
  /** One list of addresses per endpoint, in the hub's own terms (the virtual kubelet's translation). */
  readonly addresses?: readonly (readonly string[])[];
  /** The hub pod of each endpoint (targetRef name); `web-<index>` unless given. */
  readonly pods?: readonly string[];
  readonly ports?: readonly Record<string, unknown>[];
  readonly annotations?: Record<string, string>;
}

/**
 * A ShadowEndpointSlice as the hub's virtual kubelet writes it into a leaf (pkg/virtualKubelet/forge/endpointslices.go
 * RemoteShadowEndpointSlice): the hub slice's labels with the reflection's managed-by and origin/destination, endpoints
 * with only the `ready` condition, the hub's cluster ID as nodeName and a `RemotePod` targetRef.
 */
export function shadowSlice(spec: ShadowSpec): KubeObject {
  const namespace = spec.namespace ?? 'demo';
  return {
    apiVersion: 'offloading.liqo.io/v1beta1', kind: 'ShadowEndpointSlice',
    metadata: {
      name: spec.name, namespace,
      labels: {
        'kubernetes.io/service-name': 'web',
        'endpointslice.kubernetes.io/managed-by': 'endpointslice.reflection.liqo.io',
        'offloading.liqo.io/origin': spec.origin ?? 'cluster1',
        'offloading.liqo.io/destination': spec.destination ?? 'cluster2',
      },
      ...(spec.annotations === undefined ? {} : { annotations: spec.annotations }),
    },
    spec: {
      template: {
        addressType: 'IPv4',
        endpoints: (spec.addresses ?? [['10.63.0.151']]).map((addresses, i) => ({
          addresses,
          conditions: { ready: true },
          nodeName: spec.origin ?? 'cluster1',
          targetRef: { kind: 'RemotePod', name: spec.pods?.[i] ?? `web-${i}`, namespace, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` },
        })),
        ports: spec.ports ?? [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    },
  };
}

/**
 * The hub's IPAM record of an offloaded pod (apis/ipam/v1alpha1/ip_types.go, made by the hub's ipmapping pod
 * controller; builders.ts hubIpObject): named after the pod, in its namespace, labelled with it; `spec.ip` the hub's
 * view of the pod, status the address allocated to it in the hub's external CIDR, written through the status
 * subresource (both immutable once set: a reallocation is a new IP).
 */
export function createHubIp(client: KubeClient, spec: { pod: string; namespace?: string; ip: string; allocated: string }): Promise<KubeObject> {
  const object = hubIpObject(spec) as KubeObject;
  delete object.metadata?.resourceVersion;
  return createWithStatus(client, object, object.status as Record<string, unknown>);
}

export interface LiqoWriter {
  /** Lines of the writer's log where it created or server-side-applied the EndpointSlice `namespace/name`. */
  writes(slice?: string): number;
  log(): string;
  stop(): Promise<void>;
}

/** Starts Liqo's shadowendpointslice-controller (liqo-writer) against the API server of `kubeconfig`. */
export function startLiqoWriter(kubeconfig: string, logFile: string): LiqoWriter {
  const { dir } = buildLiqoWriter();
  const child: ChildProcess = spawnLogged(join(dir, 'liqo-writer'), ['--kubeconfig', kubeconfig], logFile);
  const log = () => readFileSync(logFile, 'utf8');
  let stopping = false;
  return {
    log,
    // klog lines of shadowendpointslice_controller.go: `created endpointslice "ns/name" for ...`,
    // `updated endpointslice "ns/name" with success`. A writer that died says so here, with its log's end.
    writes: (slice) => {
      if (!stopping && (child.exitCode !== null || child.signalCode !== null)) {
        throw new Error(`liqo-writer exited (${child.exitCode ?? child.signalCode}):\n${log().split('\n').slice(-20).join('\n')}`);
      }
      return log().split('\n').filter((line) => /(created|updated) endpointslice "/.test(line)
        && (slice === undefined || line.includes(`endpointslice "${slice}"`))).length;
    },
    stop: () => {
      stopping = true;
      return stopChild(child);
    },
  };
}
