// Liqo's own direct connections, repaired (docs/reference.md, "Liqo's own direct connections"): the pure repair of
// one ShadowEndpointSlice as the hub's virtual kubelet writes it, so that the leaf's ShadowEndpointSlice controller
// (Liqo v1.2.0, shadowendpointslice-controller/mapping.go) then writes an EndpointSlice that works. That controller
// looks each endpoint address up by its text in the data annotation; a listed address is mapped with the leaf's
// Configuration for its cluster (ForceMapAddressWithConfiguration: it must lie in that Configuration's declared pod
// CIDR, else the whole reconcile fails), every other one with the leaf's Configuration for the hub. So per listed
// address `x` of cluster B:
//   direct      the leaf has a direct network to B and `x` is in B's declared pod CIDR: Liqo maps it already;
//   repaired    the hub remapped B: `x` moved back into B's own pod CIDR (the hub's Configuration for B, seen ->
//               declared), which Liqo then maps into the leaf's view of B;
//   hub-path    no usable direct network: `x` replaced by the address the hub's IPAM allocated to the pod (its IP's
//               `status.ip`) and unlisted, so Liqo maps it through the hub's external CIDR, as without the annotation;
//   unresolved  left as it is, with the reason.
// Every move is Liqo's RemapMask (cidr.ts moveInto). Pure: the snapshot is read, inputs are never mutated.
import { encloses, moveInto, within } from './cidr.ts';
import type { HubIp } from './hub-ipam.ts';
import {
  directNetworkTo, IPV4_ACCESS, IPV6_ACCESS, namesPod, type FamilyAccess, type HubIpam, type PodRef, type Span,
} from './hub-resolution.ts';
import { HUB_NOT_READ_REASON, readerName, type HubPart } from './hubs.ts';
import type { AddressCodec } from './ip.ts';
import { field, isArray, isObject, objectAt, parseJsonObject, stringField, type Json, type JsonObject } from './json.ts';
import type { LiqoConfiguration, TunnelDownReason } from './leaf-views.ts';
import { ANNOTATIONS_LIMIT_BYTES, podOf, utf8Length } from './rewrite.ts';
import {
  DIRECT_CONNECTIONS_DATA_ANNOTATION, isShadowSkip, ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION, readDirectConnectionsData,
  readReflectedShadow, SHADOW_ORIGINAL_ADDRESSES_ANNOTATION, writeDirectConnectionsData, type ReflectedShadow,
  type ShadowSkipReason,
} from './shadow-endpoint-slice.ts';
import type { Snapshot } from './snapshot.ts';
import {
  shadowRecordSpaces, SPACES_ONLY, storedHolds, storedRecord, type IgnoredBecause, type IgnoredEntry, type RecordCheck,
  type ShadowRecordSpaces,
} from './trust.ts';

export type ShadowOutcome = 'direct' | 'repaired' | 'hub-path' | 'unresolved';
export const SHADOW_OUTCOMES: readonly ShadowOutcome[] = ['direct', 'repaired', 'hub-path', 'unresolved'];

/**
 * Why a listed address stays as the hub wrote it:
 * - `hub-unknown`: the hub's IPAM objects (its IPs and Configurations) are not known;
 * - `not-in-hub-view`: the address is in no `status.remote.cidr.pod` of the hub's Configuration for its cluster;
 * - `outside-declared`: moved back into the cluster's own pod CIDR, it is outside what the leaf's Configuration for
 *   that cluster declares (`spec.remote.cidr.pod`), so Liqo still could not map it;
 * - `no-hub-ip`: the hub path needs the pod's hub IP, and none (or more than one) is at that address for that pod;
 * - `no-hub-network`: the hub path needs the leaf's one Configuration for the hub, mapping the hub's external CIDR;
 * - `too-large`: the repaired shadow's annotations would reach Liqo's 256 KiB bound;
 * - `ambiguous`: the address is listed under two clusters, or its repair would give the text of another address of
 *   the shadow (Liqo looks addresses up by text: another pod would be mapped with this cluster's Configuration);
 * - `not-canonical`: not an address of the shadow's family in canonical form (`010.0.0.1`, an IPv6 in an IPv4 shadow).
 */
export type UnresolvedReason =
  | 'hub-unknown' | 'not-in-hub-view' | 'outside-declared' | 'no-hub-ip' | 'no-hub-network' | 'too-large' | 'ambiguous'
  | 'not-canonical';

export const UNRESOLVED_REASONS: readonly UnresolvedReason[] = [
  'hub-unknown', 'not-in-hub-view', 'outside-declared', 'no-hub-ip', 'no-hub-network', 'too-large', 'ambiguous', 'not-canonical',
];

/** Why an address takes the hub path: no direct network to its cluster, a tunnel down, or a repair that would be ambiguous. */
export type HubPathReason = 'no-shortcut' | TunnelDownReason | 'ambiguous';

/** One listed address: as the hub wrote it (`input`), what the shadow now carries (`output`), and why. */
export type ShadowAddress = { readonly cluster: string; readonly input: string; readonly output: string; readonly detail: string } & (
  | { readonly outcome: 'direct' }
  | { readonly outcome: 'repaired' }
  | { readonly outcome: 'hub-path'; readonly via: HubPathReason; readonly hubIp: string }
  | { readonly outcome: 'unresolved'; readonly reason: UnresolvedReason }
);

