// `shortcut-webhook status`: which path each peer's (or Service's) traffic takes, folded from stored objects one at a
// time. Pure: the command (commands/status.ts) lists pages and hands each item here, then drops the page. Every
// decision comes from the code explain runs (decideObject, explainTrace, listedExplanation). Whether an object is
// out of step is read off the same result, by the test the controller's plans make (controller/plan.ts: a rewrite that
// is not unchanged; controller/shadow-plan.ts: a repair that changed something): evaluated once, not twice per object,
// and a test holds the two to agreement (offline is a layer below controller and may not import it).
import { peerDirectConnections } from '../core/direct-connections.ts';
import { asEndpointSlice, DESTINATION_LABEL, ORIGIN_LABEL, sliceName } from '../core/endpoint-slice.ts';
import { HUB_NOT_READ_REASON } from '../core/hubs.ts';
import { containsAddress } from '../core/cidr.ts';
import { directNetworkTo } from '../core/hub-resolution.ts';
import { tunnelText } from '../core/leaf-views.ts';
import { field, isArray, isObject, objectAt, stringField } from '../core/json.ts';
import { compareText } from '../core/object-name.ts';
import type { ForeignClusterConnection } from '../core/fcc.ts';
import type { PairState } from '../core/pairs.ts';
import { isUnchanged, type AddressTrace } from '../core/rewrite.ts';
import { asShadowEndpointSlice } from '../core/shadow-endpoint-slice.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { explainTrace, listedExplanation } from './explain.ts';
import { decideObject } from './rewrite-documents.ts';

/** The label Kubernetes (and Liqo's reflection) puts on a Service's slices. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** Where one address's traffic goes: through a direct network (a shortcut, Liqo's own), the hub, or nowhere (Liqo keeps no slice for it). */
export type AddressPath = 'direct' | 'hub' | 'none';
export const ADDRESS_PATHS: readonly AddressPath[] = ['direct', 'hub', 'none'];

/** A peer's or a Service's path: one of its addresses' paths, `mixed` when they differ, `none` when it has none on a path. */
export type Path = 'direct' | 'hub' | 'mixed' | 'none';

export type StoredResource = 'EndpointSlice' | 'ShadowEndpointSlice';

/** One address of a stored object, as status reports it. */
export interface AddressStatus {
  readonly service: string;
  readonly resource: StoredResource;
  readonly object: string;
  readonly input: string;
  readonly output: string;
  /** The cluster whose pod it is, where known; else the hub that reflected it (its own pods, or a peer it cannot name). */
  readonly peer: string;
  readonly path: AddressPath;
  /** The contract's reason: rewritten, identity, no-pair, not-connected, tunnel-down, hub-external, repaired, ... */
  readonly reason: string;
  /** The stored object differs from what the view makes of it: the controller's next pass writes it. */
  readonly outOfStep: boolean;
}

export interface Counts {
  endpointSlices: number;
  shadowEndpointSlices: number;
  addresses: Record<AddressPath, number>;
  /** Objects whose stored state differs from the view's (a write that slipped past the webhook, a pass in flight). */
  outOfStep: { endpointSlices: number; shadowEndpointSlices: number };
  /** Why, by reason, with how many addresses each. */
  reasons: Map<string, number>;
}

function emptyCounts(): Counts {
  return {
    endpointSlices: 0, shadowEndpointSlices: 0, addresses: { direct: 0, hub: 0, none: 0 },
    outOfStep: { endpointSlices: 0, shadowEndpointSlices: 0 }, reasons: new Map(),
  };
}

/** Counters and the Services seen (names only: the objects themselves are dropped once folded). */
interface Tally {
  readonly counts: Counts;
  readonly services: Set<string>;
}

function newTally(): Tally {
  return { counts: emptyCounts(), services: new Set() };
}

const DIRECT_REASONS: ReadonlySet<AddressTrace['reason']> = new Set(['rewritten', 'through-shortcut', 'identity']);

/** The reason an address of an EndpointSlice is where it is: the unusable FCC's reason, or the stock path's, or the trace's. */
function sliceReason(trace: AddressTrace, explained: { readonly reason: string }): string {
  if (trace.stock !== undefined) return trace.stock.reason;
  if (trace.hub !== undefined || trace.reason === 'not-hub-external') return trace.reason;
  const blocked = explained.reason.startsWith(`${trace.reason}: `) ? explained.reason.slice(trace.reason.length + 2) : undefined;
  return blocked ?? trace.reason;
}

