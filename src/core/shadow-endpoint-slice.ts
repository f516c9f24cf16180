// What makes an object a ShadowEndpointSlice the hub's virtual kubelet reflected with Liqo's direct connections, and
// how Liqo reads its `liqo.io/direct-connections-data` annotation, narrowed from untrusted JSON. Shapes from
// liqotech/liqo v1.2.0 (e9f4428d): apis/offloading/v1beta1/shadowendpointslice_types.go (the slice lives in
// `spec.template`), pkg/virtualKubelet/forge/{endpointslices,meta}.go (labels) and pkg/utils/directconnection (the
// annotation: `{"clusterAddresses":{"<cluster>":["<hub-view address>",...]}}`, read with Go's encoding/json).
import { DESTINATION_LABEL, ORIGIN_LABEL, readReflection } from './endpoint-slice.ts';
import { HUB_NOT_READ_REASON } from './hubs.ts';
import type { Family } from './ip.ts';
import { field, isArray, isObject, stringField, type Json, type JsonObject } from './json.ts';

export const SHADOW_GROUP = 'offloading.liqo.io';
export const SHADOW_VERSION = 'v1beta1';
export const SHADOW_API_VERSION = `${SHADOW_GROUP}/${SHADOW_VERSION}`;
export const SHADOW_KIND = 'ShadowEndpointSlice';
export const SHADOW_PLURAL = 'shadowendpointslices';

/** Liqo's own list of listed addresses per cluster (pkg/consts `DirectConnectionDataAnnotationKey`). */
export const DIRECT_CONNECTIONS_DATA_ANNOTATION = 'liqo.io/direct-connections-data';
/** `{"<out>":"<in>"}` for each address the repair replaced: distinct from the EndpointSlice route's key, as Liqo copies shadow annotations onto the EndpointSlice. */
export const SHADOW_ORIGINAL_ADDRESSES_ANNOTATION = 'liqo.io/shortcut-shadow-original-addresses';
/** The data annotation exactly as the hub wrote it, while the repair changed it. */
export const ORIGINAL_DIRECT_CONNECTIONS_DATA_ANNOTATION = 'liqo.io/shortcut-original-direct-connections-data';

export type ShadowSkipReason =
  | 'not-shadowendpointslice' | 'not-reflected' | 'indirect-slice' | 'unknown-hub' | 'unsupported-address-type'
  | 'unknown-cluster' | 'malformed' | typeof HUB_NOT_READ_REASON;

export const SHADOW_SKIP_REASONS: readonly ShadowSkipReason[] = [
  'not-shadowendpointslice', 'not-reflected', 'indirect-slice', 'unknown-hub', 'unsupported-address-type', 'unknown-cluster', 'malformed',
  HUB_NOT_READ_REASON,
];

export interface ShadowSkip {
  readonly skip: ShadowSkipReason;
  readonly detail: string;
}

/** A reflected shadow, as received, with the parts the repair reads already narrowed. */
export interface ReflectedShadow {
  readonly object: JsonObject;
  readonly family: Family;
  /** The leaf `L`: the destination label, else the configured cluster ID. */
  readonly clusterId: string;
  /** The hub `H` that reflected it (`offloading.liqo.io/origin`): Liqo's controller refuses a shadow without it. */
  readonly hub: string;
  /** Undefined when the shadow has no annotations map (or a null one). */
  readonly annotations: JsonObject | undefined;
  /** `spec.template.endpoints`; empty when absent. */
  readonly endpoints: readonly Json[];
}

function skip(reason: ShadowSkipReason, detail: string): ShadowSkip {
  return { skip: reason, detail };
}

export function isShadowSkip<T extends object>(value: T | ShadowSkip): value is ShadowSkip {
  return 'skip' in value;
}

export function isShadowEndpointSliceObject(value: unknown): value is JsonObject {
  return isObject(value) && stringField(value, 'apiVersion') === SHADOW_API_VERSION && stringField(value, 'kind') === SHADOW_KIND;
}

/** Items of a ShadowEndpointSliceList carry no apiVersion or kind: put back, never overriding what an item says. */
export function asShadowEndpointSlice(item: unknown): unknown {
  if (!isObject(item) || (Object.hasOwn(item, 'apiVersion') && Object.hasOwn(item, 'kind'))) return item;
  return { apiVersion: SHADOW_API_VERSION, kind: SHADOW_KIND, ...item };
}

