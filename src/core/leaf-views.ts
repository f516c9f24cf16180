// The leaf's own Liqo network objects, decoded from untrusted JSON: its Configurations (one per peer: the leaf's own
// pod CIDR, and where it sees the peer's pod and external CIDRs) and its Connections (is the tunnel to a peer up).
// Shapes from liqotech/liqo apis/networking/v1beta1/{configuration,connection}_types.go (v1.2.0 e9f4428d, master
// 557c199c): `cidr.pod` and `cidr.external` are lists since v1.0 (baee6830); a single string, as older objects and
// hand-written files hold, is read as a list of one.
import { encloses, overlaps, parseCidr, type Cidr, type Ipv4Cidr, type Ipv6Cidr } from './cidr.ts';
import { isLiqoNetworkingObject } from './fcc.ts';
import { field, isArray, isObject, objectAt, stringField, type JsonObject } from './json.ts';
import { byRef, compareText, refOf } from './object-name.ts';

export const CONFIGURATION_KIND = 'Configuration';
export const CONFIGURATION_PLURAL = 'configurations';
export const CONNECTION_KIND = 'Connection';
export const CONNECTION_PLURAL = 'connections';
/** Liqo's label naming the peer of a per-peer object (pkg/consts/namespace_mapping.go `RemoteClusterID`). */
export const REMOTE_CLUSTER_LABEL = 'liqo.io/remote-cluster-id';
/** `status.value` of a Connection whose tunnel is up (connection_types.go `Connected`). */
export const TUNNEL_CONNECTED = 'Connected';

/**
 * How the leaf's Liqo Connection(s) to one peer stand: up, or down with the contract's reason. `value` is what
 * `status.value` reads (`Connected` on a stale one: its gateway stopped writing, so nothing said otherwise).
 * `connection-stale` names the Connection whose heartbeat went silent and when its last one was seen (RFC 3339).
 */
export type TunnelState =
  | { readonly up: true; readonly value: typeof TUNNEL_CONNECTED }
  | { readonly up: false; readonly reason: 'tunnel-down'; readonly value: string }
  | { readonly up: false; readonly reason: 'connection-stale'; readonly value: typeof TUNNEL_CONNECTED;
      readonly connection: string; readonly lastHeartbeat: string };

/** The tunnel states by peer cluster ID; a peer with no entry is not cross-checked. */
export type TunnelStates = ReadonlyMap<string, TunnelState>;

export type TunnelDownReason = Extract<TunnelState, { readonly up: false }>['reason'];

export const TUNNEL_UP: TunnelState = Object.freeze({ up: true, value: TUNNEL_CONNECTED });

/** A peer's tunnel as a word for tables and JSON: its `status.value`, or `connection-stale`. */
export function tunnelWord(state: TunnelState): string {
  if (!state.up && state.reason === 'connection-stale') return state.reason;
  return state.value || '(no status)';
}

/** The word, and for a stale one when its last heartbeat was and how long before `now` (epoch ms): what tables show. */
export function tunnelText(state: TunnelState, now: number): string {
  if (state.up || state.reason !== 'connection-stale') return tunnelWord(state);
  const age = Math.max(0, Math.round((now - Date.parse(state.lastHeartbeat)) / 1000));
  return `connection-stale (last heartbeat ${age}s ago, ${state.lastHeartbeat})`;
}

/**
 * Why the leaf's Connections to `peer` say its direct network is down, with the detail every path gives; undefined
 * while they say it is up (or there are none: then the caller's other inputs decide).
 */
export function tunnelDown(peer: string, state: TunnelState | undefined): { readonly reason: TunnelDownReason; readonly detail: string } | undefined {
  if (state === undefined || state.up) return undefined;
  if (state.reason === 'tunnel-down') {
    return { reason: state.reason, detail: `the leaf's Liqo Connection to ${peer} is ${state.value || 'without status'}, not Connected` };
  }
  return {
    reason: state.reason,
    detail: `the leaf's Liqo Connection ${state.connection} to ${peer} reads Connected, but its gateway stopped reporting: `
      + `no heartbeat since ${state.lastHeartbeat}`,
  };
}