/** Reasons of an address the EndpointSlice route has no rule for: it is where Liqo put it. */
const LEFT_ALONE: ReadonlySet<AddressTrace['reason']> = new Set(['no-fcc', 'not-hub-external', 'no-pair']);

/**
 * An address Liqo itself put in the leaf's view of a peer's pods (its direct connections, from a repaired shadow):
 * the peer's direct network carries it while the peer's Connections are Connected, and nothing does otherwise. Its
 * reason stays the one explain gives (the webhook left it alone); only the path says where it goes. Undefined for an
 * address in no such view, or in the hub's (the slice's origin: its own pods).
 */
function liqoMapped(snapshot: Snapshot, address: string, origin: string | undefined): Pick<AddressStatus, 'peer' | 'path'> | undefined {
  const view = snapshot.views.remotePods.find((entry) => entry.cluster !== undefined && entry.cluster !== origin && containsAddress(entry.cidr, address));
  if (view?.cluster === undefined) return undefined;
  const tunnel = snapshot.tunnels.get(view.cluster);
  return { peer: view.cluster, path: tunnel === undefined || tunnel.up ? 'direct' : 'none' };
}

function peerOfState(state: PairState): string | undefined {
  return state.usable ? state.pair.peer : state.peer;
}

interface Lookups {
  readonly fccs: ReadonlyMap<string, ForeignClusterConnection>;
  /** Each FCC's peer for the cluster. */
  readonly peers: ReadonlyMap<string, string | undefined>;
}

/** Made once per snapshot and cluster rather than per object: 20,000 slices share them. */
const LOOKUPS = new WeakMap<Snapshot, Map<string, Lookups>>();

function lookups(snapshot: Snapshot, cluster: string): Lookups {
  let byCluster = LOOKUPS.get(snapshot);
  if (byCluster === undefined) LOOKUPS.set(snapshot, byCluster = new Map());
  let found = byCluster.get(cluster);
  if (found === undefined) {
    found = {
      fccs: new Map(snapshot.fccs.map((fcc) => [fcc.ref, fcc])),
      peers: new Map(snapshot.statesFor(cluster).map((state) => [state.fcc, peerOfState(state)])),
    };
    byCluster.set(cluster, found);
  }
  return found;
}

/** What one stored object folds into: its addresses, and whether it is out of step. Undefined for one that is not ours. */
export interface ObjectStatus {
  readonly resource: StoredResource;
  /** `namespace/name`: Liqo's writer names the EndpointSlice it makes from a ShadowEndpointSlice as the shadow. */
  readonly name: string;
  readonly service: string;
  readonly cluster: string;
  /** The hub that reflected it (`offloading.liqo.io/origin`). */
  readonly hub: string | undefined;
  readonly outOfStep: boolean;
  readonly addresses: readonly AddressStatus[];
}

export interface StatusOptions {
  readonly clusterId?: string | undefined;
  /** Epoch ms: how old a stale Connection's last heartbeat is (default the wall clock). */
  readonly now?: number;
}

/**
 * One listed item (without apiVersion and kind, as list items come) decided as explain decides it; undefined when
 * the webhook leaves it alone (another manager, an indirect slice, no cluster ID).
 */