export interface ShadowOptions {
  /** Used when the shadow has no destination label. */
  readonly clusterId?: string | undefined;
}

export function readReflectedShadow(object: unknown, options: ShadowOptions = {}): ReflectedShadow | ShadowSkip {
  if (!isObject(object)) return skip('not-shadowendpointslice', 'the object is not a JSON object');
  const apiVersion = stringField(object, 'apiVersion');
  const kind = stringField(object, 'kind');
  if (apiVersion !== SHADOW_API_VERSION || kind !== SHADOW_KIND) {
    return skip('not-shadowendpointslice', `${apiVersion ?? '?'} ${kind ?? '?'} is not ${SHADOW_API_VERSION} ${SHADOW_KIND}`);
  }
  const reflected = readReflection(object);
  if ('skip' in reflected) return skip(reflected.skip, reflected.detail);
  const { metadata, label } = reflected;
  const hub = label(ORIGIN_LABEL);
  if (!hub) return skip('unknown-hub', `no ${ORIGIN_LABEL} label: Liqo's controller does not map such a shadow either`);
  const specField = field(object, 'spec');
  if (specField !== undefined && specField !== null && !isObject(specField)) return skip('malformed', 'spec is not an object');
  const templateField = isObject(specField) ? field(specField, 'template') : undefined;
  if (templateField !== undefined && templateField !== null && !isObject(templateField)) return skip('malformed', 'spec.template is not an object');
  const template = isObject(templateField) ? templateField : undefined;
  const addressType = template && stringField(template, 'addressType');
  if (addressType !== 'IPv4' && addressType !== 'IPv6') {
    return skip('unsupported-address-type', `spec.template.addressType ${addressType ?? 'unset'} is not IPv4 or IPv6`);
  }
  const annotations = field(metadata, 'annotations');
  if (annotations !== undefined && annotations !== null && !isObject(annotations)) return skip('malformed', 'metadata.annotations is not an object');
  const endpoints = template && field(template, 'endpoints');
  if (endpoints !== undefined && endpoints !== null && !isArray(endpoints)) return skip('malformed', 'spec.template.endpoints is not an array');
  const clusterId = label(DESTINATION_LABEL) || options.clusterId;
  if (!clusterId) return skip('unknown-cluster', `no ${DESTINATION_LABEL} label and no --cluster-id`);
  return {
    object,
    family: addressType,
    clusterId,
    hub,
    annotations: isObject(annotations) ? annotations : undefined,
    endpoints: isArray(endpoints) ? endpoints : [],
  };
}

/** The annotation as Liqo reads it, with what is needed to write it back with only the listed addresses changed. */
export interface DirectConnectionsData {
  /** Listed addresses per cluster, in the order read (`null` lists and Go's zero string for a `null` element kept as Liqo has them). */
  readonly clusters: ReadonlyMap<string, readonly string[]>;
  /** The other top-level fields, in order, with the place of `clusterAddresses` among them: kept when written back. */
  readonly before: readonly (readonly [string, Json])[];
  readonly after: readonly (readonly [string, Json])[];
}

export type DataRead =
  | { readonly state: 'absent' }
  | { readonly state: 'invalid'; readonly detail: string }
  | { readonly state: 'read'; readonly data: DirectConnectionsData };

const FIELD = 'clusteraddresses';

/**
 * Go's encoding/json matches a JSON key to the struct field `clusterAddresses` case-insensitively with Unicode simple
 * folding (bytes.EqualFold): ASCII letters in either case, and `ſ` (U+017F) for `s`. No other letter of the name has
 * a non-ASCII fold.
 */
export function isClusterAddressesKey(key: string): boolean {
  if (key.length !== FIELD.length) return false;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    const lower = code >= 65 && code <= 90 ? code + 32 : code === 0x17f ? 115 : code;
    if (lower !== FIELD.charCodeAt(i)) return false;
  }
  return true;
}

function isStringList(list: readonly Json[]): list is readonly string[] {
  for (const item of list) if (typeof item !== 'string') return false;
  return true;
}