/** One endpoint address whose text changes, by position: never added, dropped or reordered. */
export interface ShadowEdit {
  readonly endpoint: number;
  readonly address: number;
  readonly from: string;
  readonly to: string;
}

export type ShadowAnnotationKey =
  | typeof DIRECT_CONNECTIONS_DATA_ANNOTATION | typeof SHADOW_ORIGINAL_ADDRESSES_ANNOTATION | typeof ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION;

/** An annotation's new text, or undefined to remove it; only keys whose value changes are listed. */
export interface ShadowAnnotationEdit {
  readonly key: ShadowAnnotationKey;
  readonly value: string | undefined;
}

/** Whether the (restored) data annotation could be read as Liqo reads it. */
export type DataState =
  | { readonly state: 'absent' }
  | { readonly state: 'invalid'; readonly detail: string }
  | { readonly state: 'read' };

export type ShadowRepair =
  | { readonly kind: 'skip'; readonly reason: ShadowSkipReason; readonly detail: string }
  | {
    readonly kind: 'unchanged'; readonly shadow: ReflectedShadow; readonly data: DataState; readonly addresses: readonly ShadowAddress[];
    /** Record entries not used (trust.ts): what `records_ignored_total{resource="shadowendpointslices"}` counts. */
    readonly ignored: readonly IgnoredEntry[];
  }
  | {
    readonly kind: 'changed';
    readonly shadow: ReflectedShadow;
    readonly data: DataState;
    readonly addresses: readonly ShadowAddress[];
    readonly ignored: readonly IgnoredEntry[];
    /** The received object with the edits made: copied only along the changed paths. */
    readonly object: JsonObject;
    readonly edits: readonly ShadowEdit[];
    readonly annotations: readonly ShadowAnnotationEdit[];
  };

const OUR_KEYS: readonly ShadowAnnotationKey[] = [
  DIRECT_CONNECTIONS_DATA_ANNOTATION, SHADOW_ORIGINAL_ADDRESSES_ANNOTATION, ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION,
];
const OUR_KEY_SET: ReadonlySet<string> = new Set(OUR_KEYS);

interface Move<V> {
  readonly from: Span<V>;
  readonly to: Span<V>;
  readonly fromText: string;
  readonly configuration: string;
}

/** `declared -> seen` (or the reverse) of each pod position of these Configurations, in this family, in order. */
function podMoves<V extends number | bigint>(
  access: FamilyAccess<V>, configurations: readonly LiqoConfiguration[], direction: 'to-seen' | 'to-declared', key: 'podMappings' | 'externalMappings' = 'podMappings',
): Move<V>[] {
  const result: Move<V>[] = [];
  for (const configuration of configurations) {
    for (const mapping of configuration[key]) {
      const declared = access.span(mapping.declared);
      const seen = access.span(mapping.seen);
      if (declared === undefined || seen === undefined) continue;
      const [from, to, text] = direction === 'to-seen' ? [declared, seen, mapping.declared.text] : [seen, declared, mapping.seen.text];
      result.push({ from, to, fromText: text, configuration: configuration.ref });
    }
  }
  return result;
}

function holding<V extends number | bigint>(moves: readonly Move<V>[], value: V): Move<V> | undefined {
  for (const move of moves) if (within(move.from, value)) return move;
  return undefined;
}

/** What a listed address would become, before the checks that look at the whole shadow. */
type Decision<V> =
  | { readonly outcome: 'direct'; readonly detail: string }
  | { readonly outcome: 'repaired'; readonly value: V; readonly text: string; readonly detail: string }
  | { readonly outcome: 'hub-path'; readonly value: V; readonly text: string; readonly via: HubPathReason; readonly hubIp: string; readonly detail: string }
  | { readonly outcome: 'unresolved'; readonly reason: UnresolvedReason; readonly detail: string };

/** Whether the leaf can use its direct network to a cluster, as Liqo's controller would find its Configuration. */
interface Direct<V> {
  readonly usable: boolean;
  readonly why: 'no-shortcut' | TunnelDownReason;
  readonly detail: string;
  readonly leafMoves: readonly Move<V>[];
}

/** The view the decisions of one shadow read, with per-cluster parts made on first use. */
interface FamilyView<V extends number | bigint> {
  readonly access: FamilyAccess<V>;
  readonly snapshot: Snapshot;
  readonly hub: string;
  /** The IPAM objects of the shadow's own hub, never another hub's. */
  readonly ipam: HubIpam;
  /** Decisions that do not depend on the endpoints' pods, by cluster and address (only clusters with a usable direct network). */
  readonly decided: Map<string, Map<string, Decision<V>>>;
  directTo(cluster: string): Direct<V>;
  hubMovesFor(cluster: string): readonly Move<V>[];
}

/**
 * Views by snapshot and hub, one cache per family: a snapshot is immutable, so what is made of it per cluster holds
 * for every review that reads it. Kept beside the snapshot, not in it, and dropped with it.
 */
type ViewCache<V extends number | bigint> = WeakMap<Snapshot, Map<string, FamilyView<V>>>;
const IPV4_VIEWS: ViewCache<number> = new WeakMap();
const IPV6_VIEWS: ViewCache<bigint> = new WeakMap();
/** Hubs are named by origin labels: a stranger's label costs one small view per snapshot, and no more than this many. */
const MAX_HUBS_CACHED = 64;
const MAX_DECISIONS_CACHED = 100_000;