export function objectStatus(resource: StoredResource, item: unknown, snapshot: Snapshot, options: StatusOptions): ObjectStatus | undefined {
  const object = resource === 'EndpointSlice' ? asEndpointSlice(item) : asShadowEndpointSlice(item);
  const name = sliceName(object);
  const labels = isObject(object) ? objectAt(objectAt(object, 'metadata') ?? {}, 'labels') : undefined;
  const namespace = name.includes('/') ? name.slice(0, name.indexOf('/')) : '';
  const service = `${namespace}/${(labels && stringField(labels, SERVICE_NAME_LABEL)) ?? '(no service)'}`;
  // The decision alone: the rewritten copy and its patch, which explain prints, are never read here.
  const report = decideObject(object, snapshot, { clusterId: options.clusterId });
  if (typeof report === 'string') return undefined;
  if ('skip' in report.result && report.result.skip === HUB_NOT_READ_REASON) {
    return notRead(resource, object, { service, name, hub: labels && stringField(labels, ORIGIN_LABEL), clusterId: options.clusterId });
  }
  if ('skip' in report.result) return undefined;
  if (report.kind === 'shadow') {
    const { shadow, addresses } = report.result;
    const outOfStep = report.result.kind === 'changed';
    return {
      resource, name, service, cluster: shadow.clusterId, hub: shadow.hub, outOfStep,
      addresses: addresses.map((address): AddressStatus => {
        const row = listedExplanation(address);
        const path: AddressPath = row.outcome === 'direct' || row.outcome === 'repaired' ? 'direct' : row.outcome === 'hub-path' ? 'hub' : 'none';
        return { service, resource, object: name, input: row.input, output: row.output, peer: row.cluster, path, reason: row.reason ?? row.outcome, outOfStep };
      }),
    };
  }
  if (!('slice' in report.result)) return undefined;
  const { slice } = report.result;
  const cluster = slice.clusterId;
  const { fccs, peers } = lookups(snapshot, cluster);
  const outOfStep = !isUnchanged(report.result);
  const hub = slice.origin ?? '(no origin)';
  return {
    resource, name, service, cluster, hub: slice.origin, outOfStep,
    addresses: report.traces.map((trace): AddressStatus => {
      const explained = explainTrace(trace, snapshot, fccs, cluster);
      const known = explained.peer ?? trace.stock?.peer ?? (explained.fcc === null ? undefined : peers.get(explained.fcc));
      const base = { service, resource, object: name, input: explained.input, output: explained.output, outOfStep };
      if (known === undefined && LEFT_ALONE.has(trace.reason)) {
        const mapped = liqoMapped(snapshot, trace.output, slice.origin);
        if (mapped !== undefined) return { ...base, ...mapped, reason: sliceReason(trace, explained) };
      }
      const direct = DIRECT_REASONS.has(trace.reason) || (trace.hub !== undefined && trace.reason !== 'restored');
      return { ...base, peer: known ?? hub, path: direct ? 'direct' : 'hub', reason: sliceReason(trace, explained) };
    }),
  };
}

/**
 * An object of a hub no reader stands for: left as its hub wrote it, so its traffic goes through that hub. Counted,
 * address by address, under that hub with reason hub-not-read, never decided with another hub's view.
 */
function notRead(resource: StoredResource, object: unknown, where: { service: string; name: string; hub: string | undefined; clusterId: string | undefined }): ObjectStatus {
  const body = isObject(object) ? (resource === 'EndpointSlice' ? object : objectAt(objectAt(object, 'spec') ?? {}, 'template')) : undefined;
  const endpoints = body === undefined ? [] : field(body, 'endpoints');
  const labels = isObject(object) ? objectAt(objectAt(object, 'metadata') ?? {}, 'labels') : undefined;
  const hub = where.hub ?? '(no origin)';
  const addresses = (isArray(endpoints) ? endpoints : []).flatMap((endpoint) => {
    const list = isObject(endpoint) ? field(endpoint, 'addresses') : undefined;
    return (isArray(list) ? list : []).flatMap((address) => (typeof address === 'string' ? [address] : []));
  });
  return {
    resource, name: where.name, service: where.service, cluster: (labels && stringField(labels, DESTINATION_LABEL)) ?? where.clusterId ?? '', hub: where.hub, outOfStep: false,
    addresses: addresses.map((address): AddressStatus => ({
      service: where.service, resource, object: where.name, input: address, output: address, peer: hub, path: 'hub', reason: HUB_NOT_READ_REASON, outOfStep: false,
    })),
  };
}

/** `counted`: which of its addresses count (a Service's address once, from one of its two objects); the object does. */
function add(tally: Tally, object: ObjectStatus, addresses: readonly AddressStatus[], counted: (address: AddressStatus) => boolean = () => true): void {
  const { counts } = tally;
  if (object.resource === 'EndpointSlice') counts.endpointSlices++; else counts.shadowEndpointSlices++;
  if (object.outOfStep) {
    if (object.resource === 'EndpointSlice') counts.outOfStep.endpointSlices++; else counts.outOfStep.shadowEndpointSlices++;
  }
  tally.services.add(object.service);
  for (const address of addresses) {
    if (!counted(address)) continue;
    counts.addresses[address.path]++;
    counts.reasons.set(address.reason, (counts.reasons.get(address.reason) ?? 0) + 1);
  }
}

