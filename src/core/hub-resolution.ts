// The stock-Liqo path: an address the hub's IPAM allocated (in the leaf's view of the hub's external CIDR) resolved,
// through the hub's own IP objects and Configurations, to the pod and its cluster, then moved into the leaf's direct
// network to that cluster. Four moves, each Liqo's RemapMask (host bits kept under the target's prefix length):
//   1. the leaf's view of the hub's external CIDR -> the hub's external CIDR     (leaf Configuration for the hub)
//   2. the allocated address -> the IP object of the pod, and its `spec.ip`      (hub IP, checked against targetRef)
//   3. the hub's view of the peer's pods -> the peer's own pod CIDR               (hub Configuration for the peer)
//   4. the peer's own pod CIDR -> the leaf's view of the peer's pods              (leaf Configuration for the peer)
// The last move is Liqo's own MapAddressWithConfiguration, so the output is the address the leaf's gateway routes
// through its direct tunnel to the peer. Pure: decisions only, read from an immutable snapshot.
import { moveInto, within, type Cidr } from './cidr.ts';
import type { HubIp, HubIpIndex } from './hub-ipam.ts';
import { ipv4, ipv6, type AddressCodec } from './ip.ts';
import { tunnelDown, type CidrMapping, type LiqoConfiguration, type TunnelDownReason, type TunnelStates } from './leaf-views.ts';

/** What the hub's IPAM objects say, or why they are not known (then `hub-external` stays the answer). */
export type HubIpam =
  | { readonly known: true; readonly ips: HubIpIndex; readonly configurations: readonly LiqoConfiguration[] }
  | { readonly known: false; readonly why: string };

export const HUB_NOT_READ: HubIpam = Object.freeze({ known: false, why: 'no hub source: give --hub files, or --shortcuts-kubeconfig to read the hub' });

/**
 * Why an address of the hub's external space stays as it is:
 * - `hub-external`: the hub's IPAM objects are not known, so nothing can say which pod the address is;
 * - `no-hub-ip`: no hub IP is allocated at that address (for that endpoint's pod);
 * - `no-peer`: the pod's hub address lies in no peer's pods as the hub sees them, or in this leaf's own;
 * - `no-shortcut`: this leaf has no direct network to the pod's cluster (no Configuration, no Connection, or its
 *   Configuration does not map the pod's address);
 * - `tunnel-down`: it has Connections to that cluster, but not all are Connected;
 * - `connection-stale`: they all read Connected, but one's gateway stopped rewriting it (its heartbeat is silent).
 */
export type StockReason = 'hub-external' | 'no-hub-ip' | 'no-peer' | 'no-shortcut' | 'tunnel-down' | 'connection-stale';

/** The detail's tag where the pod's own address is outside what the leaf declared for its cluster: no move applies. */
export const OUTSIDE_DECLARED = 'outside-declared';

export const STOCK_REASONS: readonly StockReason[] = ['hub-external', 'no-hub-ip', 'no-peer', 'no-shortcut', 'tunnel-down', 'connection-stale'];

/** The pod an endpoint names (`targetRef` of kind RemotePod: the hub pod's name and namespace). */
export interface PodRef {
  readonly name: string;
  /** Undefined where the targetRef names no namespace: the name alone must then match. */
  readonly namespace: string | undefined;
}

/** Whether the hub IP is the one of the pod an endpoint's targetRef names. */
export function namesPod(pod: PodRef, ip: HubIp): boolean {
  return ip.podName === pod.name && (pod.namespace === undefined || ip.podNamespace === pod.namespace);
}

/** What `explain` shows of a resolution: the hub IP, the peer and the leaf Configuration used. */
export interface Resolved<V> {
  readonly resolved: true;
  readonly value: V;
  readonly ip: HubIp;
  readonly peer: string;
  readonly configuration: string;
}

export interface Unresolved {
  readonly resolved: false;
  readonly reason: StockReason;
  readonly detail: string;
  /** The pod's cluster, where the hub's IPAM named it (`no-shortcut`, `tunnel-down`): whose traffic stays on the hub path. */
  readonly peer?: string;
}

export type Resolution<V> = Resolved<V> | Unresolved;

/** Resolves addresses of one family reflected by one hub, for one leaf. */
export interface FamilyResolver<V extends number | bigint> {
  /** False when the leaf sees no external CIDR of this hub in this family: every address takes the FCC path. */
  readonly active: boolean;
  /** Undefined when `value` is not in the leaf's view of the hub's external CIDR (the FCC path's address). */
  resolve(value: V, pod: PodRef | undefined, leafCluster: string): Resolution<V> | undefined;
}