export function sameTunnel(a: TunnelState, b: TunnelState): boolean {
  if (a.up || b.up) return a.up === b.up;
  if (a.reason !== b.reason || a.value !== b.value) return false;
  return a.reason !== 'connection-stale' || (b.reason === 'connection-stale' && a.connection === b.connection && a.lastHeartbeat === b.lastHeartbeat);
}

/** One CIDR as the leaf's Configuration states it, with where it was read: what a `local-overlap` detail names. */
export interface ViewCidr {
  readonly cidr: Cidr;
  /** `namespace/name` of the Configuration. */
  readonly configuration: string;
}

/**
 * One position of a Configuration's paired CIDR lists: `declared` is the peer's own block (`spec.remote.cidr.X[i]`),
 * `seen` where this cluster sees it (`status.remote.cidr.X[i]`). Liqo pairs the two lists by index
 * (pkg/utils/ipam/mapping/ips.go `remapWithin`), so a position where either side does not parse is dropped whole.
 */
export interface CidrMapping {
  readonly declared: Cidr;
  readonly seen: Cidr;
}

/** A Configuration for one peer (the leaf's, or the hub's): what local-view safety, `hub-external` and the stock path read. */
export interface LiqoConfiguration {
  readonly ref: string;
  /** The `liqo.io/remote-cluster-id` label; undefined when missing. */
  readonly remoteCluster: string | undefined;
  /** `spec.local.cidr.pod`: the leaf's own pod CIDRs. */
  readonly localPod: readonly Cidr[];
  /** `spec.local.cidr.external`: the leaf's own external CIDRs (where it allocates addresses for its peers). */
  readonly localExternal: readonly Cidr[];
  /** `status.remote.cidr.pod`: where the leaf sees the peer's pods. */
  readonly remotePod: readonly Cidr[];
  /** `status.remote.cidr.external`: where the leaf sees the peer's external CIDR (the peer's IPAM-allocated addresses). */
  readonly remoteExternal: readonly Cidr[];
  /** `spec.remote.cidr.pod[i]` with `status.remote.cidr.pod[i]`: how this cluster maps the peer's pod addresses. */
  readonly podMappings: readonly CidrMapping[];
  /** `spec.remote.cidr.external[i]` with `status.remote.cidr.external[i]`. */
  readonly externalMappings: readonly CidrMapping[];
}

export function isConfigurationObject(value: unknown): value is JsonObject {
  return isLiqoNetworkingObject(value, CONFIGURATION_KIND);
}

export function isConnectionObject(value: unknown): value is JsonObject {
  return isLiqoNetworkingObject(value, CONNECTION_KIND);
}

/**
 * A list of CIDRs, or one CIDR as a string. Entries that do not parse are dropped: Liqo leaves a status position
 * empty ("") until its IPAM has remapped it, and such a position says nothing about where addresses are.
 */
function cidrList(value: unknown): Cidr[] {
  const texts = typeof value === 'string' ? [value] : isArray(value) ? value : [];
  const cidrs: Cidr[] = [];
  for (const text of texts) {
    const cidr = typeof text === 'string' ? parseCidr(text) : undefined;
    if (cidr !== undefined) cidrs.push(cidr);
  }
  return cidrs;
}

function cidrsAt(object: JsonObject, path: readonly string[], key: 'pod' | 'external'): Cidr[] {
  const cidr = objectAt(object, ...path);
  return cidr === undefined ? [] : cidrList(field(cidr, key));
}

/** Positions where both lists hold a CIDR of one family: the only ones Liqo can remap through. */
function mappings(object: JsonObject, key: 'pod' | 'external'): CidrMapping[] {
  const list = (path: readonly string[]): readonly unknown[] => {
    const cidr = objectAt(object, ...path);
    const value = cidr === undefined ? undefined : field(cidr, key);
    return typeof value === 'string' ? [value] : isArray(value) ? value : [];
  };
  const declared = list(['spec', 'remote', 'cidr']);
  const seen = list(['status', 'remote', 'cidr']);
  const result: CidrMapping[] = [];
  for (let i = 0; i < Math.min(declared.length, seen.length); i++) {
    const d = declared[i];
    const s = seen[i];
    const from = typeof d === 'string' ? parseCidr(d) : undefined;
    const to = typeof s === 'string' ? parseCidr(s) : undefined;
    if (from !== undefined && to !== undefined && from.family === to.family) result.push({ declared: from, seen: to });
  }
  return result;
}

