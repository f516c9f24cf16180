// What makes an object a reflected EndpointSlice this webhook may rewrite, narrowed from untrusted JSON.
import type { HUB_NOT_READ_REASON } from './hubs.ts';
import type { Family } from './ip.ts';
import { field, isArray, isObject, objectField, stringField, type Json, type JsonObject } from './json.ts';
import { namespacedName } from './object-name.ts';
import type { RecordCheck } from './trust.ts';

export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const REFLECTION_MANAGER = 'endpointslice.reflection.liqo.io';
export const DESTINATION_LABEL = 'offloading.liqo.io/destination';
/** The hub that reflected the slice (Liqo's `LiqoOriginClusterIDKey`). */
export const ORIGIN_LABEL = 'offloading.liqo.io/origin';
/**
 * Liqo's hub-routed failover companion of a direct-connections slice (liqotech/liqo PR #3323, 49431f99:
 * pkg/virtualKubelet/forge/endpointslices.go `IndirectEndpointSliceLabelKey`, copied onto the leaf's slice by the
 * ShadowEndpointSlice controller's labels.Merge). It exists to carry traffic through the hub: never rewritten.
 */
export const INDIRECT_SLICE_LABEL = 'liqo.io/indirect-endpointslice';
export const SHORTCUT_ADDRESSES_ANNOTATION = 'liqo.io/shortcut-addresses';
export const ORIGINAL_ADDRESSES_ANNOTATION = 'liqo.io/shortcut-original-addresses';
export const ENDPOINT_SLICE_API_VERSION = 'discovery.k8s.io/v1';
export const ENDPOINT_SLICE_KIND = 'EndpointSlice';

export type SkipReason =
  | 'not-endpointslice' | 'not-reflected' | 'indirect-slice' | 'unsupported-address-type' | 'unknown-cluster'
  | 'malformed' | 'annotations-too-large' | typeof HUB_NOT_READ_REASON;

export interface SliceSkip {
  readonly skip: SkipReason;
  readonly detail: string;
}

/** A reflected slice, as received, with the parts the rewrite reads already narrowed. */
export interface ReflectedSlice {
  readonly object: JsonObject;
  readonly family: Family;
  /** The local cluster `L` (docs/reference.md, "Pairs"): the destination label, else the configured cluster ID. */
  readonly clusterId: string;
  /** The hub that reflected it (`offloading.liqo.io/origin`), if labelled. */
  readonly origin: string | undefined;
  /** Undefined when the slice has no annotations map (or a null one). */
  readonly annotations: JsonObject | undefined;
  /** Empty when the slice has none (a Service without ready pods). */
  readonly endpoints: readonly Json[];
}

function skip(reason: SkipReason, detail: string): SliceSkip {
  return { skip: reason, detail };
}

export function isSkip<T extends object>(value: T | SliceSkip): value is SliceSkip {
  return 'skip' in value;
}

export function sliceName(object: unknown): string {
  const metadata = isObject(object) ? objectField(object, 'metadata') : undefined;
  const name = metadata && stringField(metadata, 'name');
  const namespace = metadata && stringField(metadata, 'namespace');
  return namespacedName(namespace, name ?? '(unnamed)');
}

/**
 * Items of a typed list (`kubectl get endpointslices -o json`, the API's EndpointSliceList) carry no apiVersion or
 * kind; the rewrite checks both, so they are put back, never overriding what an item does say.
 */
export function asEndpointSlice(item: unknown): unknown {
  if (!isObject(item) || (Object.hasOwn(item, 'apiVersion') && Object.hasOwn(item, 'kind'))) return item;
  return { apiVersion: ENDPOINT_SLICE_API_VERSION, kind: ENDPOINT_SLICE_KIND, ...item };
}

/** The product's own field manager, on every write it makes: a write of its own carries records it may trust. */
export const PRODUCT_FIELD_MANAGER = 'shortcut-webhook';

/** The field manager of Liqo's own EndpointSlice writer (shadowendpointslice_controller.go `ctrlFieldManager`). */
export const LIQO_WRITER_MANAGER = 'shadow-endpointslice-controller';