function viewFor<V extends number | bigint>(cache: ViewCache<V>, access: FamilyAccess<V>, snapshot: Snapshot, hub: string, ipam: HubIpam): FamilyView<V> {
  let byHub = cache.get(snapshot);
  if (byHub === undefined) cache.set(snapshot, byHub = new Map());
  let view = byHub.get(hub);
  if (view === undefined) {
    view = familyView(access, snapshot, hub, ipam);
    if (byHub.size < MAX_HUBS_CACHED) byHub.set(hub, view);
  }
  return view;
}

function familyView<V extends number | bigint>(access: FamilyAccess<V>, snapshot: Snapshot, hub: string, ipam: HubIpam): FamilyView<V> {
  const leaf = { configurationsOf: snapshot.views.configurationsOf, tunnels: snapshot.tunnels };
  const direct = new Map<string, Direct<V>>();
  const hubMoves = new Map<string, readonly Move<V>[]>();
  const hubByCluster = new Map<string, LiqoConfiguration[]>();
  if (ipam.known) {
    for (const configuration of ipam.configurations) {
      if (configuration.remoteCluster === undefined) continue;
      const list = hubByCluster.get(configuration.remoteCluster);
      if (list === undefined) hubByCluster.set(configuration.remoteCluster, [configuration]); else list.push(configuration);
    }
  }
  return {
    access, snapshot, hub, ipam, decided: new Map(),
    directTo(cluster) {
      let entry = direct.get(cluster);
      if (entry === undefined) {
        const network = directNetworkTo(cluster, leaf);
        const configurations = leaf.configurationsOf(cluster);
        const leafMoves = podMoves(access, configurations, 'to-seen');
        // Liqo's controller finds the Configuration with GetConfigurationByClusterID, which fails on more than one.
        entry = network.state !== 'direct'
          ? { usable: false, why: network.state, detail: network.detail, leafMoves }
          : configurations.length > 1
            ? { usable: false, why: 'no-shortcut', detail: `this leaf has ${configurations.length} Liqo Configurations for ${cluster}; Liqo's controller needs exactly one`, leafMoves }
            : { usable: true, why: 'no-shortcut', detail: network.detail, leafMoves };
        direct.set(cluster, entry);
      }
      return entry;
    },
    hubMovesFor(cluster) {
      let moves = hubMoves.get(cluster);
      if (moves === undefined) {
        moves = podMoves(access, hubByCluster.get(cluster) ?? [], 'to-declared');
        hubMoves.set(cluster, moves);
      }
      return moves;
    },
  };
}

/** The hub path for `x` (step 3): its pod's hub IP by `spec.ip`, checked against every endpoint's pod that carries it. */
function hubPath<V extends number | bigint>(view: FamilyView<V>, value: V, pods: readonly (PodRef | undefined)[], via: HubPathReason, why: string): Decision<V> {
  const { access, snapshot, hub, ipam } = view;
  const { codec } = access;
  const toHub = snapshot.views.configurationsOf(hub);
  if (toHub.length !== 1) {
    return {
      outcome: 'unresolved', reason: 'no-hub-network',
      detail: `${why}; the hub path needs this leaf's one Liqo Configuration for the hub ${hub}, and it has ${toHub.length}`,
    };
  }
  if (!ipam.known) return { outcome: 'unresolved', reason: 'hub-unknown', detail: `${why}; the hub's IPAM objects are not known (${ipam.why})` };
  const candidates = access.byPod(ipam.ips).get(value) ?? [];
  let chosen: HubIp | undefined;
  const owners = pods.length === 0 ? [undefined] : pods;
  for (const pod of owners) {
    const matching = pod === undefined ? candidates : candidates.filter((ip) => namesPod(pod, ip));
    const only = matching.length === 1 ? matching[0] : undefined;
    if (only === undefined || (chosen !== undefined && chosen !== only)) {
      const whose = pod === undefined ? '' : ` for the pod ${pod.namespace === undefined ? '' : `${pod.namespace}/`}${pod.name}`;
      return {
        outcome: 'unresolved', reason: 'no-hub-ip',
        detail: `${why}; ${matching.length === 0 ? 'no' : matching.length > 1 ? `${matching.length}` : 'another'} hub IP at spec.ip ${codec.format(value)}${whose}`,
      };
    }
    chosen = only;
  }
  const allocated = chosen === undefined ? undefined : access.allocatedAddress(chosen);
  if (chosen === undefined || allocated === undefined) return { outcome: 'unresolved', reason: 'no-hub-ip', detail: `${why}; no hub IP at ${codec.format(value)}` };
  // Liqo maps an unlisted address with the leaf's Configuration for the hub; outside its external CIDR it would copy
  // the hub's address unmapped, a silent misroute.
  const external = holding(podMoves(access, toHub, 'to-seen', 'externalMappings'), allocated);
  if (external === undefined) {
    return {
      outcome: 'unresolved', reason: 'no-hub-network',
      detail: `${why}; the hub allocated ${codec.format(allocated)} (${chosen.ref}), outside the hub's external CIDR as ${toHub[0]?.ref ?? hub} declares it`,
    };
  }
  const text = codec.format(allocated);
  return { outcome: 'hub-path', value: allocated, text, via, hubIp: chosen.ref, detail: `${why}; through the hub: ${chosen.ref} allocated ${text}` };
}