export interface HubResolver {
  readonly ipv4: FamilyResolver<number>;
  readonly ipv6: FamilyResolver<bigint>;
}

/** The leaf's own Liqo objects the resolution reads. */
export interface LeafNetwork {
  /** The leaf's Configurations, by the peer they are for. */
  readonly configurationsOf: (cluster: string) => readonly LiqoConfiguration[];
  readonly tunnels: TunnelStates;
}

export type Span<V> = { readonly network: V; readonly last: V; readonly prefixLength: number };
type Move<V> = { readonly from: Span<V>; readonly to: Span<V>; readonly configuration: string; readonly cluster: string };

/** How one family's values are read out of the family-tagged unions, without casts. */
export interface FamilyAccess<V extends number | bigint> {
  readonly codec: AddressCodec<V>;
  span(cidr: Cidr): Span<V> | undefined;
  podAddress(ip: HubIp): V | undefined;
  allocatedAddress(ip: HubIp): V | undefined;
  /** The hub's IPs of this family by `spec.ip`. */
  byPod(index: HubIpIndex): ReadonlyMap<V, readonly HubIp[]>;
}

export const IPV4_ACCESS: FamilyAccess<number> = {
  codec: ipv4,
  span: (cidr) => (cidr.family === 'IPv4' ? cidr : undefined),
  podAddress: (ip) => (ip.family === 'IPv4' ? ip.pod : undefined),
  allocatedAddress: (ip) => (ip.family === 'IPv4' ? ip.allocated : undefined),
  byPod: (index) => index.byPod.ipv4,
};

export const IPV6_ACCESS: FamilyAccess<bigint> = {
  codec: ipv6,
  span: (cidr) => (cidr.family === 'IPv6' ? cidr : undefined),
  podAddress: (ip) => (ip.family === 'IPv6' ? ip.pod : undefined),
  allocatedAddress: (ip) => (ip.family === 'IPv6' ? ip.allocated : undefined),
  byPod: (index) => index.byPod.ipv6,
};

/** `declared -> seen` (or the reverse) of each position, in this family, with where it was read. */
function moves<V extends number | bigint>(
  access: FamilyAccess<V>, configurations: readonly LiqoConfiguration[], pick: (c: LiqoConfiguration) => readonly CidrMapping[], direction: 'to-seen' | 'to-declared',
): Move<V>[] {
  const result: Move<V>[] = [];
  for (const configuration of configurations) {
    for (const mapping of pick(configuration)) {
      const declared = access.span(mapping.declared);
      const seen = access.span(mapping.seen);
      if (declared === undefined || seen === undefined) continue;
      result.push({
        from: direction === 'to-seen' ? declared : seen,
        to: direction === 'to-seen' ? seen : declared,
        configuration: configuration.ref,
        cluster: configuration.remoteCluster ?? '',
      });
    }
  }
  return result;
}

function moveHolding<V extends number | bigint>(list: readonly Move<V>[], value: V): Move<V> | undefined {
  for (const move of list) if (within(move.from, value)) return move;
  return undefined;
}

/**
 * Moves by source block, for a lookup that does not grow with the number of peers (a hub with 50 peers has 50 pod
 * blocks): one table per prefix length in use, longest first, probed with the address masked to that length. The
 * first move listed for a block wins, as in a scan. Whatever the number of peers, one rule: Liqo never nests them.
 */
function moveIndex<V extends number | bigint>(codec: AddressCodec<V>, list: readonly Move<V>[]): (value: V) => Move<V> | undefined {
  const byLength = new Map<number, Map<V, Move<V>>>();
  for (const move of list) {
    let table = byLength.get(move.from.prefixLength);
    if (table === undefined) byLength.set(move.from.prefixLength, table = new Map());
    if (!table.has(move.from.network)) table.set(move.from.network, move);
  }
  const levels = [...byLength].sort(([a], [b]) => b - a);
  return (value) => {
    for (const [prefixLength, table] of levels) {
      const move = table.get(codec.networkOf(value, prefixLength));
      if (move !== undefined) return move;
    }
    return undefined;
  };
}

const NO_IPS: readonly HubIp[] = Object.freeze([]);

const INACTIVE: FamilyResolver<never> = Object.freeze({ active: false, resolve: () => undefined });

/** What steps 2 to 4 decide for each hub IP at one address, kept per snapshot by the address as the leaf sees it. */
interface Decision<V extends number | bigint> {
  readonly ip: HubIp;
  readonly resolution: Resolution<V>;
}