export function labelOf(object: JsonObject, key: string): string | undefined {
  const labels = objectAt(object, 'metadata', 'labels');
  return (labels && stringField(labels, key)) || undefined;
}

export function decodeConfiguration(object: JsonObject, fallbackName = ''): LiqoConfiguration {
  return {
    ref: refOf(object, fallbackName),
    remoteCluster: labelOf(object, REMOTE_CLUSTER_LABEL),
    localPod: cidrsAt(object, ['spec', 'local', 'cidr'], 'pod'),
    localExternal: cidrsAt(object, ['spec', 'local', 'cidr'], 'external'),
    remotePod: cidrsAt(object, ['status', 'remote', 'cidr'], 'pod'),
    remoteExternal: cidrsAt(object, ['status', 'remote', 'cidr'], 'external'),
    podMappings: mappings(object, 'pod'),
    externalMappings: mappings(object, 'external'),
  };
}

function sameCidrs(a: readonly Cidr[], b: readonly Cidr[]): boolean {
  return a.length === b.length && a.every((cidr, i) => cidr.text === b[i]?.text);
}

function sameMappings(a: readonly CidrMapping[], b: readonly CidrMapping[]): boolean {
  return a.length === b.length && a.every((m, i) => m.declared.text === b[i]?.declared.text && m.seen.text === b[i]?.seen.text);
}

/** Same decoded fields, in any order: a Configuration's conditions or resourceVersion moving changes no decision. */
export function sameConfigurations(a: readonly LiqoConfiguration[], b: readonly LiqoConfiguration[]): boolean {
  if (a.length !== b.length) return false;
  const others = [...b].sort(byRef);
  return [...a].sort(byRef).every((x, i) => {
    const y = others[i];
    return y !== undefined && x.ref === y.ref && x.remoteCluster === y.remoteCluster && sameCidrs(x.localPod, y.localPod) && sameCidrs(x.localExternal, y.localExternal)
      && sameCidrs(x.remotePod, y.remotePod) && sameCidrs(x.remoteExternal, y.remoteExternal)
      && sameMappings(x.podMappings, y.podMappings) && sameMappings(x.externalMappings, y.externalMappings);
  });
}

/**
 * The gateway's heartbeat in a Connection: `status.latency.timestamp` as epoch ms, which Liqo's gateway rewrites
 * (with the latency's value) at least every `ping-update-status-interval` while its pings are answered
 * (pkg/gateway/connection/k8s.go UpdateConnectionStatus, v1.2.0). Undefined without one: pings off, or a Connection
 * not Connected (Liqo writes a zero time, `null`, when the peer stops answering). A date before 1970 is no heartbeat.
 */
export function connectionHeartbeat(connection: unknown): { readonly text: string; readonly at: number } | undefined {
  if (!isObject(connection)) return undefined;
  const latency = objectAt(connection, 'status', 'latency');
  const text = latency && stringField(latency, 'timestamp');
  if (!text) return undefined;
  const at = Date.parse(text);
  return Number.isFinite(at) && at > 0 ? { text, at } : undefined;
}

/**
 * When a Connection's heartbeat went silent past the bound (its last one, RFC 3339), else undefined: judged by
 * whoever watches the rewrites (view/connection-heartbeats.ts); without a judge, `status.value` alone decides.
 */
export type HeartbeatJudge = (ref: string, connection: JsonObject) => string | undefined;

/**
 * Connections by peer. Liqo may hold several for one peer (a gateway server and a client, or one per tunnel since
 * multi-interface gateways, 557c199c): the peer counts as up only while every one of them is `Connected` with a
 * heartbeat that is not stale, and otherwise takes the state of the first one that is not Connected, else the first
 * stale one (in `namespace/name` order, so the detail is stable).
 */