/** Steps 1 to 4 for one listed address of one cluster. */
function decide<V extends number | bigint>(view: FamilyView<V>, cluster: string, input: string, value: V, pods: readonly (PodRef | undefined)[]): Decision<V> {
  const direct = view.directTo(cluster);
  // The hub path depends on the endpoints' pods; the rest on the address and the view alone, so it is decided once
  // per snapshot and address, as the stock path's resolutions are.
  if (!direct.usable) return hubPath(view, value, pods, direct.why, direct.detail);
  let byAddress = view.decided.get(cluster);
  if (byAddress === undefined) view.decided.set(cluster, byAddress = new Map());
  let decision = byAddress.get(input);
  if (decision === undefined) {
    decision = decideDirect(view, direct, cluster, value);
    // Listed addresses come from writers: past this many a cluster's decisions are forgotten and made again.
    if (byAddress.size >= MAX_DECISIONS_CACHED) byAddress.clear();
    byAddress.set(input, decision);
  }
  return decision;
}

function decideDirect<V extends number | bigint>(view: FamilyView<V>, direct: Direct<V>, cluster: string, value: V): Decision<V> {
  const { access, ipam } = view;
  const mapped = holding(direct.leafMoves, value);
  if (mapped !== undefined) return { outcome: 'direct', detail: `in ${mapped.fromText} (${mapped.configuration} spec.remote.cidr.pod): Liqo maps it` };
  if (!ipam.known) return { outcome: 'unresolved', reason: 'hub-unknown', detail: `the hub's Configurations are not known (${ipam.why})` };
  const back = holding(view.hubMovesFor(cluster), value);
  if (back === undefined) {
    return { outcome: 'unresolved', reason: 'not-in-hub-view', detail: `in no status.remote.cidr.pod of the hub's Configuration for ${cluster}` };
  }
  const own = moveInto(access.codec, value, back.to);
  const declared = holding(direct.leafMoves, own);
  if (declared === undefined) {
    return {
      outcome: 'unresolved', reason: 'outside-declared',
      detail: `${cluster}'s own address ${access.codec.format(own)} (from ${back.fromText}, ${back.configuration}) is outside this leaf's Configuration for ${cluster}'s spec.remote.cidr.pod`,
    };
  }
  const text = access.codec.format(own);
  return { outcome: 'repaired', value: own, text, detail: `the hub sees ${cluster} at ${back.fromText} (${back.configuration}); ${text} is in ${declared.fromText} (${declared.configuration})` };
}

/** How one shadow's records are checked (trust.ts): the spaces, and at admission the record as stored. */
interface RecordTrust<V extends number | bigint> {
  readonly spaces: ShadowRecordSpaces<V>;
  readonly records: RecordCheck;
}

/**
 * `{"<out>":"<in>"}` entries that are safe to undo: `in` an address of the shadow's family listed, in the restored
 * data, under one cluster other than the leaf and the hub; `out` where the repair writes for that cluster; and, at
 * admission, the entry already stored. Others are ignored, entry by entry (an `in` listed nowhere was never ours).
 */
function readOriginals<V extends number | bigint>(
  text: Json | undefined, listedUnder: ReadonlyMap<string, string | undefined>, codec: AddressCodec<V>, trust: RecordTrust<V>, ignored: IgnoredEntry[],
): ReadonlyMap<string, string> {
  const originals = new Map<string, string>();
  const parsed = parseJsonObject(text);
  if (parsed === undefined) return originals;
  const stored = trust.records.against === 'stored' ? storedRecord(trust.records.stored, SHADOW_ORIGINAL_ADDRESSES_ANNOTATION) : undefined;
  for (const out of Object.keys(parsed)) {
    const input = parsed[out];
    if (typeof input !== 'string') continue;
    const cluster = listedUnder.get(input);
    const outValue = codec.parseCanonical(out);
    const because: IgnoredBecause | undefined = cluster === undefined || codec.parseCanonical(input) === undefined ? 'not-listed'
      : outValue === undefined || !trust.spaces.written(cluster, outValue) ? 'out-not-ours'
        : stored !== undefined && !storedHolds(stored, out, input) ? 'not-stored' : undefined;
    if (because === undefined) originals.set(out, input); else ignored.push({ out, base: input, because });
  }
  return originals;
}

/**
 * The data as the hub wrote it: the record, where the product could have written it, else the annotation itself. The
 * hub's virtual kubelet lists pods on virtual nodes of other clusters, never of the leaf or the hub: a record that
 * lists those is no copy of its data, and restoring it would make them stick.
 */
