// The e2e suites' shared world: where its objects live on the real API servers, the writers' field managers, and how
// long a wait may take. One place, so that the suites cannot drift apart on them.

/** The leaf's reflected EndpointSlices and ShadowEndpointSlices, in namespace demo. */
export const SLICES = '/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices';
export const SHADOWS = '/apis/offloading.liqo.io/v1beta1/namespaces/demo/shadowendpointslices';
/** The hub's ForeignClusterConnections. */
export const FCC_PATH = '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections';

/** The leaf's Connection to a peer, as Liqo's gateway names it (gw-<peer> in liqo-tenant-<peer>). */
export function connectionPath(peer: string): string {
  return `/apis/networking.liqo.io/v1beta1/namespaces/liqo-tenant-${peer}/connections/gw-${peer}`;
}

/** Liqo's writer's field manager (shadowendpointslice_controller.go ctrlFieldManager). */
export const LIQO_MANAGER = 'shadow-endpointslice-controller';
/** The hub's virtual kubelet, as the field manager of the ShadowEndpointSlices the tests write. */
export const HUB_WRITER = 'liqo-virtual-kubelet';

/** Waits on real API servers and real processes: generous bounds, never reached when things work. */
export const CONVERGE = { timeoutMs: 30_000, intervalMs: 25 } as const;