export function tunnelStates(connections: Iterable<unknown>, judge?: HeartbeatJudge): TunnelStates {
  const byPeer = new Map<string, { ref: string; value: string; silentSince: string | undefined }[]>();
  let index = 0;
  for (const connection of connections) {
    index++;
    if (!isObject(connection)) continue;
    const peer = labelOf(connection, REMOTE_CLUSTER_LABEL);
    if (peer === undefined) continue;
    const status = objectAt(connection, 'status');
    const ref = refOf(connection, String(index));
    const value = (status && stringField(status, 'value')) ?? '';
    const entry = { ref, value, silentSince: value === TUNNEL_CONNECTED ? judge?.(ref, connection) : undefined };
    const list = byPeer.get(peer);
    if (list === undefined) byPeer.set(peer, [entry]); else list.push(entry);
  }
  const states = new Map<string, TunnelState>();
  for (const [peer, list] of byPeer) {
    const sorted = list.sort(byRef);
    const down = sorted.find((entry) => entry.value !== TUNNEL_CONNECTED);
    const stale = sorted.find((entry) => entry.silentSince !== undefined);
    states.set(peer, down !== undefined
      ? { up: false, reason: 'tunnel-down', value: down.value }
      : stale?.silentSince !== undefined
        ? { up: false, reason: 'connection-stale', value: TUNNEL_CONNECTED, connection: stale.ref, lastHeartbeat: stale.silentSince }
        : TUNNEL_UP);
  }
  return states;
}

/** The tunnel states by peer cluster ID, in ID order: how `/debug/pairs` and `--explain` list them. */
export function sortedTunnels(tunnels: TunnelStates): [peer: string, state: TunnelState][] {
  return [...tunnels].sort(([a], [b]) => compareText(a, b));
}

/** What the leaf's Configurations forbid a pair's source to touch, gathered once per snapshot. */
export interface LeafViews {
  readonly configurations: readonly LiqoConfiguration[];
  /** Ordered by Configuration: the first one a source overlaps is the one its detail names. */
  readonly ownPods: readonly ViewCidr[];
  /** The leaf's own external CIDRs (`spec.local.cidr.external`). */
  readonly ownExternals: readonly ViewCidr[];
  readonly remotePods: readonly (ViewCidr & { readonly cluster: string | undefined })[];
  readonly externals: readonly (ViewCidr & { readonly cluster: string | undefined })[];
  /**
   * The leaf's view of `cluster`'s external CIDR in one family: where the hub's IPAM-allocated addresses appear.
   * Split by family here, once per snapshot, because every review of a slice from that hub reads it.
   */
  externalOf<F extends Cidr['family']>(cluster: string, family: F): readonly Extract<Cidr, { family: F }>[];
  /** The Configurations for `cluster` (label `liqo.io/remote-cluster-id`), in `namespace/name` order. */
  configurationsOf(cluster: string): readonly LiqoConfiguration[];
}

const NO_BLOCKS: readonly never[] = Object.freeze([]);

export function leafViews(configurations: readonly LiqoConfiguration[]): LeafViews {
  const sorted = Object.freeze([...configurations].sort(byRef));
  const ownPods: ViewCidr[] = [];
  const ownExternals: ViewCidr[] = [];
  const remotePods: (ViewCidr & { cluster: string | undefined })[] = [];
  const externals: (ViewCidr & { cluster: string | undefined })[] = [];
  const externalByCluster = new Map<string, { IPv4: Ipv4Cidr[]; IPv6: Ipv6Cidr[] }>();
  const byCluster = new Map<string, LiqoConfiguration[]>();
  for (const configuration of sorted) {
    const { ref, remoteCluster: cluster } = configuration;
    if (cluster !== undefined) byCluster.set(cluster, [...byCluster.get(cluster) ?? [], configuration]);
    for (const cidr of configuration.localPod) ownPods.push({ cidr, configuration: ref });
    for (const cidr of configuration.localExternal) ownExternals.push({ cidr, configuration: ref });
    for (const cidr of configuration.remotePod) remotePods.push({ cidr, configuration: ref, cluster });
    for (const cidr of configuration.remoteExternal) externals.push({ cidr, configuration: ref, cluster });
    if (cluster === undefined) continue;
    const byFamily = externalByCluster.get(cluster) ?? { IPv4: [], IPv6: [] };
    externalByCluster.set(cluster, byFamily);
    for (const cidr of configuration.remoteExternal) {
      if (cidr.family === 'IPv4') byFamily.IPv4.push(cidr); else byFamily.IPv6.push(cidr);
    }
  }
  return Object.freeze({
    configurations: sorted, ownPods, ownExternals, remotePods, externals,
    externalOf: <F extends Cidr['family']>(cluster: string, family: F) =>
      (externalByCluster.get(cluster)?.[family] ?? NO_BLOCKS) as readonly Extract<Cidr, { family: F }>[],
    configurationsOf: (cluster: string) => byCluster.get(cluster) ?? NO_BLOCKS,
  });
}

