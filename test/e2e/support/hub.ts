// The hub's side of Liqo in the end-to-end tests: Liqo v1.2.0's own EndpointSlice reflection (hub-reflector/main.go)
// writing ShadowEndpointSlices into a leaf, and the hub objects it reads, written here as the hub's other components
// write them: the Nodes (kubelets and Liqo's virtual kubelets), the Services and their EndpointSlices (Kubernetes'
// endpointslice controller), the NamespaceMap (Liqo's namespace-map controller) and the IPs (support/liqo.ts
// createHubIp, as Liqo's ipmapping controller and IPAM). Field shapes and names are Liqo v1.2.0's and Kubernetes'.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { waitFor } from '../../support/wait-for.ts';
import { buildHubReflector, HUB_REFLECTOR_CRDS } from '../hub-reflector/build.ts';
import { spawnLogged, stopChild } from './control-plane.ts';
import type { KubeClient, KubeObject } from './kube-client.ts';
import { createWithStatus, REMOTE_CLUSTER_ID } from './liqo.ts';
import { pathOf } from './objects.ts';

/** Liqo's label and value for its virtual nodes (pkg/consts/namespace_mapping.go TypeLabel, TypeNode). */
const VIRTUAL_NODE = { 'liqo.io/type': 'virtual-node' } as const;
/** Liqo's Service annotation asking for direct connections (pkg/consts/replication.go line 108). */
export const USE_DIRECT_CONNECTIONS = 'liqo.io/use-direct-connections';

/** The CRD the hub's reflection needs beyond liqo.ts liqoCrds(), from the same Liqo module. */
export function hubReflectorCrds(): KubeObject[] {
  const { dir } = buildHubReflector();
  return HUB_REFLECTOR_CRDS.map((file) => parse(readFileSync(join(dir, 'crds', file), 'utf8')) as KubeObject);
}

/**
 * A Node of the hub. `cluster` given: the virtual node of that peer, labelled as Liqo labels it (the reflector reads
 * the label to drop endpoints the leaf runs itself, and to list the peers' addresses for direct connections). Without
 * it, one of the hub's own nodes: a kubelet always labels its node, and the reflector drops an endpoint on a node with
 * no labels at all (forge/endpointslices.go EndpointToBeReflected, lines 56-66) or on a node it does not find.
 */
export function hubNode(name: string, cluster?: string): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: cluster === undefined ? { 'kubernetes.io/hostname': name } : { ...VIRTUAL_NODE, [REMOTE_CLUSTER_ID]: cluster, 'kubernetes.io/hostname': name } },
  };
}

export function hubService(name: string, options: { readonly namespace?: string; readonly directConnections?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name, namespace: options.namespace ?? 'demo', ...(options.directConnections ? { annotations: { [USE_DIRECT_CONNECTIONS]: 'true' } } : {}) },
    spec: { ports: [{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 8080 }], selector: { app: name } },
  };
}

export interface HubEndpoint {
  /** The pod's address as the hub sees it. */
  readonly address: string;
  readonly pod: string;
  readonly node: string;
}