function hubDataOf(
  received: JsonObject | undefined, shadow: ReflectedShadow, records: RecordCheck, ignored: IgnoredEntry[],
): Json | undefined {
  const live = received === undefined ? undefined : field(received, DIRECT_CONNECTIONS_DATA_ANNOTATION);
  const recorded = received === undefined ? undefined : stringField(received, ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION);
  if (recorded === undefined) return live;
  const read = readDirectConnectionsData(recorded);
  const listsOwn = read.state === 'read' && [shadow.clusterId, shadow.hub].some((cluster) => (read.data.clusters.get(cluster)?.length ?? 0) > 0);
  const because: IgnoredBecause | undefined = listsOwn ? 'lists-leaf-or-hub'
    : records.against === 'stored' && stringField(objectAt(isObject(records.stored) ? records.stored : {}, 'metadata', 'annotations') ?? {},
      ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION) !== recorded ? 'not-stored' : undefined;
  if (because === undefined) return recorded;
  ignored.push({ out: ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION, base: recorded.length > 80 ? `${recorded.slice(0, 80)}...` : recorded, because });
  return live;
}

function addressesOf(endpoint: Json | undefined): readonly Json[] | undefined {
  if (!isObject(endpoint)) return undefined;
  const addresses = field(endpoint, 'addresses');
  return isArray(addresses) ? addresses : undefined;
}


