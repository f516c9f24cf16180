// Strict IP text handling. ipaddr.js alone accepts `10.1`, hex and octal (`010.0.0.1` is 8.0.0.1), so IPv4 is
// parsed by hand and IPv6 text is screened before ipaddr.js sees it. Values are plain numbers (IPv4, as an
// unsigned 32-bit integer) and bigints (IPv6) so that the hot path allocates no address objects.
import ipaddr from 'ipaddr.js';

export type Family = 'IPv4' | 'IPv6';

/** How one family's addresses are read, written and laid out as integers. */
export interface AddressCodec<V extends number | bigint> {
  readonly family: Family;
  readonly bits: number;
  /** Only the canonical text form (what this codec would print); anything else is not an address to touch. */
  parseCanonical(text: string): V | undefined;
  /** Any unambiguous text form, for CIDRs written by people: IPv6 in upper case or uncompressed is fine. */
  parseLenient(text: string): V | undefined;
  format(value: V): string;
  /** The first address of the block of `prefixLength` that holds `value`. */
  networkOf(value: V, prefixLength: number): V;
  /** The number of addresses in a block of `prefixLength`, minus one: the last offset inside it. */
  lastOffset(prefixLength: number): V;
  add(value: V, offset: V): V;
  subtract(value: V, other: V): V;
}

const DOT = 46;
const ZERO = 48;
const NINE = 57;

export function parseIPv4(text: string): number | undefined {
  const length = text.length;
  if (length < 7 || length > 15) return undefined;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === DOT) {
      if (digits === 0 || ++dots > 3) return undefined;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      continue;
    }
    if (code < ZERO || code > NINE) return undefined;
    // A leading zero would be read as octal by some parsers and as decimal by others: refuse both readings.
    if (digits > 0 && octet === 0) return undefined;
    octet = octet * 10 + (code - ZERO);
    digits++;
    if (octet > 255) return undefined;
  }
  if (dots !== 3 || digits === 0) return undefined;
  return value * 256 + octet;
}

export function formatIPv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

const IPV6_LENIENT = /^[0-9a-fA-F:]{2,39}$/;
const IPV6_CANONICAL = /^[0-9a-f:]{2,39}$/;

function parseIPv6Text(text: string, screen: RegExp): bigint | undefined {
  if (!screen.test(text)) return undefined;
  // One parse, not isValid() then parse(): both run the same parser, and this is per address on the hot path.
  let parts: number[];
  try {
    parts = ipaddr.IPv6.parse(text).parts;
  } catch {
    return undefined;
  }
  let value = 0n;
  for (const part of parts) value = (value << 16n) | BigInt(part);
  return value;
}

function parseIPv6(text: string): bigint | undefined {
  return parseIPv6Text(text, IPV6_LENIENT);
}

/** RFC 5952: lower case, no leading zeros, the longest run (first on a tie) of two or more zero groups as `::`. */
export function formatIPv6(value: bigint): string {
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) { bestStart = i; bestLength = j - i; }
    i = j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

const IPV4_ALL = 0xffffffff;

export const ipv4: AddressCodec<number> = {
  family: 'IPv4',
  bits: 32,
  parseCanonical: parseIPv4,
  parseLenient: parseIPv4,
  format: formatIPv4,
  networkOf: (value, prefixLength) => value - (value % 2 ** (32 - prefixLength)),
  lastOffset: (prefixLength) => (prefixLength === 0 ? IPV4_ALL : 2 ** (32 - prefixLength) - 1),
  add: (value, offset) => value + offset,
  subtract: (value, other) => value - other,
};

const IPV6_ALL = (1n << 128n) - 1n;
/** By prefix length: a lookup masks an address once per prefix length in use, so the masks are made once. */
const IPV6_MASKS = Array.from({ length: 129 }, (_, prefixLength) => IPV6_ALL ^ ((1n << BigInt(128 - prefixLength)) - 1n));

export const ipv6: AddressCodec<bigint> = {
  family: 'IPv6',
  bits: 128,
  parseCanonical(text) {
    const value = parseIPv6Text(text, IPV6_CANONICAL);
    return value !== undefined && formatIPv6(value) === text ? value : undefined;
  },
  parseLenient: parseIPv6,
  format: formatIPv6,
  networkOf: (value, prefixLength) => value & (IPV6_MASKS[prefixLength] ?? 0n),
  lastOffset: (prefixLength) => (1n << BigInt(128 - prefixLength)) - 1n,
  add: (value, offset) => value + offset,
  subtract: (value, other) => value - other,
};