/**
 * Whether a key JSON.parse kept is spelled more than once in the text: JSON.parse keeps the last of a repeated key,
 * Go merges them. A quoted spelling elsewhere (a cluster named so) also counts: refused, never misread. Spellings
 * with escapes (`\u0063...`) are not seen.
 */
function spelledTwice(text: string, key: string): boolean {
  const quoted = JSON.stringify(key);
  const first = text.indexOf(quoted);
  return first >= 0 && text.indexOf(quoted, first + quoted.length) >= 0;
}

/**
 * The annotation as Go's json.Unmarshal into `ClusterAddresses` reads it (Liqo's controller errors, and so maps
 * nothing, where Go errors): the top level an object or `null`, every key folding to `clusterAddresses` merged in
 * order into one map (`null` resets it, as Go sets a nil map), each value a list of strings or `null` (empty), a `null`
 * element the empty string. Go merges a key repeated at the top level where JSON.parse keeps the last: such text is
 * not guessed at (invalid, left as it is).
 */
export function readDirectConnectionsData(text: Json | undefined): DataRead {
  if (text === undefined || text === null) return { state: 'absent' };
  if (typeof text !== 'string') return { state: 'invalid', detail: `${DIRECT_CONNECTIONS_DATA_ANNOTATION} is not a string` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { state: 'invalid', detail: `${DIRECT_CONNECTIONS_DATA_ANNOTATION} is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const clusters = new Map<string, readonly string[]>();
  const before: [string, Json][] = [];
  const after: [string, Json][] = [];
  if (parsed === null) return { state: 'read', data: { clusters, before, after } };
  if (!isObject(parsed)) return { state: 'invalid', detail: `${DIRECT_CONNECTIONS_DATA_ANNOTATION} is not a JSON object` };
  let seen = 0;
  for (const key of Object.keys(parsed)) {
    const value = parsed[key] ?? null;
    if (!isClusterAddressesKey(key)) {
      (seen === 0 ? before : after).push([key, value]);
      continue;
    }
    seen++;
    if (spelledTwice(text, key)) {
      return { state: 'invalid', detail: `the key ${key} is repeated: Go's encoding/json merges repeats, JSON.parse keeps the last; not guessed at` };
    }
    if (value === null) {
      clusters.clear();
      continue;
    }
    if (!isObject(value)) return { state: 'invalid', detail: `${key} is not an object of lists` };
    for (const cluster of Object.keys(value)) {
      const list = value[cluster] ?? null;
      if (list === null) {
        clusters.set(cluster, []);
        continue;
      }
      if (!isArray(list)) return { state: 'invalid', detail: `${key}.${cluster} is not a list` };
      // The list as parsed when it holds strings only (the hub's own writes); a copy only where a null is read as "".
      let addresses: readonly string[];
      if (isStringList(list)) addresses = list;
      else {
        const copy: string[] = [];
        for (const item of list) {
          if (item === null) copy.push('');
          else if (typeof item === 'string') copy.push(item);
          else return { state: 'invalid', detail: `${key}.${cluster} holds a ${typeof item === 'object' ? 'non-string' : typeof item}, not only strings` };
        }
        addresses = copy;
      }
      // A cluster repeated inside one map: Go decodes each into a fresh list, so the last wins, as JSON.parse has it.
      clusters.delete(cluster);
      clusters.set(cluster, addresses);
    }
  }
  return { state: 'read', data: { clusters, before, after } };
}

/**
 * The annotation with these lists: the other top-level fields kept, `clusterAddresses` once, where it first was.
 * Undefined when nothing is left (no list and no other field): the annotation is removed, as the hub writes none then.
 */
export function writeDirectConnectionsData(data: DirectConnectionsData, clusters: ReadonlyMap<string, readonly string[]>): string | undefined {
  if (clusters.size === 0 && data.before.length === 0 && data.after.length === 0) return undefined;
  let text = '{';
  for (const [key, value] of data.before) text += `${JSON.stringify(key)}:${JSON.stringify(value)},`;
  text += '"clusterAddresses":{';
  let first = true;
  for (const [cluster, addresses] of clusters) {
    text += `${first ? '' : ','}${JSON.stringify(cluster)}:${JSON.stringify(addresses)}`;
    first = false;
  }
  text += '}';
  for (const [key, value] of data.after) text += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return `${text}}`;
}
