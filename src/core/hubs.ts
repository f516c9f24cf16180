// One leaf, several hubs: a leaf is a provider in as many peerings as it has consumers, each consumer (hub) with its
// own virtual kubelet, its own IPAM, its own view of every peer and its own FCCs. Each reflected object belongs to the
// hub in its `offloading.liqo.io/origin` label, and is decided only with what the product reads of that hub. Which
// reader stands for which hub is decided here, from the readers' bindings and the leaf's own ForeignClusters.
import type { ForeignClusterConnection } from './fcc.ts';
import type { HubIpam } from './hub-resolution.ts';
import { isObject, objectAt, stringField, type JsonObject } from './json.ts';
import { compareText } from './object-name.ts';

/** Liqo's record of a peering on this cluster (liqotech/liqo v1.2.0 apis/core/v1beta1/foreigncluster_types.go). */
export const FOREIGN_CLUSTER_GROUP = 'core.liqo.io';
export const FOREIGN_CLUSTER_VERSION = 'v1beta1';
export const FOREIGN_CLUSTER_KIND = 'ForeignCluster';
export const FOREIGN_CLUSTER_PLURAL = 'foreignclusters';
/** `status.role` of a peer that offloads to this cluster: a hub of this leaf. */
const CONSUMER_ROLES: ReadonlySet<string> = new Set(['Consumer', 'ConsumerAndProvider']);

/** The one reason name, everywhere, for an object of a hub the product does not read. */
export const HUB_NOT_READ_REASON = 'hub-not-read';

export function isForeignClusterObject(value: unknown): value is JsonObject {
  return isObject(value) && stringField(value, 'kind') === FOREIGN_CLUSTER_KIND
    && (stringField(value, 'apiVersion') ?? '').startsWith(`${FOREIGN_CLUSTER_GROUP}/`);
}

/** The peer's cluster ID where the ForeignCluster says it consumes this cluster's resources, else undefined. */
export function consumerOf(object: JsonObject): string | undefined {
  const spec = objectAt(object, 'spec');
  const status = objectAt(object, 'status');
  const id = spec && stringField(spec, 'clusterID');
  const role = status && stringField(status, 'role');
  return id && role !== undefined && CONSUMER_ROLES.has(role) ? id : undefined;
}

/** The leaf's consumers (its hubs), sorted and distinct, from its ForeignCluster objects. */
export function consumersOf(objects: Iterable<unknown>): string[] {
  const ids = new Set<string>();
  for (const object of objects) {
    const id = isObject(object) ? consumerOf(object) : undefined;
    if (id !== undefined) ids.add(id);
  }
  return [...ids].sort(compareText);
}

/** What one hub reader gives the view: the hub's IPAM objects and the FCCs kept on it. */
export interface HubPart {
  /** The hub's cluster ID the reader is bound to; undefined for an unbound reader (the leaf's only consumer). */
  readonly id: string | undefined;
  readonly ipam: HubIpam;
  readonly fccs: readonly ForeignClusterConnection[];
  /**
   * Why the reader's hub is not read now (its FCCs not listed yet, or its reads failing past the stale bound):
   * that hub's objects wait, left alone, while every other hub's are decided. Undefined while it follows its hub.
   */
  readonly away?: string | undefined;
}

/** Which hubs the readers stand for, given the leaf's consumers (undefined: not known, as offline without them). */
export interface HubReaders {
  readonly parts: readonly HubPart[];
  readonly consumers: readonly string[] | undefined;
}

/**
 * The consumer an unbound reader stands for: the one consumer no bound reader reads; `any` where the consumers are
 * not known (today's single-hub deployments, offline files without ForeignClusters), so it reads every hub no bound
 * reader does; undefined where the leaf has several such consumers and no way to tell which one it reads.
 */
export function unboundStandsFor(readers: HubReaders): string | 'any' | undefined {
  const { parts, consumers } = readers;
  if (!parts.some((part) => part.id === undefined)) return undefined;
  if (consumers === undefined || consumers.length === 0) return 'any';
  const bound = new Set(parts.flatMap((part) => (part.id === undefined ? [] : [part.id])));
  const free = consumers.filter((id) => !bound.has(id));
  return free.length === 1 ? free[0] : undefined;
}