interface Seen<V extends number | bigint> {
  readonly leafCluster: string;
  readonly allocated: V;
  readonly decisions: readonly Decision<V>[];
}

function familyResolver<V extends number | bigint>(options: {
  readonly access: FamilyAccess<V>;
  readonly hubId: string;
  readonly hub: HubIpam;
  readonly leaf: LeafNetwork;
  readonly ips: ReadonlyMap<V, readonly HubIp[]> | undefined;
}): FamilyResolver<V> {
  const { access, hubId, hub, leaf, ips } = options;
  const { codec } = access;
  // Step 1's domain: the leaf's view of the hub's external CIDR (`status.remote.cidr.external`), even at a position
  // whose `spec` side is missing: such an address is the hub's allocation, whatever else is unknown about it.
  const leafToHub = leaf.configurationsOf(hubId);
  const domain = leafToHub.flatMap((c) => c.remoteExternal.flatMap((cidr) => access.span(cidr) ?? []));
  if (domain.length === 0) return INACTIVE;
  const toHub = moves(access, leafToHub, (c) => c.externalMappings, 'to-declared');
  const text = (value: V) => codec.format(value);
  const inDomain = (value: V) => domain.some((span) => within(span, value));
  if (!hub.known) {
    return {
      active: true,
      resolve: (value) => !inDomain(value) ? undefined
        : { resolved: false, reason: 'hub-external', detail: `allocated by ${hubId}'s IPAM, whose IP objects are not known (${hub.why})` },
    };
  }
  // Step 3: the hub's view of each peer's pods -> the peer's own pod CIDR.
  const hubToPeer = moveIndex(codec, moves(access, hub.configurations, (c) => c.podMappings, 'to-declared').filter((move) => move.cluster !== ''));
  // Step 4, per peer: whether the leaf has a direct network to it, and its moves from the peer's own pod CIDR to the
  // leaf's view of it. Made on first use, once per snapshot: peers come from the hub's Configurations, a bounded set.
  const direct = new Map<string, { readonly network: DirectNetwork; readonly moves: readonly Move<V>[] }>();
  const directTo = (peer: string) => {
    let entry = direct.get(peer);
    if (entry === undefined) {
      entry = { network: directNetworkTo(peer, leaf), moves: moves(access, leaf.configurationsOf(peer), (c) => c.podMappings, 'to-seen') };
      direct.set(peer, entry);
    }
    return entry;
  };
  /** By the address as the leaf sees it: bounded by the leaf's view of the hub's external CIDR. */
  const decided = new Map<V, Seen<V>>();
  return {
    active: true,
    resolve(value, pod, leafCluster) {
      // Steps 2 to 4 depend on the address alone (and the slice's cluster): decided once per snapshot for each
      // address seen, so a review of pods seen before costs one lookup in a table of the addresses reviews use, not
      // the moves and a lookup in the hub's whole index.
      let seen = decided.get(value);
      if (seen === undefined || seen.leafCluster !== leafCluster) {
        const step1 = moveHolding(toHub, value);
        if (step1 === undefined) {
          return !inDomain(value) ? undefined : { resolved: false, reason: 'hub-external',
            detail: `in ${hubId}'s external CIDR as this leaf sees it, at a position of its Configuration without spec.remote.cidr.external` };
        }
        const allocated = moveInto(codec, value, step1.to);
        const candidates = ips?.get(allocated) ?? NO_IPS;
        seen = { leafCluster, allocated, decisions: candidates.map((ip) => ({ ip, resolution: fromIp(ip, leafCluster) })) };
        decided.set(value, seen);
      }
      // The one decision whose IP the endpoint's pod names (any, without a targetRef); none when zero or several do.
      let found: Decision<V> | undefined;
      let matches = 0;
      for (const decision of seen.decisions) {
        if (pod !== undefined && !namesPod(pod, decision.ip)) continue;
        found = decision;
        matches++;
      }
      if (matches === 1 && found !== undefined) return found.resolution;
      return { resolved: false, reason: 'no-hub-ip', detail: noHubIp(seen, pod, matches) };
    },
  };

  /** Why no IP was taken at `seen`'s address: none there, or several the endpoint does not tell apart, or another pod's. */
  function noHubIp(seen: Seen<V>, pod: PodRef | undefined, matches: number): string {
    const at = text(seen.allocated);
    if (seen.decisions.length === 0) return `no IP of ${hubId} is allocated at ${at}`;
    const held = seen.decisions.map((d) => d.ip.ref).join(', ');
    // Without a pod to tell them apart, two IPs at one address (a reallocation half done) could be either pod.
    if (pod === undefined) return `${hubId} has ${seen.decisions.length} IPs at ${at} (${held}) and the endpoint names no pod to choose between them`;
    const named = pod.namespace === undefined ? pod.name : `${pod.namespace}/${pod.name}`;
    if (matches === 0) return `${hubId}'s IP at ${at} is ${held}, not the endpoint's pod ${named}`;
    const same = seen.decisions.filter(({ ip }) => namesPod(pod, ip)).map((d) => d.ip.ref).join(', ');
    return `${hubId} has ${matches} IPs at ${at} for a pod named ${named} (${same}) and the endpoint names no namespace to choose between them`;
  }

  function fromIp(ip: HubIp, leafCluster: string): Resolution<V> {
    // Always defined: an IP is indexed under its allocated address's family, which its pod address shares.
    const podOnHub = access.podAddress(ip);
    if (podOnHub === undefined) return { resolved: false, reason: 'no-hub-ip', detail: `${ip.ref} holds addresses of two families` };
    const step3 = hubToPeer(podOnHub);
    if (step3 === undefined) {
      return { resolved: false, reason: 'no-peer', detail: `${ip.ref} (${text(podOnHub)}) is in no peer's pod CIDR as ${hubId} sees them` };
    }
    const peer = step3.cluster;
    if (peer === leafCluster) {
      return { resolved: false, reason: 'no-peer', detail: `${ip.ref} is a pod of ${leafCluster} itself (${step3.configuration} on ${hubId})` };
    }
    const own = moveInto(codec, podOnHub, step3.to);
    const { network, moves: toLeaf } = directTo(peer);
    if (network.state !== 'direct') return { resolved: false, reason: network.state, detail: `${ip.ref} runs on ${peer}; ${network.detail}`, peer };
    const step4 = moveHolding(toLeaf, own);
    if (step4 === undefined) {
      // A position whose status side is missing maps nothing either (Liqo's own mapping would fail there too).
      return { resolved: false, reason: 'no-shortcut', detail: `${OUTSIDE_DECLARED}: ${ip.ref} runs on ${peer} at ${text(own)}, in no spec.remote.cidr.pod (with a status entry) of this leaf's Configuration for ${peer}`, peer };
    }
    return { resolved: true, value: moveInto(codec, own, step4.to), ip, peer, configuration: step4.configuration };
  }
}