/** An address as a disagreement shows it: `10.71.0.4 direct (cluster3)`. */
function said(address: AddressStatus): string {
  return `${address.output} ${address.path} (${address.peer})`;
}

export function pathOf(addresses: Readonly<Record<AddressPath, number>>): Path {
  const taken = (['direct', 'hub'] as const).filter((path) => addresses[path] > 0);
  return taken.length === 2 ? 'mixed' : taken[0] ?? 'none';
}

/** A peer's Connection as the leaf stores it: its state and when its status was last written. */
export interface ConnectionRecord {
  readonly name: string;
  readonly peer: string;
  readonly state: string;
  /** RFC 3339: the latest managedFields time of the status subresource, else the creation time; null when neither. */
  readonly since: string | null;
}

/**
 * Liqo v1.2.0's Connection status holds `value` and a latency probe, and no transition time. The status
 * subresource's managedFields time is when the status was last written: the state has held at least since then (the
 * latency probe writes it too, so while Connected it is recent). Without managedFields, the creation time.
 */
export function connectionRecord(item: unknown): ConnectionRecord | undefined {
  if (!isObject(item)) return undefined;
  const metadata = objectAt(item, 'metadata');
  const labels = metadata && objectAt(metadata, 'labels');
  const peer = labels && stringField(labels, 'liqo.io/remote-cluster-id');
  if (metadata === undefined || peer === undefined) return undefined;
  const status = objectAt(item, 'status');
  const managed = Array.isArray(metadata['managedFields']) ? metadata['managedFields'] : [];
  const times = managed.flatMap((entry) => (isObject(entry) && stringField(entry, 'subresource') === 'status' && typeof entry['time'] === 'string' ? [entry['time']] : []));
  const since = times.sort().at(-1) ?? stringField(metadata, 'creationTimestamp') ?? null;
  const namespace = stringField(metadata, 'namespace');
  const name = `${namespace === undefined ? '' : `${namespace}/`}${stringField(metadata, 'name') ?? ''}`;
  return { name, peer, state: (status && stringField(status, 'value')) || '(no status)', since };
}

/** What the view says of a peer before any object is counted: each path's verdict. */
export interface PeerView {
  /** The FCCs naming this leaf and the peer: `usable` or the reason they are not (§2). */
  readonly fccs: readonly { readonly fcc: string; readonly state: string }[];
  /** The stock path's direct network to the peer (§8 step 4), where the hub's IPAM is known. */
  readonly directNetwork: string | null;
  /** Liqo's own direct connections to the peer (§9): direct, repaired, hub-path or unresolved, with the reason. */
  readonly directConnections: string | null;
}

export interface PeerStatus {
  readonly peer: string;
  /** The hubs whose reflected objects carried this peer's addresses (their `offloading.liqo.io/origin`). */
  readonly hubs: readonly string[];
  /** `hub` for the cluster that reflected the slices (its own pods, and addresses whose cluster it cannot name). */
  readonly role: 'peer' | 'hub';
  readonly path: Path;
  readonly why: readonly { readonly reason: string; readonly addresses: number }[];
  readonly view: PeerView;
  readonly connections: readonly ConnectionRecord[];
  /** The peer's tunnel as the view reads it: Connected only while all its Connections are. */
  readonly connection: string | null;
  /** The latest `since` of its Connections. */
  readonly since: string | null;
  readonly counts: CountsJson;
}

export interface CountsJson {
  readonly endpointSlices: number;
  readonly shadowEndpointSlices: number;
  readonly services: number;
  readonly addresses: Readonly<Record<AddressPath, number>>;
  readonly outOfStep: { readonly endpointSlices: number; readonly shadowEndpointSlices: number };
}

function countsJson(tally: Tally): CountsJson {
  const { counts } = tally;
  return {
    endpointSlices: counts.endpointSlices, shadowEndpointSlices: counts.shadowEndpointSlices, services: tally.services.size,
    addresses: { ...counts.addresses }, outOfStep: { ...counts.outOfStep },
  };
}

function why(counts: Counts): { reason: string; addresses: number }[] {
  return [...counts.reasons].map(([reason, addresses]) => ({ reason, addresses }))
    .sort((a, b) => b.addresses - a.addresses || compareText(a.reason, b.reason));
}

