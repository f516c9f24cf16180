import { ipv4, ipv6, type AddressCodec, type Family } from './ip.ts';

/** A block of addresses: `network` is the first, `last` the last, both as integers of the family. */
interface Block<F extends Family, V extends number | bigint> {
  readonly family: F;
  readonly network: V;
  readonly last: V;
  readonly prefixLength: number;
  /** Canonical text, host bits cleared: what people see in logs and `explain`. */
  readonly text: string;
}

export type Ipv4Cidr = Block<'IPv4', number>;
export type Ipv6Cidr = Block<'IPv6', bigint>;
export type Cidr = Ipv4Cidr | Ipv6Cidr;

const PREFIX_LENGTH = /^(0|[1-9][0-9]{0,2})$/;

function block<F extends Family, V extends number | bigint>(
  codec: AddressCodec<V>, family: F, addressText: string, prefixText: string,
): Block<F, V> | undefined {
  if (!PREFIX_LENGTH.test(prefixText)) return undefined;
  const prefixLength = Number(prefixText);
  if (prefixLength > codec.bits) return undefined;
  const address = codec.parseLenient(addressText);
  if (address === undefined) return undefined;
  const network = codec.networkOf(address, prefixLength);
  return {
    family,
    network,
    last: codec.add(network, codec.lastOffset(prefixLength)),
    prefixLength,
    text: `${codec.format(network)}/${prefixLength}`,
  };
}

/**
 * Strict: dotted-decimal IPv4 without leading zeros or IPv6 without a zone, then `/` and a decimal length that fits
 * the family. Host bits are cleared, as Go's net.ParseCIDR (so Liqo) does; where they must be refused, see hasHostBits.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0 || slash !== text.lastIndexOf('/')) return undefined;
  const addressText = text.slice(0, slash);
  const prefixText = text.slice(slash + 1);
  return addressText.includes(':')
    ? block(ipv6, 'IPv6', addressText, prefixText)
    : block(ipv4, 'IPv4', addressText, prefixText);
}

/**
 * True when the address part of `text`, which parsed as `cidr`, is not the network itself (`10.63.0.1/16`). Liqo's
 * own records are read with host bits cleared, as Go's net.ParseCIDR does; a shortcut record with host bits set is
 * ambiguous about what its author meant, so its pair is refused instead.
 */
export function hasHostBits(text: string, cidr: Cidr): boolean {
  const addressText = text.slice(0, text.indexOf('/'));
  return cidr.family === 'IPv4' ? ipv4.parseLenient(addressText) !== cidr.network : ipv6.parseLenient(addressText) !== cidr.network;
}

/** True when `value` (an address of the block's family, as an integer) lies inside the block. */
export function within<V extends number | bigint>(block: { readonly network: V; readonly last: V }, value: V): boolean {
  return value >= block.network && value <= block.last;
}

/** True when `text` is a canonical address of the block's family inside it. */
export function containsAddress(cidr: Cidr, text: string): boolean {
  if (cidr.family === 'IPv4') {
    const value = ipv4.parseCanonical(text);
    return value !== undefined && within(cidr, value);
  }
  const value = ipv6.parseCanonical(text);
  return value !== undefined && within(cidr, value);
}

export function overlaps(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.network <= b.last && b.network <= a.last;
}

/** True when every address of `inner` lies in `outer`. */
export function encloses(outer: Cidr, inner: Cidr): boolean {
  return outer.family === inner.family && outer.network <= inner.network && inner.last <= outer.last;
}

/** Keeps the host bits of `address` (inside `source`) and swaps the network part for `target`'s. */
export function remapAddress<V extends number | bigint>(
  codec: AddressCodec<V>, address: V, source: { readonly network: V }, target: { readonly network: V },
): V {
  return codec.add(target.network, codec.subtract(address, source.network));
}

/**
 * Liqo's `RemapMask` (pkg/utils/ipam/mapping/ips.go): the host bits of `address` under `target`'s prefix length,
 * under `target`'s network. Every move of the stock path is one of these, as Liqo's own mappings are.
 */
export function moveInto<V extends number | bigint>(
  codec: AddressCodec<V>, address: V, target: { readonly network: V; readonly prefixLength: number },
): V {
  return codec.add(target.network, codec.subtract(address, codec.networkOf(address, target.prefixLength)));
}
