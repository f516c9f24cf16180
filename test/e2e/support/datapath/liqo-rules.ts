// The nftables tables and routes that Liqo v1.2.0 installs on a cluster's gateways and nodes, generated from the same
// Liqo objects the tests give the product (Configurations, the hub's IPs): one truth for both. Pure: text and route
// lists, no I/O. Each generator names the Liqo source that forges the FirewallConfiguration or RouteConfiguration it
// stands for, and the nft text carries the same name as a rule comment, so `nft list ruleset` in a namespace says
// where each rule comes from. Liqo's firewall controller renders a NatRule whose `to` is a CIDR as a prefix NAT
// (pkg/firewall/utils/natrule.go applyNatSubnet: NAT with the Prefix flag, `dnat prefix to`), an address as a plain
// NAT (applyNatIP), and a subnet match as `ip saddr/daddr CIDR`, an interface match as `iifname`/`oifname`.
// What is simplified compared with a real Liqo cluster is listed in docs/testing.md (Data path).

/** The fields of a Liqo Configuration (apis/networking/v1beta1/configuration_types.go) that the data path uses. */
export interface LiqoConfiguration {
  /** The configuration's name: Liqo names its masquerade-bypass table after it. */
  readonly name: string;
  /** Label liqo.io/remote-cluster-id. */
  readonly peer: string;
  readonly localPod: readonly string[];
  readonly localExternal: readonly string[];
  /** spec.remote.cidr: the peer's networks as the peer declares them. */
  readonly remotePod: readonly string[];
  readonly remoteExternal: readonly string[];
  /** status.remote.cidr: where this cluster sees them (remapped when they collide). */
  readonly remotePodView: readonly string[];
  readonly remoteExternalView: readonly string[];
}

/** The fields of an ipam.liqo.io/v1alpha1 IP (apis/ipam/v1alpha1/ip_types.go) that the data path uses. */
export interface LiqoIp {
  readonly name: string;
  readonly namespace: string;
  readonly ip: string;
  /** status.ip: the address allocated in the external CIDR (ipamutils.GetRemappedIP). */
  readonly remapped: string;
}

type Json = Record<string, unknown>;

function field(object: unknown, path: readonly string[]): unknown {
  let at: unknown = object;
  for (const key of path) at = typeof at === 'object' && at !== null ? (at as Json)[key] : undefined;
  return at;
}