/** An EndpointSlice of the hub as Kubernetes' endpointslice controller writes it for Service `service`. */
export function hubEndpointSlice(spec: { readonly name: string; readonly service: string; readonly namespace?: string;
  readonly endpoints: readonly HubEndpoint[]; readonly annotations?: Record<string, string> }): KubeObject {
  const namespace = spec.namespace ?? 'demo';
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: {
      name: spec.name, namespace,
      labels: { 'kubernetes.io/service-name': spec.service, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      ...(spec.annotations === undefined ? {} : { annotations: spec.annotations }),
    },
    addressType: 'IPv4',
    endpoints: spec.endpoints.map((endpoint) => ({
      addresses: [endpoint.address],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: endpoint.node,
      targetRef: { kind: 'Pod', name: endpoint.pod, namespace, uid: uidOf(endpoint.pod) },
    })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

/** A stable uid per pod name, so that a slice written again names the same pod. */
function uidOf(pod: string): string {
  const hex = Buffer.from(pod).toString('hex').padEnd(12, '0').slice(0, 12);
  return `00000000-0000-4000-8000-${hex}`;
}

/**
 * The tenant namespace of the leaf on the hub and its NamespaceMap, as Liqo's namespace-map controller leaves it once
 * each namespace is offloaded: `status.currentMapping` maps it to the leaf's namespace of the same name, phase
 * Accepted. The virtual kubelet's NamespaceMap handler starts the reflection of exactly these namespaces
 * (pkg/virtualKubelet/reflection/namespacemap/namespace.go).
 */
export async function offloadNamespaces(hub: KubeClient, leafCluster: string, namespaces: readonly string[]): Promise<KubeObject> {
  const tenant = `liqo-tenant-${leafCluster}`;
  const object: KubeObject = {
    apiVersion: 'offloading.liqo.io/v1beta1', kind: 'NamespaceMap',
    metadata: { name: `${leafCluster}-namespacemap`, namespace: tenant, labels: { [REMOTE_CLUSTER_ID]: leafCluster } },
    spec: {},
  };
  return createWithStatus(hub, object, {
    currentMapping: Object.fromEntries(namespaces.map((namespace) => [namespace, { remoteNamespace: namespace, phase: 'Accepted' }])),
  });
}

/** Creates (or replaces) a hub object: the EndpointSlice controller rewrites its slices whole, and so do the tests. */
export async function putHubObject(hub: KubeClient, object: KubeObject): Promise<KubeObject> {
  const name = object.metadata?.name ?? '';
  const stored = await hub.request<KubeObject>('GET', pathOf(object, name));
  if (stored.status === 404) return hub.ok('POST', pathOf(object), object);
  return hub.ok('PUT', pathOf(object, name), { ...object, metadata: { ...object.metadata, resourceVersion: stored.body.metadata?.resourceVersion } });
}

export interface HubReflectorProcess {
  /** The reflector's writes of the shadow `namespace/name` (its klog lines), by kind. */
  writes(shadow: string): { created: number; updated: number };
  /** Lines where a reflection failed. */
  failures(): string[];
  log(): string;
  stop(): Promise<void>;
}

export interface HubReflectorOptions {
  readonly hubKubeconfig: string;
  readonly leafKubeconfig: string;
  readonly hubCluster: string;
  readonly leafCluster: string;
  /** The hub's own pod CIDRs: addresses in them are reflected untranslated (the virtual kubelet's --local-podcidr). */
  readonly hubPodCidrs: readonly string[];
  /** The namespaces whose reflection must have started (as mapped by offloadNamespaces) before this resolves. */
  readonly namespaces: readonly string[];
  readonly logFile: string;
}

/**
 * Starts Liqo's EndpointSlice reflection from the hub into the leaf, and resolves once it leads (its workers skip
 * every item until then) and has synced the informers of every namespace asked for, so that its first writes are
 * the tests' to wait for.
 */
export async function startHubReflector(options: HubReflectorOptions): Promise<HubReflectorProcess> {
  const { dir } = buildHubReflector();
  const child: ChildProcess = spawnLogged(join(dir, 'hub-reflector'), [
    '--local-kubeconfig', options.hubKubeconfig, '--remote-kubeconfig', options.leafKubeconfig,
    '--local-cluster-id', options.hubCluster, '--remote-cluster-id', options.leafCluster,
    '--local-podcidr', options.hubPodCidrs.join(','),
  ], options.logFile);
  const log = () => readFileSync(options.logFile, 'utf8');
  let stopping = false;
  const alive = () => {
    if (!stopping && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`hub-reflector exited (${child.exitCode ?? child.signalCode}):\n${log().split('\n').slice(-20).join('\n')}`);
    }
  };
  const lines = () => {
    alive();
    return log().split('\n');
  };
  const reflector: HubReflectorProcess = {
    log,
    // klog lines of endpointslice.go Handle: `Remote shadowendpointslice "ns/name" successfully created|updated`.
    writes: (shadow) => {
      const mine = lines().filter((line) => line.includes(`Remote shadowendpointslice "${shadow}" successfully`));
      return { created: mine.filter((line) => line.includes('successfully created')).length, updated: mine.filter((line) => line.includes('successfully updated')).length };
    },
    // A 409 ("the object has been modified") is the reflector's optimistic concurrency meeting our controller's patch
    // of the same shadow: its workqueue retries it on the fresh object, which the tests' convergence checks read. Not
    // a failure; every other refusal is.
    failures: () => lines().filter((line) => /Reflection of local EndpointSlice .* failed|Failed to (create|update) remote shadowendpointslice/.test(line)
      && !line.includes('the object has been modified')),
    stop: () => {
      stopping = true;
      return stopChild(child);
    },
  };
  try {
    // root.go's InitCallback (a resync once elected), and the manager's line once a namespace's informers synced.
    await waitFor(() => {
      const text = lines().join('\n');
      return text.includes('Leader election: this pod is the leader') && text.includes('Starting informer resync')
        && options.namespaces.every((namespace) => text.includes(`Reflection between local namespace "${namespace}" and remote namespace "${namespace}" correctly started`));
    }, { timeoutMs: 60_000, intervalMs: 25, description: 'hub-reflector elected and reflecting' });
  } catch (error) {
    await reflector.stop();
    throw new Error(`${String(error)}\nhub-reflector's log ends:\n${log().split('\n').slice(-20).join('\n')}`, { cause: error });
  }
  return reflector;
}