export const NO_LEAF_VIEWS: LeafViews = leafViews([]);

function whose(cluster: string | undefined, what: string): string {
  return cluster === undefined ? `the ${what} of a peer without a ${REMOTE_CLUSTER_LABEL} label` : `${cluster}'s ${what}`;
}

/**
 * Where a pair's `side` (`source` or `target`) lies on what the leaf holds for others: its own pods (and, for a target,
 * its own external CIDR), its view of another cluster's pods, its view of any cluster's external CIDR. The leaf's view
 * of the pair's own peer is left out: it is the shortcut's space.
 */
function onOthersSpace(views: LeafViews, cidr: Cidr, peer: string, side: 'source' | 'target'): string | undefined {
  const own = views.ownPods.find((view) => overlaps(view.cidr, cidr));
  if (own !== undefined) {
    return `${side} ${cidr.text} overlaps the leaf's own pod CIDR ${own.cidr.text} (${own.configuration} spec.local.cidr.pod)`;
  }
  // A source may lie there: the leaf's external CIDR holds addresses it allocates for its peers, never reflected ones.
  const ownExternal = side === 'target' ? views.ownExternals.find((view) => overlaps(view.cidr, cidr)) : undefined;
  if (ownExternal !== undefined) {
    return `${side} ${cidr.text} overlaps the leaf's own external CIDR ${ownExternal.cidr.text} (${ownExternal.configuration} spec.local.cidr.external)`;
  }
  const pods = views.remotePods.find((view) => view.cluster !== peer && overlaps(view.cidr, cidr));
  if (pods !== undefined) {
    return `${side} ${cidr.text} overlaps ${pods.cidr.text}, where the leaf sees ${whose(pods.cluster, 'pods')} (${pods.configuration} status.remote.cidr.pod)`;
  }
  // The peer's own external CIDR included: the shortcut reaches its pods, not the addresses it allocates.
  const external = views.externals.find((view) => overlaps(view.cidr, cidr));
  if (external !== undefined) {
    return `${side} ${cidr.text} overlaps ${external.cidr.text}, where the leaf sees ${whose(external.cluster, 'external CIDR')} (${external.configuration} status.remote.cidr.external)`;
  }
  return undefined;
}

/**
 * Why a pair's source is unsafe on this leaf (`local-overlap`, docs/reference.md "Pairs"), or undefined. The leaf's view of the pair's
 * own peer is left out: it is the shortcut's space, where an identity pair's source lies by design.
 */
export function localOverlap(views: LeafViews, source: Cidr, peer: string): string | undefined {
  return onOthersSpace(views, source, peer, 'source');
}

/**
 * Why a pair's target is not where this leaf reaches its peer (`target-mismatch`, docs/reference.md "Pairs"), or
 * undefined. Every address of the peer is moved there, so a target that is the leaf's own pods or external CIDR, or
 * where it sees another cluster, would hand that traffic to someone else; and where the leaf's Configuration for the
 * peer is known, the target must lie in its view of the peer (`liqoctl network connect` sets it up there).
 */
export function targetMismatch(views: LeafViews, target: Cidr, peer: string): string | undefined {
  const elsewhere = onOthersSpace(views, target, peer, 'target');
  if (elsewhere !== undefined) return elsewhere;
  const peerViews = views.configurationsOf(peer);
  if (peerViews.length > 0 && !peerViews.some((view) => view.remotePod.some((cidr) => encloses(cidr, target)))) {
    const seen = peerViews.flatMap((view) => view.remotePod.map((cidr) => cidr.text));
    return `target ${target.text} is outside the leaf's view of ${peer} (${seen.join(', ') || 'none'}; ${peerViews.map((view) => view.ref).join(', ')} status.remote.cidr.pod)`;
  }
  return undefined;
}