/** The resolver for slices reflected by `hubId` (their `offloading.liqo.io/origin`). */
export function hubResolver(hubId: string, hub: HubIpam, leaf: LeafNetwork): HubResolver {
  return {
    ipv4: familyResolver({ access: IPV4_ACCESS, hubId, hub, leaf, ips: hub.known ? hub.ips.ipv4 : undefined }),
    ipv6: familyResolver({ access: IPV6_ACCESS, hubId, hub, leaf, ips: hub.known ? hub.ips.ipv6 : undefined }),
  };
}

export const NO_HUB_RESOLVER: HubResolver = Object.freeze({ ipv4: INACTIVE, ipv6: INACTIVE });

/** Whether the leaf can reach a peer of the hub directly (step 4), with why not: logged once per change, shown by /debug/pairs. */
export interface DirectNetwork {
  readonly peer: string;
  readonly state: 'direct' | 'no-shortcut' | TunnelDownReason;
  readonly detail: string;
}

/** Step 4's condition: a Configuration for the peer and at least one Connection to it, all of them Connected. */
export function directNetworkTo(peer: string, leaf: LeafNetwork): DirectNetwork {
  // Connections that exist but are not all Connected say more than a missing Configuration: the tunnel is down.
  const tunnel = leaf.tunnels.get(peer);
  const down = tunnelDown(peer, tunnel);
  if (down !== undefined) return { peer, state: down.reason, detail: down.detail };
  const configurations = leaf.configurationsOf(peer);
  if (configurations.length === 0) return { peer, state: 'no-shortcut', detail: `this leaf has no Liqo Configuration for ${peer}` };
  if (tunnel === undefined) return { peer, state: 'no-shortcut', detail: `this leaf has no Liqo Connection to ${peer}` };
  return { peer, state: 'direct', detail: `through ${configurations.map((c) => c.ref).join(', ')}` };
}

/** One entry per peer the hub's Configurations name (the clusters whose pods it reflects), in ID order. */
export function directNetworks(hub: HubIpam, leaf: LeafNetwork): DirectNetwork[] {
  if (!hub.known) return [];
  const peers = [...new Set(hub.configurations.flatMap((c) => (c.remoteCluster === undefined ? [] : [c.remoteCluster])))].sort();
  return peers.map((peer) => directNetworkTo(peer, leaf));
}
