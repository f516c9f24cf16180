// The shortcut operator's ForeignClusterConnection (the record of a leaf-to-leaf shortcut, kept on the hub), decoded
// from untrusted JSON.
import { field, isObject, objectAt, stringField, type JsonObject } from './json.ts';
import { refOf } from './object-name.ts';

export const FCC_GROUP = 'networking.liqo.io';
export const FCC_VERSION = 'v1beta1';
export const FCC_KIND = 'ForeignClusterConnection';
export const FCC_PLURAL = 'foreignclusterconnections';

/** One leaf's view of the other leaf's pods: where they appear via the hub, and via the shortcut. */
export interface SideNetworking {
  readonly podCIDR: string | undefined;
  readonly remappedPodCIDR: string | undefined;
}

export interface ForeignClusterConnection {
  /** `namespace/name`: how logs, metrics and `explain` name the shortcut. */
  readonly ref: string;
  readonly clusterA: string | undefined;
  readonly clusterB: string | undefined;
  readonly isConnected: boolean;
  readonly phase: string | undefined;
  readonly sideA: SideNetworking | undefined;
  readonly sideB: SideNetworking | undefined;
}

/** An object of Liqo's networking API group of this kind, in any version. */
export function isLiqoNetworkingObject(value: unknown, kind: string): value is JsonObject {
  return isObject(value) && stringField(value, 'kind') === kind
    && (stringField(value, 'apiVersion') ?? '').startsWith(`${FCC_GROUP}/`);
}

export function isFccObject(value: unknown): value is JsonObject {
  return isLiqoNetworkingObject(value, FCC_KIND);
}

function side(status: JsonObject | undefined, key: string): SideNetworking | undefined {
  const networking = status === undefined ? undefined : objectAt(status, key);
  if (networking === undefined) return undefined;
  return { podCIDR: stringField(networking, 'podCIDR'), remappedPodCIDR: stringField(networking, 'remappedPodCIDR') };
}

/**
 * Reads what the webhook needs and nothing else; every field is optional on the wire, and a missing one becomes a
 * reason later (not-this-cluster, not-connected, invalid-cidr) instead of an error here.
 */
export function decodeFcc(object: JsonObject, fallbackName = ''): ForeignClusterConnection {
  const spec = objectAt(object, 'spec');
  const status = objectAt(object, 'status');
  return {
    ref: refOf(object, fallbackName),
    clusterA: spec && nonEmpty(stringField(spec, 'foreignClusterA')),
    clusterB: spec && nonEmpty(stringField(spec, 'foreignClusterB')),
    isConnected: status !== undefined && field(status, 'isConnected') === true,
    phase: status && stringField(status, 'phase'),
    sideA: side(status, 'foreignClusterANetworking'),
    sideB: side(status, 'foreignClusterBNetworking'),
  };
}

function sameSide(a: SideNetworking | undefined, b: SideNetworking | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.podCIDR === b.podCIDR && a.remappedPodCIDR === b.remappedPodCIDR);
}

/** Same decoded fields: everything else on the object (lastUpdated, networking, resourceVersion) changes no pair. */
export function sameFcc(a: ForeignClusterConnection, b: ForeignClusterConnection): boolean {
  return a.ref === b.ref && a.clusterA === b.clusterA && a.clusterB === b.clusterB && a.isConnected === b.isConnected
    && a.phase === b.phase && sameSide(a.sideA, b.sideA) && sameSide(a.sideB, b.sideB);
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === '' ? undefined : text;
}
