// Every call the product makes to a Kubernetes API, one entry per call site in src/, with what it asks of RBAC. The
// chart's and manifests' roles are checked against it (test/deploy/api-calls.test.ts), and it against the code: a
// call site added, moved to another file or removed fails that test until this list says what it needs.
import { LEASE_NAME } from '../../../src/controller/manager.ts';

/** Where the call goes: the leaf's API server, the hub's, or the FCCs' (the leaf with shortcuts.source=cluster, else the hub). */
export type CallTarget = 'leaf' | 'hub' | 'fccs';

export interface Grant {
  readonly group: string;
  readonly resource: string;
  readonly verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch';
  /** The one object asked for, where RBAC may name it. */
  readonly name?: string;
  /** Only with the ShadowEndpointSlice webhook on (webhook.shadowEndpointSlices.enabled). */
  readonly shadowsOnly?: true;
  /** Not granted on purpose, and why the product takes the refusal as an answer. */
  readonly refusedOnPurpose?: string;
}

export interface ApiCall {
  /** The file, from the repository root. */
  readonly file: string;
  /** As the call site spells it: a generated client's method, `watch` (a ListWatch's watchPath) or `send GET`/`send PATCH` (the lean client). */
  readonly call: string;
  /** `serve` under its ServiceAccount, or a command run with the user's own credentials (no role of ours applies). */
  readonly identity: 'serve' | 'user';
  readonly target: CallTarget;
  readonly grants: readonly Grant[];
}

const SLICES = { group: 'discovery.k8s.io', resource: 'endpointslices' } as const;
const SHADOWS = { group: 'offloading.liqo.io', resource: 'shadowendpointslices', shadowsOnly: true } as const;
const LEASES = { group: 'coordination.k8s.io', resource: 'leases' } as const;
const CONNECTIONS = { group: 'networking.liqo.io', resource: 'connections' } as const;
const CONFIGURATIONS = { group: 'networking.liqo.io', resource: 'configurations' } as const;
const FCCS = { group: 'networking.liqo.io', resource: 'foreignclusterconnections' } as const;
const IPS = { group: 'ipam.liqo.io', resource: 'ips' } as const;
const EVENTS = { group: 'events.k8s.io', resource: 'events' } as const;
const FOREIGN_CLUSTERS = { group: 'core.liqo.io', resource: 'foreignclusters' } as const;

/** The stored objects the controller passes over and heals: the same verb on each. */
const stored = (verb: Grant['verb']): Grant[] => [{ ...SLICES, verb }, { ...SHADOWS, verb }];