function repairFamily<V extends number | bigint>(shadow: ReflectedShadow, view: FamilyView<V>, trust: RecordTrust<V>): ShadowRepair {
  const { access } = view;
  const { codec } = access;
  const received = shadow.annotations;
  const ignored: IgnoredEntry[] = [];
  // Step 5 first: the data annotation as the hub wrote it, then the addresses it listed.
  const hubData = hubDataOf(received, shadow, trust.records, ignored);
  const read = readDirectConnectionsData(hubData);
  const clusters = read.state === 'read' ? read.data.clusters : NO_CLUSTERS;
  /** Each listed address (distinct), with how many clusters list it. */
  const listings = new Map<string, number>();
  for (const list of clusters.values()) {
    for (let i = 0; i < list.length; i++) {
      const address = list[i] ?? '';
      if (list.indexOf(address) === i) listings.set(address, (listings.get(address) ?? 0) + 1);
    }
  }
  /** Each listed address with its one cluster, undefined where that is the leaf, the hub, or more than one. */
  const listedUnder = new Map<string, string | undefined>();
  for (const [cluster, list] of clusters) {
    const own = cluster === shadow.clusterId || cluster === shadow.hub;
    for (const address of list) {
      const other = listedUnder.has(address) && listedUnder.get(address) !== cluster;
      listedUnder.set(address, own || other ? undefined : cluster);
    }
  }
  const originals = readOriginals(received === undefined ? undefined : field(received, SHADOW_ORIGINAL_ADDRESSES_ANNOTATION), listedUnder, codec, trust, ignored);

  // The restored endpoint addresses, where each listed one is carried and by which pods (targetRef).
  const { endpoints } = shadow;
  const restored: (readonly Json[] | undefined)[] = new Array(endpoints.length);
  const podsAt = new Map<string, (PodRef | undefined)[]>();
  for (let e = 0; e < endpoints.length; e++) {
    const endpoint = endpoints[e];
    if (!isObject(endpoint)) continue;
    const addresses = Object.hasOwn(endpoint, 'addresses') ? endpoint.addresses : undefined;
    if (!isArray(addresses)) continue;
    let list = addresses;
    if (originals.size > 0) list = addresses.map((address) => (typeof address === 'string' ? originals.get(address) ?? address : address));
    restored[e] = list;
    let pod: PodRef | undefined | null = null;
    for (const address of list) {
      if (typeof address !== 'string' || !listings.has(address)) continue;
      if (pod === null) pod = podOf(endpoint);
      const pods = podsAt.get(address);
      if (pods === undefined) podsAt.set(address, [pod]); else pods.push(pod);
    }
  }

  const addresses: ShadowAddress[] = [];
  const outputs = new Map<string, string>();
  /** Inputs that leave their cluster's list (the hub path); a repaired one stays listed under its new text. */
  const unlisted = new Set<string>();
  if (read.state === 'read') {
    const decided: { cluster: string; input: string; value: V | undefined; decision: Decision<V> }[] = [];
    for (const [cluster, list] of clusters) {
      for (let i = 0; i < list.length; i++) {
        const input = list[i] ?? '';
        if (list.indexOf(input) !== i) continue;
        const value = codec.parseCanonical(input);
        const decision: Decision<V> = value === undefined
          ? { outcome: 'unresolved', reason: 'not-canonical', detail: `not a canonical ${codec.family} address` }
          : (listings.get(input) ?? 0) > 1
            ? { outcome: 'unresolved', reason: 'ambiguous', detail: `listed under ${listings.get(input)} clusters: Liqo picks one at random` }
            : decide(view, cluster, input, value, podsAt.get(input) ?? NO_PODS);
        decided.push({ cluster, input, value, decision });
      }
    }
    // Liqo looks every endpoint address up by its text: a replacement must not be the text of any other address of
    // the shadow (endpoints or lists), nor of another replacement, or another pod would be mapped as this one.
    // Counted by text, with the texts the shadow already carries marked taken (one pass over its addresses).
    const TAKEN = -1;
    const counts = (all: boolean) => {
      const result = new Map<string, number>();
      for (const { decision } of decided) {
        if (decision.outcome === 'repaired' || (all && decision.outcome === 'hub-path')) result.set(decision.text, (result.get(decision.text) ?? 0) + 1);
      }
      if (result.size === 0) return result;
      for (const text of result.keys()) if (listings.has(text)) result.set(text, TAKEN);
      for (const list of restored) {
        if (list === undefined) continue;
        for (const address of list) if (typeof address === 'string' && result.has(address)) result.set(address, TAKEN);
      }
      return result;
    };
    const clash = (decision: Decision<V>, seen: ReadonlyMap<string, number>): string | undefined => {
      if (decision.outcome !== 'repaired' && decision.outcome !== 'hub-path') return undefined;
      const count = seen.get(decision.text) ?? 0;
      if (count === TAKEN) return `${decision.text} is already an address of this shadow`;
      if (count > 1) return `${decision.text} would replace more than one listed address`;
      return undefined;
    };
    const repairedTexts = counts(false);
    let fellBack = false;
    for (const entry of decided) {
      const why = entry.decision.outcome === 'repaired' ? clash(entry.decision, repairedTexts) : undefined;
      if (why === undefined || entry.value === undefined) continue;
      const fallback = hubPath(view, entry.value, podsAt.get(entry.input) ?? NO_PODS, 'ambiguous', `repairing would be ambiguous: ${why}`);
      entry.decision = fallback.outcome === 'hub-path' ? fallback : { outcome: 'unresolved', reason: 'ambiguous', detail: `${why}; ${fallback.detail}` };
      fellBack = true;
    }
    const finalTexts = fellBack || decided.some((entry) => entry.decision.outcome === 'hub-path') ? counts(true) : repairedTexts;
    for (const entry of decided) {
      const why = clash(entry.decision, finalTexts);
      if (why !== undefined) entry.decision = { outcome: 'unresolved', reason: 'ambiguous', detail: why };
      const { cluster, input, decision } = entry;
      if (decision.outcome === 'repaired' || decision.outcome === 'hub-path') outputs.set(input, decision.text);
      if (decision.outcome === 'hub-path') unlisted.add(input);
      addresses.push(shadowAddress(cluster, input, decision));
    }
  }

  // The annotations the result carries, and whether they fit (step 6).
  const hubText = typeof hubData === 'string' ? hubData : undefined;
  let wanted = desiredAnnotations({ hubText, read, clusters, outputs, unlisted });
  if (outputs.size > 0) {
    const bytes = annotationBytes(received, wanted);
    if (bytes >= ANNOTATIONS_LIMIT_BYTES) {
      for (let i = 0; i < addresses.length; i++) {
        const entry = addresses[i];
        if (entry === undefined || (entry.outcome !== 'repaired' && entry.outcome !== 'hub-path')) continue;
        addresses[i] = {
          cluster: entry.cluster, input: entry.input, output: entry.input, outcome: 'unresolved', reason: 'too-large',
          detail: `the shadow's annotations would be ${bytes} bytes, Liqo's bound is ${ANNOTATIONS_LIMIT_BYTES}`,
        };
      }
      outputs.clear();
      wanted = desiredAnnotations({ hubText, read, clusters, outputs, unlisted });
    }
  }

  // Edits against the object as received.
  const edits: ShadowEdit[] = [];
  for (let e = 0; e < endpoints.length; e++) {
    const after = restored[e];
    if (after === undefined) continue;
    const endpoint = endpoints[e];
    const before = isObject(endpoint) && Object.hasOwn(endpoint, 'addresses') ? endpoint.addresses : undefined;
    if (!isArray(before)) continue;
    for (let a = 0; a < after.length; a++) {
      const address = after[a];
      const from = before[a];
      if (typeof address !== 'string' || typeof from !== 'string') continue;
      const to = outputs.size === 0 ? address : outputs.get(address) ?? address;
      if (to !== from) edits.push({ endpoint: e, address: a, from, to });
    }
  }
  const annotations: ShadowAnnotationEdit[] = [];
  for (const key of OUR_KEYS) {
    // A data annotation that is not text cannot come from the API server; it is not ours to remove.
    if (key === DIRECT_CONNECTIONS_DATA_ANNOTATION && hubData !== undefined && typeof hubData !== 'string') continue;
    const value = wanted.get(key);
    const has = received !== undefined && Object.hasOwn(received, key);
    if (value === undefined ? has : !has || received[key] !== value) annotations.push({ key, value });
  }
  const data: DataState = read.state === 'invalid' ? { state: 'invalid', detail: read.detail } : read.state === 'read' ? DATA_READ : DATA_ABSENT;
  if (edits.length === 0 && annotations.length === 0) return { kind: 'unchanged', shadow, data, addresses, ignored };
  return { kind: 'changed', shadow, data, addresses, ignored, edits, annotations, object: applyShadowEdits(shadow, edits, annotations) };
}

const NO_CLUSTERS: ReadonlyMap<string, readonly string[]> = new Map();
const NO_PODS: readonly (PodRef | undefined)[] = Object.freeze([]);
const DATA_READ: DataState = Object.freeze({ state: 'read' });
const DATA_ABSENT: DataState = Object.freeze({ state: 'absent' });