function strings(object: unknown, path: readonly string[]): string[] {
  const value = field(object, path);
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function text(object: unknown, path: readonly string[]): string {
  const value = field(object, path);
  if (typeof value !== 'string' || value === '') throw new Error(`Liqo object lacks ${path.join('.')}`);
  return value;
}

export function decodeConfiguration(object: unknown): LiqoConfiguration {
  return {
    name: text(object, ['metadata', 'name']),
    peer: text(object, ['metadata', 'labels', 'liqo.io/remote-cluster-id']),
    localPod: strings(object, ['spec', 'local', 'cidr', 'pod']),
    localExternal: strings(object, ['spec', 'local', 'cidr', 'external']),
    remotePod: strings(object, ['spec', 'remote', 'cidr', 'pod']),
    remoteExternal: strings(object, ['spec', 'remote', 'cidr', 'external']),
    remotePodView: strings(object, ['status', 'remote', 'cidr', 'pod']),
    remoteExternalView: strings(object, ['status', 'remote', 'cidr', 'external']),
  };
}

export function decodeIp(object: unknown): LiqoIp {
  return {
    name: text(object, ['metadata', 'name']),
    namespace: text(object, ['metadata', 'namespace']),
    ip: text(object, ['spec', 'ip']),
    remapped: text(object, ['status', 'ip']),
  };
}

/** Liqo's names (pkg/gateway/tunnel/const.go, netlink.go; the gateway pod's own interface). */
export const TUNNEL_INTERFACE = 'liqo-tunnel';
export const DEFAULT_INTERFACE = 'eth0';
export const SERVER_INTERFACE_IP = '169.254.18.1';
export const CLIENT_INTERFACE_IP = '169.254.18.2';

const CIDR_SOURCE = 'liqo/pkg/liqo-controller-manager/networking/external-network/remapping/cidr.go';
const IP_SOURCE = 'liqo/pkg/liqo-controller-manager/networking/external-network/remapping/ip.go';
const BYPASS_SOURCE = 'liqo/pkg/liqo-controller-manager/networking/internal-network/configuration-controller/firewall.go';
const GATEWAY_ROUTE_SOURCE = 'liqo/pkg/liqo-controller-manager/networking/external-network/route/k8s.go';
const NODE_ROUTE_SOURCE = 'liqo/pkg/liqo-controller-manager/networking/internal-network/internalfabric-controller/route.go';

function quoted(comment: string): string {
  return `comment "${comment}"`;
}

function first(cidr: string): string {
  // pkg/utils/ipam/ips.go GetUnknownSourceIP: NetFirstAndLastIP's first address (the network address itself).
  return cidr.split('/')[0] ?? cidr;
}

/** The primary CIDR of a list (pkg/utils/cidr GetPrimary: the first). */
function primary(list: readonly string[], what: string): string {
  const value = list[0];
  if (value === undefined) throw new Error(`Configuration has no ${what}`);
  return value;
}

/**
 * `remap-podcidr` or `remap-externalcidr` on the gateway for `cfg.peer` (cidr.go forgeCIDRFirewallConfigurationSpec):
 * chain `outgoing` (prerouting, dstnat): traffic not from eth0 nor the tunnel to the local view of the peer's network
 * goes to the peer's own addresses; chain `incoming` (postrouting, srcnat): traffic from the tunnel from the peer's own
 * addresses, not leaving by eth0, comes from the local view. Pairs whose spec equals status are skipped (no rules).
 */
export function remapCidrTable(cfg: LiqoConfiguration, kind: 'pod' | 'external'): string {
  const [spec, status] = kind === 'pod' ? [cfg.remotePod, cfg.remotePodView] : [cfg.remoteExternal, cfg.remoteExternalView];
  const name = kind === 'pod' ? 'remap-podcidr' : 'remap-externalcidr';
  const dnat: string[] = [];
  const snat: string[] = [];
  spec.forEach((declared, i) => {
    const view = status[i];
    if (view === undefined || view === declared) return;
    dnat.push(`ip daddr ${view} iifname != "${DEFAULT_INTERFACE}" iifname != "${TUNNEL_INTERFACE}" dnat prefix to ${declared} ${quoted(CIDR_SOURCE)}`);
    snat.push(`oifname != "${DEFAULT_INTERFACE}" ip saddr ${declared} iifname "${TUNNEL_INTERFACE}" snat prefix to ${view} ${quoted(CIDR_SOURCE)}`);
  });
  return [
    `table ip ${name} {`,
    '  chain outgoing {',
    '    type nat hook prerouting priority dstnat; policy accept;',
    ...dnat.map((rule) => `    ${rule}`),
    '  }',
    '  chain incoming {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    ...snat.map((rule) => `    ${rule}`),
    '  }',
    '}',
  ].join('\n');
}

/**
 * `<ip>-remap-ipmapping-gw-<namespace>` for each IP of the cluster, on every gateway (ip.go enforceFirewallConfigurationSpec,
 * labels ForgeFirewallTargetLabelsIPMappingGw: category gateway, no single target): prerouting DNAT of the allocated
 * address to the pod's, postrouting SNAT of the allocated address to the pod's.
 */
export function ipMappingTable(ip: LiqoIp): string {
  return [
    `table ip ${ip.name}-remap-ipmapping-gw-${ip.namespace} {`,
    '  chain prerouting {',
    '    type nat hook prerouting priority dstnat; policy accept;',
    `    ip daddr ${ip.remapped} dnat to ${ip.ip} ${quoted(IP_SOURCE)}`,
    '  }',
    '  chain postrouting {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    `    ip saddr ${ip.remapped} snat to ${ip.ip} ${quoted(IP_SOURCE)}`,
    '  }',
    '}',
  ].join('\n');
}

/**
 * `<cfg>-masquerade-bypass` on every node (configuration-controller/firewall.go forgeFirewallNatRule, without full
 * masquerade): chain `pre-postrouting` (postrouting, srcnat - 1). Local pods to the peer's pods or external network:
 * a no-op SNAT onto their own CIDR (it keeps the CNI's masquerade off them); anything else to those networks: SNAT to
 * the "unknown source" address, the first of the local external CIDR.
 */
export function masqueradeBypassTable(cfg: LiqoConfiguration): string {
  const unknownSource = first(primary(cfg.localExternal, 'spec.local.cidr.external'));
  const rules: string[] = [];
  for (const local of cfg.localPod) {
    for (const remote of cfg.remotePodView) rules.push(`ip daddr ${remote} ip saddr ${local} snat prefix to ${local} ${quoted(BYPASS_SOURCE)}`);
  }
  const notLocal = cfg.localPod.map((local) => ` ip saddr != ${local}`).join('');
  for (const remote of cfg.remotePodView) rules.push(`ip daddr ${remote}${notLocal} snat to ${unknownSource} ${quoted(BYPASS_SOURCE)}`);
  const remoteExternal = cfg.remoteExternalView[0];
  if (remoteExternal !== undefined) {
    for (const local of cfg.localPod) rules.push(`ip daddr ${remoteExternal} ip saddr ${local} snat prefix to ${local} ${quoted(BYPASS_SOURCE)}`);
    rules.push(`ip daddr ${remoteExternal}${notLocal} snat to ${unknownSource} ${quoted(BYPASS_SOURCE)}`);
  }
  return [
    `table ip ${cfg.name}-masquerade-bypass {`,
    '  chain pre-postrouting {',
    '    type nat hook postrouting priority srcnat - 1; policy accept;',
    ...rules.map((rule) => `    ${rule}`),
    '  }',
    '}',
  ].join('\n');
}

export interface RouteSpec {
  readonly dst: string;
  readonly via: string;
  /** Only for packets that came in by this interface (a policy rule in front of a table of its own), as Liqo does. */
  readonly iif?: string;
  /** Where the route comes from, for people reading `ip route` output and the docs. */
  readonly source: string;
}

/** The far end of the tunnel (pkg/gateway/tunnel/netlink.go GetRemoteInterfaceIP). */
export function tunnelPeer(mode: 'server' | 'client'): string {
  return mode === 'client' ? SERVER_INTERFACE_IP : CLIENT_INTERFACE_IP;
}

/**
 * The gateway for `cfg.peer` (external-network/route/k8s.go forgeMutateRouteConfiguration): the peer's declared pod
 * and external CIDRs through the far end of the tunnel (the server's address for a client gateway, and back), in a
 * table of the Configuration's own behind a rule `iif <the gateway's interface to a node>`: only traffic from the
 * cluster goes into the tunnel this way; what comes out of the tunnel follows the main table, whatever its
 * destination (the peers' external CIDRs are all 10.70.0.0/16 by default, the cluster's own included).
 */
export function gatewayRoutes(cfg: LiqoConfiguration, mode: 'server' | 'client', nodeInterface: string): RouteSpec[] {
  const via = tunnelPeer(mode);
  return [...cfg.remotePod, ...cfg.remoteExternal].map((dst) => ({ dst, via, iif: nodeInterface, source: GATEWAY_ROUTE_SOURCE }));
}

/**
 * Every node (internalfabric-controller/route.go ensureRouteConfiguration): each remote CIDR of the InternalFabric
 * for the peer (the Configuration's status: this cluster's views of the peer's pods and external network) via the
 * gateway's address on the node's link to it.
 */
export function nodeRoutes(cfg: LiqoConfiguration, gatewayAddress: string): RouteSpec[] {
  return [...cfg.remotePodView, ...cfg.remoteExternalView].map((dst) => ({ dst, via: gatewayAddress, source: NODE_ROUTE_SOURCE }));
}

/** All tables of the gateway for `cfg.peer`, as one `nft -f` input. */
export function gatewayRuleset(cfg: LiqoConfiguration, ips: readonly LiqoIp[]): string {
  return [remapCidrTable(cfg, 'pod'), remapCidrTable(cfg, 'external'), ...ips.map(ipMappingTable)].join('\n');
}

/** All tables of a node of a cluster with these Configurations. */
export function nodeRuleset(configurations: readonly LiqoConfiguration[]): string {
  return configurations.map(masqueradeBypassTable).join('\n');
}