export const API_CALLS: readonly ApiCall[] = [
  // The view: FCCs where the shortcuts are read, the leaf's Connections and Configurations, the hub's IPs and Configurations.
  { file: 'src/view/fcc-watch.ts', call: 'watch', identity: 'serve', target: 'fccs', grants: [{ ...FCCS, verb: 'watch' }] },
  { file: 'src/view/fcc-watch.ts', call: 'listClusterCustomObject', identity: 'serve', target: 'fccs', grants: [{ ...FCCS, verb: 'list' }] },
  { file: 'src/view/fcc-watch.ts', call: 'listNamespacedCustomObject', identity: 'serve', target: 'fccs', grants: [{ ...FCCS, verb: 'list' }] },
  // The leaf's Liqo objects; its ForeignClusters (which peers are its hubs) only where hub readers are given.
  { file: 'src/view/cluster-source.ts', call: 'watch', identity: 'serve', target: 'leaf',
    grants: [{ ...CONNECTIONS, verb: 'watch' }, { ...CONFIGURATIONS, verb: 'watch' }, { ...FOREIGN_CLUSTERS, verb: 'watch' }] },
  { file: 'src/view/cluster-source.ts', call: 'listClusterCustomObject', identity: 'serve', target: 'leaf',
    grants: [{ ...CONNECTIONS, verb: 'list' }, { ...CONFIGURATIONS, verb: 'list' }, { ...FOREIGN_CLUSTERS, verb: 'list' }] },
  // The hub's IPs and Configurations, in every namespace or in each --hub-namespace.
  { file: 'src/view/hub-source.ts', call: 'watch', identity: 'serve', target: 'hub', grants: [{ ...IPS, verb: 'watch' }] },
  { file: 'src/view/hub-source.ts', call: 'listClusterCustomObject', identity: 'serve', target: 'hub', grants: [{ ...IPS, verb: 'list' }] },
  { file: 'src/view/hub-source.ts', call: 'listNamespacedCustomObject', identity: 'serve', target: 'hub', grants: [{ ...IPS, verb: 'list' }] },
  { file: 'src/view/hub-source.ts', call: 'watch', identity: 'serve', target: 'hub', grants: [{ ...CONFIGURATIONS, verb: 'watch' }] },
  { file: 'src/view/hub-source.ts', call: 'listClusterCustomObject', identity: 'serve', target: 'hub', grants: [{ ...CONFIGURATIONS, verb: 'list' }] },
  { file: 'src/view/hub-source.ts', call: 'listNamespacedCustomObject', identity: 'serve', target: 'hub', grants: [{ ...CONFIGURATIONS, verb: 'list' }] },
  // The controller: its passes over the stored objects, the healing watch, the Lease.
  { file: 'src/controller/lean-stored-objects.ts', call: 'send GET', identity: 'serve', target: 'leaf', grants: stored('list') },
  { file: 'src/controller/lean-stored-objects.ts', call: 'send GET', identity: 'serve', target: 'leaf', grants: stored('get') },
  { file: 'src/controller/lean-stored-objects.ts', call: 'send PATCH', identity: 'serve', target: 'leaf', grants: stored('patch') },
  { file: 'src/controller/healer.ts', call: 'watch', identity: 'serve', target: 'leaf', grants: stored('watch') },
  { file: 'src/controller/leader.ts', call: 'getNamespacedCustomObject', identity: 'serve', target: 'leaf', grants: [{ ...LEASES, verb: 'get', name: LEASE_NAME }] },
  { file: 'src/controller/leader.ts', call: 'listNamespacedCustomObject', identity: 'serve', target: 'leaf', grants: [{ ...LEASES, verb: 'list',
    refusedOnPurpose: 'asked only after a 404 for the Lease, to tell a missing Lease from a missing Lease API: a 403 says the API is served' }] },
  { file: 'src/controller/leader.ts', call: 'replaceNamespacedCustomObject', identity: 'serve', target: 'leaf', grants: [{ ...LEASES, verb: 'update', name: LEASE_NAME }] },
  { file: 'src/controller/leader.ts', call: 'createNamespacedCustomObject', identity: 'serve', target: 'leaf', grants: [{ ...LEASES, verb: 'create' }] },
  // Events, and the Liqo object each regards.
  { file: 'src/kube/events.ts', call: 'createNamespacedCustomObject', identity: 'serve', target: 'leaf', grants: [{ ...EVENTS, verb: 'create' }] },
  { file: 'src/kube/events.ts', call: 'patchNamespacedCustomObject', identity: 'serve', target: 'leaf', grants: [{ ...EVENTS, verb: 'patch' }] },
  { file: 'src/kube/events.ts', call: 'listClusterCustomObject', identity: 'serve', target: 'leaf', grants: [{ ...CONNECTIONS, verb: 'list' }, { ...CONFIGURATIONS, verb: 'list' }] },
  // The read-only commands, with the user's credentials.
  { file: 'src/commands/explain.ts', call: 'getNamespacedCustomObject', identity: 'user', target: 'leaf', grants: [{ ...SLICES, verb: 'get' }] },
  { file: 'src/commands/explain.ts', call: 'listNamespacedCustomObject', identity: 'user', target: 'leaf', grants: [{ ...SLICES, verb: 'list' }] },
  { file: 'src/commands/status.ts', call: 'send GET', identity: 'user', target: 'leaf', grants: [{ ...SLICES, verb: 'list' }, { ...SHADOWS, verb: 'list' }, { ...CONNECTIONS, verb: 'list' }] },
];

/**
 * The call sites in `text` (a file of src/): a generated client's list/read/get/create/patch/replace/delete method, a
 * ListWatch's watchPath, the lean client's send.
 */
export function callSitesIn(text: string): string[] {
  const sites: { index: number; call: string }[] = [];
  for (const match of text.matchAll(/\.((?:list|read|get|create|patch|replace|delete)(?:Namespaced|Cluster)[A-Z]\w*)\(/g)) sites.push({ index: match.index, call: match[1] ?? '' });
  for (const match of text.matchAll(/\bwatchPath: (?!string)/g)) sites.push({ index: match.index, call: 'watch' });
  for (const match of text.matchAll(/\bsend\(\{\s*method: '(\w+)'/g)) sites.push({ index: match.index, call: `send ${match[1] ?? ''}` });
  return sites.sort((a, b) => a.index - b.index).map((site) => site.call);
}