/** Our three keys as the result carries them: the hub's data as it wrote it, or repaired with the two records. */
function desiredAnnotations(input: {
  readonly hubText: string | undefined;
  readonly read: ReturnType<typeof readDirectConnectionsData>;
  readonly clusters: ReadonlyMap<string, readonly string[]>;
  readonly outputs: ReadonlyMap<string, string>;
  readonly unlisted: ReadonlySet<string>;
}): Map<ShadowAnnotationKey, string | undefined> {
  const { hubText, read, clusters, outputs, unlisted } = input;
  const result = new Map<ShadowAnnotationKey, string | undefined>();
  if (outputs.size === 0 || read.state !== 'read' || hubText === undefined) {
    result.set(DIRECT_CONNECTIONS_DATA_ANNOTATION, hubText);
    result.set(SHADOW_ORIGINAL_ADDRESSES_ANNOTATION, undefined);
    result.set(ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION, undefined);
    return result;
  }
  const lists = new Map<string, readonly string[]>();
  for (const [cluster, list] of clusters) {
    const next: string[] = [];
    for (const address of list) {
      const out = outputs.get(address);
      if (out === undefined) next.push(address);
      else if (!unlisted.has(address)) next.push(out);
    }
    if (next.length > 0) lists.set(cluster, next);
  }
  // Both sides are canonical address text (digits, a-f, dots, colons), so quoting is all JSON asks of them; and a
  // string rather than an object keyed by address, which would intern every address as a property name.
  let reversed = '';
  for (const [input, out] of outputs) reversed += `${reversed === '' ? '{' : ','}"${out}":"${input}"`;
  result.set(DIRECT_CONNECTIONS_DATA_ANNOTATION, writeDirectConnectionsData(read.data, lists));
  result.set(SHADOW_ORIGINAL_ADDRESSES_ANNOTATION, `${reversed}}`);
  result.set(ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION, hubText);
  return result;
}

/**
 * The bytes of the annotations the result would carry (Go's len: UTF-8). Counted exactly only near the bound: a
 * UTF-16 unit is at most 3 bytes, so text of less than a third of it in units cannot reach it.
 */
function annotationBytes(received: JsonObject | undefined, wanted: ReadonlyMap<ShadowAnnotationKey, string | undefined>): number {
  const texts: string[] = [];
  if (received !== undefined) {
    for (const key of Object.keys(received)) {
      const value = received[key];
      if (typeof value === 'string' && !OUR_KEY_SET.has(key)) texts.push(key, value);
    }
  }
  for (const [key, value] of wanted) if (value !== undefined) texts.push(key, value);
  let units = 0;
  for (const text of texts) units += text.length;
  if (units * 3 < ANNOTATIONS_LIMIT_BYTES) return units;
  let bytes = 0;
  for (const text of texts) bytes += utf8Length(text);
  return bytes;
}

function shadowAddress<V>(cluster: string, input: string, decision: Decision<V>): ShadowAddress {
  switch (decision.outcome) {
    case 'direct': return { cluster, input, output: input, outcome: 'direct', detail: decision.detail };
    case 'repaired': return { cluster, input, output: decision.text, outcome: 'repaired', detail: decision.detail };
    case 'hub-path': return { cluster, input, output: decision.text, outcome: 'hub-path', via: decision.via, hubIp: decision.hubIp, detail: decision.detail };
    case 'unresolved': return { cluster, input, output: input, outcome: 'unresolved', reason: decision.reason, detail: decision.detail };
  }
}

/** The received object with the edits made, copied only along the changed paths so unknown fields survive by reference. */
function applyShadowEdits(shadow: ReflectedShadow, edits: readonly ShadowEdit[], annotations: readonly ShadowAnnotationEdit[]): JsonObject {
  const result: Record<string, Json> = { ...shadow.object };
  if (edits.length > 0) {
    const endpoints = [...shadow.endpoints];
    for (const edit of edits) {
      const endpoint = endpoints[edit.endpoint];
      const addresses = addressesOf(endpoint);
      if (!isObject(endpoint) || addresses === undefined) continue;
      const copy = [...addresses];
      copy[edit.address] = edit.to;
      endpoints[edit.endpoint] = { ...endpoint, addresses: copy };
    }
    const spec = isObject(shadow.object.spec) ? shadow.object.spec : {};
    const template = isObject(spec.template) ? spec.template : {};
    result.spec = { ...spec, template: { ...template, endpoints } };
  }
  if (annotations.length > 0) {
    const metadata = isObject(shadow.object.metadata) ? shadow.object.metadata : {};
    const next: Record<string, Json> = { ...(shadow.annotations ?? {}) };
    for (const { key, value } of annotations) {
      if (value === undefined) delete next[key]; else next[key] = value;
    }
    const copy: Record<string, Json> = { ...metadata };
    if (Object.keys(next).length === 0) delete copy.annotations; else copy.annotations = next;
    result.metadata = copy;
  }
  return result;
}

/**
 * The repair (docs/reference.md, "Liqo's own direct connections") of any JSON against one snapshot: a skip (left
 * alone, with why), unchanged, or changed with the new object and each listed address's outcome. Idempotent, and
 * with an empty view it gives back the shadow exactly as the hub wrote it.
 */