export interface ServiceStatus {
  readonly service: string;
  /** The hubs that reflected its objects. */
  readonly hubs: readonly string[];
  readonly path: Path;
  readonly peers: readonly string[];
  readonly why: readonly { readonly reason: string; readonly addresses: number }[];
  readonly counts: CountsJson;
}

/**
 * Folds objects one at a time into counters per peer and per Service; keeps each address only when asked to
 * (`--addresses`). What it holds grows with peers and Services, and the shadows of Services on Liqo's direct
 * connections until their EndpointSlices come, not with slices.
 */
export class StatusFold {
  private readonly peers = new Map<string, Tally>();
  private readonly services = new Map<string, Tally & { peers: Set<string>; hubs: Set<string> }>();
  /** By peer: the hubs whose objects carried its addresses. */
  private readonly peerHubs = new Map<string, Set<string>>();
  private readonly total = newTally();
  private readonly hubs = new Set<string>();
  private readonly clusters = new Set<string>();
  /** Kept with --addresses: the EndpointSlices' and the shadows' apart, listed in that order whatever the folding's. */
  private readonly sliceAddresses: AddressStatus[] = [];
  private readonly shadowAddresses: AddressStatus[] = [];
  /**
   * ShadowEndpointSlices that list addresses (a Service on Liqo's direct connections), waiting for the EndpointSlice
   * Liqo's writer made from each, so that each address counts once (see add). As many as such Services: every
   * reflected slice has a shadow, but one that lists no address is folded at once.
   */
  private readonly shadows = new Map<string, ObjectStatus>();
  /** Where a shadow and the EndpointSlice written from it disagree, each in words. */
  readonly disagreements: string[] = [];

  constructor(private readonly snapshot: Snapshot, private readonly options: StatusOptions & { readonly keepAddresses?: boolean }) {}

  /**
   * Every ShadowEndpointSlice first, then the EndpointSlices: a slice written from a shadow is known by its name. A
   * shadow given after its slice would count twice: the command lists them in this order.
   */
  add(resource: StoredResource, item: unknown): void {
    const object = objectStatus(resource, item, this.snapshot, this.options);
    if (object === undefined) return;
    if (resource === 'ShadowEndpointSlice') {
      if (object.addresses.length === 0) this.fold(object); else this.shadows.set(object.name, object);
      if (this.options.keepAddresses === true) this.shadowAddresses.push(...object.addresses);
      return;
    }
    const shadow = this.shadows.get(object.name);
    if (shadow === undefined) {
      this.fold(object);
    } else {
      this.shadows.delete(object.name);
      // Written from the shadow: where the slice holds every address the shadow lists, those count as the shadow
      // says (it knows their peer from Liqo's direct-connections data) and the slice's others (the hub's own pods) as
      // the slice says. Where it does not (Liqo's writer failing on the last shadow), the traffic goes as the slice
      // says: its addresses count, and both are shown.
      const held = new Set(object.addresses.map((address) => address.output));
      const missing = shadow.addresses.filter((address) => !held.has(address.output));
      if (missing.length === 0) {
        const listed = new Set(shadow.addresses.map((address) => address.output));
        this.fold(shadow);
        this.fold(object, (address) => !listed.has(address.output));
      } else {
        this.fold(shadow, () => false);
        this.fold(object);
        this.disagreements.push(`${shadow.name}: its ShadowEndpointSlice says ${missing.map(said).join(', ')}, which the EndpointSlice written from it does not hold (it holds ${object.addresses.length === 0 ? 'no address' : object.addresses.map(said).join(', ')})`);
      }
    }
    if (this.options.keepAddresses === true) this.sliceAddresses.push(...object.addresses);
  }

  /** Each address kept (--addresses): the EndpointSlices', then the ShadowEndpointSlices'. */
  get addresses(): readonly AddressStatus[] {
    return [...this.sliceAddresses, ...this.shadowAddresses];
  }

  /**
   * The shadows no EndpointSlice was written from (Liqo's writer failing on them): their own addresses count. Done by
   * whatever reads the counts, once every object is in.
   */
  private finish(): void {
    for (const shadow of this.shadows.values()) this.fold(shadow);
    this.shadows.clear();
  }