export type HubAttribution = { readonly read: true; readonly part: number } | { readonly read: false; readonly detail: string };

function readable(parts: readonly HubPart[], index: number, origin: string | undefined): HubAttribution {
  const away = parts[index]?.away;
  return away === undefined ? { read: true, part: index } : { read: false, detail: `the reader of ${origin ?? 'the hub'} is away: ${away}` };
}

/** The reader (its index in `parts`) of the hub `origin`, or why none is: never another hub's reader. */
export function attributeHub(origin: string | undefined, readers: HubReaders): HubAttribution {
  const { parts } = readers;
  const unbound = parts.findIndex((part) => part.id === undefined);
  if (origin === undefined) {
    // Liqo labels every object it reflects; an unlabelled one is decided as before wherever one reader is all there is.
    if (parts.length === 1 && unbound === 0) return readable(parts, 0, origin);
    return { read: false, detail: 'the object names no hub (no offloading.liqo.io/origin label), and the hub readers are several' };
  }
  const bound = parts.findIndex((part) => part.id === origin);
  if (bound >= 0) return readable(parts, bound, origin);
  const standsFor = unboundStandsFor(readers);
  if (unbound >= 0 && (standsFor === 'any' || standsFor === origin)) return readable(parts, unbound, origin);
  const named = parts.flatMap((part) => (part.id === undefined ? [] : [part.id]));
  const readersText = named.length === 0 ? 'no hub reader is bound to a cluster ID' : `hub readers are bound to ${named.join(', ')}`;
  if (unbound >= 0 && standsFor === undefined) {
    const free = (readers.consumers ?? []).filter((id) => !named.includes(id));
    return { read: false, detail: `no hub reader is bound to ${origin}, and the unbound one could be any of this leaf's consumers ${free.join(', ')}: bind it with ID=FILE (${readersText})` };
  }
  return { read: false, detail: `no hub reader is bound to ${origin} (${readersText}${standsFor !== undefined && standsFor !== 'any' ? `; the unbound one reads ${standsFor}` : ''})` };
}

/** The leaf's consumers whose objects no reader stands for: what `/debug/pairs`, `status` and the log name. */
export function unreadHubs(readers: HubReaders): string[] {
  if (readers.parts.length === 0 || readers.consumers === undefined) return [];
  return readers.consumers.filter((id) => !attributeHub(id, readers).read);
}

/** How a reader is named to an operator: its cluster ID, or what the unbound one stands for. */
export function readerName(part: HubPart, readers: HubReaders): string {
  if (part.id !== undefined) return part.id;
  const standsFor = unboundStandsFor(readers);
  return standsFor === undefined ? '(unbound: several consumers)' : standsFor === 'any' ? '(unbound)' : standsFor;
}

/**
 * A cluster ID as Liqo names clusters (a DNS-1123 name): what may stand before `=` in a bound reader. A path never
 * reads as one unless its text before the first `=` is such a name without a slash.
 */
const CLUSTER_ID = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** A hub reader as given: `ID=VALUE` binds it to the hub `ID`; `VALUE` alone, or `=VALUE`, is unbound. */
export interface ReaderBinding {
  readonly hub: string | undefined;
  readonly value: string;
}

/**
 * `cluster1=/etc/hub1` is bound to cluster1; `/etc/hub1` is not. A path whose text before its first `=` would read as
 * a cluster ID (`a=b.yaml`) is written `./a=b.yaml` or `=a=b.yaml`: a leading `=` always means unbound.
 */
export function readerBinding(text: string): ReaderBinding {
  const at = text.indexOf('=');
  if (at < 0) return { hub: undefined, value: text };
  if (at === 0) return { hub: undefined, value: text.slice(1) };
  const id = text.slice(0, at);
  return CLUSTER_ID.test(id) ? { hub: id, value: text.slice(at + 1) } : { hub: undefined, value: text };
}

/** The hub IPs every reader knows, together: null where no reader knows its hub's IPAM. */
export function hubIpCount(parts: readonly HubPart[]): number | null {
  let known = false;
  let count = 0;
  for (const { ipam } of parts) {
    if (!ipam.known) continue;
    known = true;
    count += ipam.ips.size;
  }
  return known ? count : null;
}
