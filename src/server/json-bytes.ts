// The bytes of JSON text that the scans of review-json.ts look for. In UTF-8, every byte of a multi-byte character is
// 0x80 or above, so none of these is ever part of one.
export const BYTE = {
  quote: 0x22,
  backslash: 0x5c,
  comma: 0x2c,
  colon: 0x3a,
  openObject: 0x7b,
  closeObject: 0x7d,
  openArray: 0x5b,
  closeArray: 0x5d,
  minus: 0x2d,
  plus: 0x2b,
  dot: 0x2e,
  zero: 0x30,
  nine: 0x39,
} as const;

/** JSON's four whitespace characters; no other (not a form feed, not a no-break space) may stand between tokens. */
export function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

export function skipWhitespace(body: Uint8Array, at: number): number {
  let i = at;
  while (isWhitespace(body[i])) i++;
  return i;
}