export function repairShadowEndpointSlice(
  object: unknown, snapshot: Snapshot, options: { readonly clusterId?: string | undefined; readonly records?: RecordCheck | undefined },
): ShadowRepair {
  const shadow = readReflectedShadow(object, options);
  if (isShadowSkip(shadow)) return { kind: 'skip', reason: shadow.skip, detail: shadow.detail };
  const hub = snapshot.hubFor(shadow.hub);
  if (!hub.read) return { kind: 'skip', reason: HUB_NOT_READ_REASON, detail: hub.detail };
  const records = options.records ?? SPACES_ONLY;
  return shadow.family === 'IPv4'
    ? repairFamily(shadow, viewFor(IPV4_VIEWS, IPV4_ACCESS, snapshot, shadow.hub, hub.ipam), { spaces: shadowRecordSpaces.ipv4(snapshot, shadow.hub), records })
    : repairFamily(shadow, viewFor(IPV6_VIEWS, IPV6_ACCESS, snapshot, shadow.hub, hub.ipam), { spaces: shadowRecordSpaces.ipv6(snapshot, shadow.hub), records });
}

/** Counts of a repair's listed addresses by outcome: what `shadow_addresses_total{outcome}` adds. */
export function outcomeCounts(addresses: readonly ShadowAddress[]): Readonly<Record<ShadowOutcome, number>> {
  const counts: Record<ShadowOutcome, number> = { direct: 0, repaired: 0, 'hub-path': 0, unresolved: 0 };
  for (const address of addresses) counts[address.outcome]++;
  return counts;
}

/** What the repair makes of a peer's listed addresses, by block rather than by address: what `/debug/pairs` shows. */
export interface PeerDirectConnections {
  readonly peer: string;
  /** With several hub readers, the hub whose view of the peer this is (its reader's cluster ID, or what the unbound one stands for). */
  readonly hub?: string;
  readonly state: ShadowOutcome;
  /** For `hub-path`, why (`no-shortcut`, `tunnel-down`, `connection-stale`); for `unresolved`, the reason. */
  readonly reason: HubPathReason | UnresolvedReason | null;
  readonly detail: string;
}

/**
 * Per peer of the hub's Configurations (not the leaf itself): `direct` where the hub's view of the peer lies in what
 * the leaf declares for it, `repaired` where it does once moved back, `hub-path` without a usable direct network but
 * with one Configuration for a cluster the hub does not name (the hub), else `unresolved`. Addresses are decided one
 * by one; this says what most of a peer's addresses get.
 */
export function peerDirectConnections(snapshot: Snapshot, leafCluster: string | undefined): PeerDirectConnections[] {
  const readers = { parts: snapshot.hubs, consumers: snapshot.consumers };
  // With one reader the entries are as they were; with several, each names the hub whose view of the peer it is.
  const several = snapshot.hubs.length > 1;
  return snapshot.hubs.flatMap((part) => hubPeerDirectConnections(snapshot, part, leafCluster)
    .map((entry) => (several ? { ...entry, hub: readerName(part, readers) } : entry)));
}

function hubPeerDirectConnections(snapshot: Snapshot, part: HubPart, leafCluster: string | undefined): Omit<PeerDirectConnections, 'hub'>[] {
  const { ipam: hub } = part;
  if (!hub.known) return [];
  const peers = [...new Set(hub.configurations.flatMap((c) => (c.remoteCluster === undefined || c.remoteCluster === leafCluster ? [] : [c.remoteCluster])))].sort();
  const named = new Set(hub.configurations.flatMap((c) => c.remoteCluster ?? []));
  // A bound reader names its hub; an unbound one's hub is the cluster its own Configurations do not name.
  const hubs = part.id !== undefined ? snapshot.views.configurationsOf(part.id)
    : snapshot.views.configurations.filter((c) => c.remoteCluster !== undefined && !named.has(c.remoteCluster));
  const leaf = { configurationsOf: snapshot.views.configurationsOf, tunnels: snapshot.tunnels };
  return peers.map((peer): Omit<PeerDirectConnections, 'hub'> => {
    const network = directNetworkTo(peer, leaf);
    const leafConfigurations = leaf.configurationsOf(peer);
    const usable = network.state === 'direct' && leafConfigurations.length === 1;
    if (!usable) {
      const via = network.state === 'direct' ? 'no-shortcut' : network.state;
      const why = network.state === 'direct' ? `this leaf has ${leafConfigurations.length} Liqo Configurations for ${peer}` : network.detail;
      if (hubs.length !== 1 || hubs[0]?.externalMappings.length === 0) {
        return { peer, state: 'unresolved', reason: 'no-hub-network', detail: `${why}; and no one Configuration of this leaf for the hub maps its external CIDR` };
      }
      return { peer, state: 'hub-path', reason: via, detail: `${why}; through ${hubs[0]?.ref}` };
    }
    const declared = leafConfigurations.flatMap((c) => c.podMappings.map((m) => m.declared));
    const mappings = hub.configurations.filter((c) => c.remoteCluster === peer).flatMap((c) => c.podMappings);
    if (mappings.length > 0 && mappings.every((m) => declared.some((d) => encloses(d, m.seen)))) {
      return { peer, state: 'direct', reason: null, detail: `the hub's view of ${peer} lies in what this leaf declares for it` };
    }
    if (mappings.length > 0 && mappings.every((m) => declared.some((d) => encloses(d, m.declared)))) {
      return { peer, state: 'repaired', reason: null, detail: `the hub remapped ${peer} (${mappings.map((m) => `${m.seen.text} -> ${m.declared.text}`).join(', ')}): moved back` };
    }
    return { peer, state: 'unresolved', reason: 'outside-declared', detail: `the hub's view of ${peer}, moved back, is outside what this leaf declares for it` };
  });
}