export interface SliceOptions {
  /** Used when the slice has no destination label. */
  readonly clusterId?: string | undefined;
  /**
   * Every address is as its writer sent it, none an output of the stock path: its originals entries are not read (the
   * annotation is written anew). True for a write of Liqo's own writer (LIQO_WRITER_MANAGER), which forges the endpoints
   * from the ShadowEndpointSlice, never from the stored slice: an entry that names one of its addresses is left from
   * an earlier write of ours (our controller's field survives Liqo's server-side apply) and would turn an address
   * Liqo now sends itself (a Service with `liqo.io/use-direct-connections`) back into a stale hub address. The FCC
   * path's entries are read as ever. Should another mutating webhook make the API server call this one again on such
   * a write, a resolved address is stored without its entry until Liqo's next write (docs/deploy.md).
   */
  readonly addressesAsSent?: boolean | undefined;
  /** How the original-addresses record is checked besides its spaces (trust.ts); absent: the spaces alone. */
  readonly records?: RecordCheck | undefined;
}

/**
 * What makes an object one of Liqo's reflected ones, EndpointSlice or ShadowEndpointSlice alike: its metadata, the
 * reflection's managed-by label, and not Liqo's indirect companion (PR #3323); then a reader of its labels.
 */
export function readReflection(object: JsonObject):
  | { readonly metadata: JsonObject; readonly label: (key: string) => string | undefined }
  | { readonly skip: 'malformed' | 'not-reflected' | 'indirect-slice'; readonly detail: string } {
  const metadata = objectField(object, 'metadata');
  if (metadata === undefined) return { skip: 'malformed', detail: 'metadata is missing or not an object' };
  const labelField = field(metadata, 'labels');
  if (labelField !== undefined && labelField !== null && !isObject(labelField)) return { skip: 'malformed', detail: 'metadata.labels is not an object' };
  // Absent and null read as no labels at all.
  const label = (key: string): string | undefined => (isObject(labelField) ? stringField(labelField, key) : undefined);
  const manager = label(MANAGED_BY_LABEL);
  if (manager !== REFLECTION_MANAGER) return { skip: 'not-reflected', detail: `${MANAGED_BY_LABEL} is ${manager ?? 'unset'}` };
  if (label(INDIRECT_SLICE_LABEL) === 'true') {
    return { skip: 'indirect-slice', detail: `${INDIRECT_SLICE_LABEL} is "true": Liqo's failover path through the hub` };
  }
  return { metadata, label };
}

export function readReflectedSlice(object: unknown, options: SliceOptions = {}): ReflectedSlice | SliceSkip {
  if (!isObject(object)) return skip('not-endpointslice', 'the object is not a JSON object');
  const apiVersion = stringField(object, 'apiVersion');
  const kind = stringField(object, 'kind');
  if (apiVersion !== ENDPOINT_SLICE_API_VERSION || kind !== ENDPOINT_SLICE_KIND) {
    return skip('not-endpointslice', `${apiVersion ?? '?'} ${kind ?? '?'} is not ${ENDPOINT_SLICE_API_VERSION} ${ENDPOINT_SLICE_KIND}`);
  }
  const reflected = readReflection(object);
  if ('skip' in reflected) return reflected;
  const { metadata, label } = reflected;
  const addressType = stringField(object, 'addressType');
  if (addressType !== 'IPv4' && addressType !== 'IPv6') {
    return skip('unsupported-address-type', `addressType ${addressType ?? 'unset'} is not IPv4 or IPv6`);
  }
  const annotations = field(metadata, 'annotations');
  if (annotations !== undefined && annotations !== null && !isObject(annotations)) {
    return skip('malformed', 'metadata.annotations is not an object');
  }
  const endpoints = field(object, 'endpoints');
  if (endpoints !== undefined && endpoints !== null && !isArray(endpoints)) return skip('malformed', 'endpoints is not an array');
  const clusterId = label(DESTINATION_LABEL) || options.clusterId;
  if (!clusterId) return skip('unknown-cluster', `no ${DESTINATION_LABEL} label and no --cluster-id`);
  return {
    object,
    family: addressType,
    clusterId,
    origin: label(ORIGIN_LABEL) || undefined,
    annotations: isObject(annotations) ? annotations : undefined,
    endpoints: isArray(endpoints) ? endpoints : [],
  };
}