  private fold(object: ObjectStatus, counted?: (address: AddressStatus) => boolean): void {
    this.clusters.add(object.cluster);
    add(this.total, object, object.addresses, counted);
    const byPeer = new Map<string, AddressStatus[]>();
    for (const address of object.addresses) {
      const list = byPeer.get(address.peer);
      if (list === undefined) byPeer.set(address.peer, [address]); else list.push(address);
    }
    for (const [peer, addresses] of byPeer) {
      let tally = this.peers.get(peer);
      if (tally === undefined) this.peers.set(peer, tally = newTally());
      add(tally, object, addresses, counted);
      if (object.hub !== undefined) this.peerHubs.set(peer, (this.peerHubs.get(peer) ?? new Set()).add(object.hub));
    }
    if (object.hub !== undefined) this.hubs.add(object.hub);
    let service = this.services.get(object.service);
    if (service === undefined) this.services.set(object.service, service = { ...newTally(), peers: new Set(), hubs: new Set() });
    add(service, object, object.addresses, counted);
    if (object.hub !== undefined) service.hubs.add(object.hub);
    for (const peer of byPeer.keys()) service.peers.add(peer);
  }

  /** The local cluster: --cluster-id, else the one the objects named (the first in order, when several did). */
  cluster(): string | undefined {
    this.finish();
    return this.options.clusterId ?? [...this.clusters].sort(compareText)[0];
  }

  totals(): CountsJson {
    this.finish();
    return countsJson(this.total);
  }

  /**
   * One entry per peer: those the leaf's Configurations and Connections name, the FCCs' peers for this leaf, the
   * hub's Configurations' peers, and any an address was attributed to.
   */
  peerStatuses(connections: readonly ConnectionRecord[]): PeerStatus[] {
    this.finish();
    const { snapshot } = this;
    const cluster = this.cluster();
    const states = cluster === undefined ? [] : snapshot.statesFor(cluster);
    const names = new Set<string>([
      ...snapshot.views.configurations.flatMap((c) => c.remoteCluster ?? []),
      ...snapshot.tunnels.keys(),
      ...connections.map((c) => c.peer),
      ...states.flatMap((state) => peerOfState(state) ?? []),
      ...snapshot.hubs.flatMap((part) => (part.ipam.known ? part.ipam.configurations.flatMap((c) => c.remoteCluster ?? []) : [])),
      ...this.peers.keys(),
    ]);
    if (cluster !== undefined) names.delete(cluster);
    const direct = new Map(peerDirectConnections(snapshot, cluster).map((p) => [p.peer, p]));
    const leaf = { configurationsOf: snapshot.views.configurationsOf, tunnels: snapshot.tunnels };
    return [...names].sort(compareText).map((peer): PeerStatus => {
      const tally = this.peers.get(peer) ?? newTally();
      const own = connections.filter((c) => c.peer === peer);
      const shadow = direct.get(peer);
      const tunnel = snapshot.tunnels.get(peer);
      const namedByHub = snapshot.hubs.some((part) => part.ipam.known && part.ipam.configurations.some((c) => c.remoteCluster === peer));
      return {
        peer,
        hubs: [...this.peerHubs.get(peer) ?? []].sort(compareText),
        role: this.hubs.has(peer) ? 'hub' : 'peer',
        path: pathOf(tally.counts.addresses),
        why: why(tally.counts),
        view: {
          fccs: states.filter((state) => peerOfState(state) === peer).map((state) => ({ fcc: state.fcc, state: state.usable ? 'usable' : state.reason })),
          directNetwork: namedByHub ? directNetworkTo(peer, leaf).state : null,
          directConnections: shadow === undefined ? null : shadow.reason === null ? shadow.state : `${shadow.state}: ${shadow.reason}`,
        },
        connections: own,
        connection: tunnel === undefined ? null : tunnelText(tunnel, this.options.now ?? Date.now()),
        since: own.flatMap((c) => c.since ?? []).sort().at(-1) ?? null,
        counts: countsJson(tally),
      };
    });
  }

  serviceStatuses(): ServiceStatus[] {
    this.finish();
    return [...this.services].sort(([a], [b]) => compareText(a, b)).map(([service, tally]) => ({
      service, hubs: [...tally.hubs].sort(compareText), path: pathOf(tally.counts.addresses), peers: [...tally.peers].sort(compareText),
      why: why(tally.counts), counts: countsJson(tally),
    }));
  }
}
