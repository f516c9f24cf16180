// The hub's IPAM record of offloaded pods, decoded from untrusted JSON into the few fields the stock path reads.
// Shapes from liqotech/liqo v1.2.0 (e9f4428d): apis/ipam/v1alpha1/ip_types.go (`spec.ip`: the hub's view of the pod,
// `status.ip`: the address allocated to it in the hub's external CIDR) and pkg/liqo-controller-manager/ipmapping
// (one IP per offloaded pod, named after it, in its namespace, labelled with the pod's name and namespace).
import { ipv4, ipv6 } from './ip.ts';
import { isObject, objectAt, stringField, type JsonObject } from './json.ts';
import { labelOf } from './leaf-views.ts';
import { refOf } from './object-name.ts';

export const IPAM_GROUP = 'ipam.liqo.io';
export const IPAM_VERSION = 'v1alpha1';
export const IP_KIND = 'IP';
export const IP_PLURAL = 'ips';
/** pkg/liqo-controller-manager/ipmapping/label.go: only IPs of offloaded pods carry these. */
export const POD_NAME_LABEL = 'offloading.liqo.io/pod-name';
export const POD_NAMESPACE_LABEL = 'offloading.liqo.io/pod-namespace';

/**
 * One offloaded pod's allocation, compact: what §8 reads and nothing else, so 50,000 of them stay a few megabytes.
 * Addresses are kept as integers of their family, as the rewrite compares them.
 */
export type HubIp = {
  /** `namespace/name` of the IP object: what `explain` names. */
  readonly ref: string;
  readonly podName: string;
  readonly podNamespace: string;
} & (
  | { readonly family: 'IPv4'; readonly pod: number; readonly allocated: number }
  | { readonly family: 'IPv6'; readonly pod: bigint; readonly allocated: bigint }
);

export function isHubIpObject(value: unknown): value is JsonObject {
  return isObject(value) && stringField(value, 'apiVersion') === `${IPAM_GROUP}/${IPAM_VERSION}` && stringField(value, 'kind') === IP_KIND;
}

/**
 * An IP object of an offloaded pod with both addresses set, or undefined: not a pod's (no pod labels), not allocated
 * yet (no `status.ip`), or addresses of two families. Liqo writes `spec.ip`/`status.ip` as Go's net.IP text, which
 * is the canonical form; other text is not trusted.
 */
export function decodeHubIp(object: JsonObject, fallbackName = ''): HubIp | undefined {
  const podName = labelOf(object, POD_NAME_LABEL);
  // The IP lives in its pod's namespace: without the namespace label, that namespace still names the pod's.
  const metadata = objectAt(object, 'metadata');
  const podNamespace = labelOf(object, POD_NAMESPACE_LABEL) ?? (metadata && stringField(metadata, 'namespace'));
  const spec = objectAt(object, 'spec');
  const status = objectAt(object, 'status');
  const podText = spec && stringField(spec, 'ip');
  const allocatedText = status && stringField(status, 'ip');
  if (podName === undefined || podNamespace === undefined || podText === undefined || allocatedText === undefined) return undefined;
  const ref = refOf(object, fallbackName);
  const pod4 = ipv4.parseCanonical(podText);
  const allocated4 = ipv4.parseCanonical(allocatedText);
  if (pod4 !== undefined && allocated4 !== undefined) return { ref, podName, podNamespace, family: 'IPv4', pod: pod4, allocated: allocated4 };
  const pod6 = ipv6.parseCanonical(podText);
  const allocated6 = ipv6.parseCanonical(allocatedText);
  if (pod6 !== undefined && allocated6 !== undefined) return { ref, podName, podNamespace, family: 'IPv6', pod: pod6, allocated: allocated6 };
  return undefined;
}

export function sameHubIp(a: HubIp, b: HubIp): boolean {
  return a.ref === b.ref && a.podName === b.podName && a.podNamespace === b.podNamespace && a.family === b.family
    && a.pod === b.pod && a.allocated === b.allocated;
}

/** Hub IPs by allocated address, per family: what step 2 of the resolution looks up. */
export interface HubIpIndex {
  readonly size: number;
  readonly ipv4: ReadonlyMap<number, readonly HubIp[]>;
  readonly ipv6: ReadonlyMap<bigint, readonly HubIp[]>;
  /**
   * The same IPs by the hub's view of the pod (`spec.ip`): where a ShadowEndpointSlice's direct connection takes the
   * hub path, the address the hub would have reflected is looked up as Liqo's virtual kubelet does
   * (MapEndpointIPFromIPResource). The entries are the ones above, not copies.
   */
  readonly byPod: { readonly ipv4: ReadonlyMap<number, readonly HubIp[]>; readonly ipv6: ReadonlyMap<bigint, readonly HubIp[]> };
}

export function indexHubIps(ips: Iterable<HubIp>): HubIpIndex {
  const ipv4Index = new Map<number, HubIp[]>();
  const ipv6Index = new Map<bigint, HubIp[]>();
  const ipv4ByPod = new Map<number, HubIp[]>();
  const ipv6ByPod = new Map<bigint, HubIp[]>();
  let size = 0;
  const add = <V>(index: Map<V, HubIp[]>, key: V, ip: HubIp) => {
    const list = index.get(key);
    if (list === undefined) index.set(key, [ip]); else list.push(ip);
  };
  for (const ip of ips) {
    size++;
    if (ip.family === 'IPv4') {
      add(ipv4Index, ip.allocated, ip);
      add(ipv4ByPod, ip.pod, ip);
    } else {
      add(ipv6Index, ip.allocated, ip);
      add(ipv6ByPod, ip.pod, ip);
    }
  }
  return { size, ipv4: ipv4Index, ipv6: ipv6Index, byPod: { ipv4: ipv4ByPod, ipv6: ipv6ByPod } };
}
