// Where a JSON object or array ends, without parsing it: how review-json.ts cuts oldObject out of a review.
//
// Two implementations with one answer. `endOfContainerScalar` is the specification: a byte loop over strings and
// brackets. container-end.wat does the same 64 bytes at a time with WebAssembly SIMD, as simdjson's first stage does;
// over the 19 KB oldObject of the bench's review the byte loop took about 27 µs of the webhook's 270 µs per review.
// The tests hold the two to the same answer on every input, valid JSON or not.
import { CONTAINER_END_WASM } from './container-end-wasm.ts';
import { WasmKernel } from './wasm-kernel.ts';

/** Deeper than any Kubernetes object; past it the scan gives up and JSON.parse reads the body as usual. */
export const MAX_DEPTH = 512;

// Byte classes. UTF-8 continuation bytes are 0x80 and above, so a multi-byte character never looks like a quote, a
// backslash or a bracket.
const OUTSIDE = new Uint8Array(256);
const PLAIN = 0;
const QUOTE = 1;
const OPEN = 2;
const CLOSE = 3;
const STRAY = 4;
OUTSIDE[0x22] = QUOTE;
OUTSIDE[0x7b] = OPEN;
OUTSIDE[0x5b] = OPEN;
OUTSIDE[0x7d] = CLOSE;
OUTSIDE[0x5d] = CLOSE;
OUTSIDE[0x5c] = STRAY;
const INSIDE = new Uint8Array(256);
const TEXT = 0;
const END = 1;
const ESCAPE = 2;
const INVALID = 3;
for (let byte = 0; byte < 0x20; byte++) INSIDE[byte] = INVALID;
INSIDE[0x22] = END;
INSIDE[0x5c] = ESCAPE;
/** `{` + 2 is `}`, `[` + 2 is `]`. */
const CLOSER_OFFSET = 2;

/**
 * The index just past the object or array that starts at `start`: strings skipped (escapes honoured), brackets
 * matched by kind. -1 when it does not end within the body, or when something JSON never has comes first: a raw
 * control character in a string (escaped or not), a backslash outside one, a bracket of the wrong kind, more than
 * MAX_DEPTH levels. Content JSON.parse would refuse for other reasons (a bad number, a missing comma) is not looked for.
 */
export function endOfContainerScalar(body: Uint8Array, start: number): number {
  const closers: number[] = [];
  const length = body.length;
  let i = start;
  while (i < length) {
    const byte = body[i] ?? 0;
    const kind = OUTSIDE[byte];
    i++;
    if (kind === PLAIN) continue;
    if (kind === QUOTE) {
      for (;;) {
        if (i >= length) return -1;
        const inside = INSIDE[body[i] ?? 0];
        if (inside === TEXT) i++;
        else if (inside === END) break;
        else if (inside === ESCAPE && i + 1 < length && (body[i + 1] ?? 0) >= 0x20) i += 2;
        else return -1;
      }
      i++;
    } else if (kind === OPEN) {
      if (closers.length === MAX_DEPTH) return -1;
      closers.push(byte + CLOSER_OFFSET);
    } else if (kind === CLOSE) {
      if (closers.pop() !== byte) return -1;
      if (closers.length === 0) return i;
    } else {
      return -1;
    }
  }
  return -1;
}

/** Where container-end.wat reads its input; below it, its bracket stack of MAX_DEPTH bytes (both fixed there too). */
const INPUT_OFFSET = 1024;
/** Spaces after the input: the kernel reads whole 64-byte blocks. */
const PADDING = 64;
const SPACE = 0x20;

const kernel = WasmKernel.load(CONTAINER_END_WASM, 'endOfContainer');

/** `endOfContainerScalar`, 64 bytes at a time when WebAssembly SIMD is there. `body[start]` must be `{` or `[`. */
export function endOfContainer(body: Uint8Array, start: number): number {
  const input = body.subarray(start);
  if (kernel === undefined || !kernel.write(input, INPUT_OFFSET, PADDING, SPACE)) return endOfContainerScalar(body, start);
  const end = kernel.run(input.length);
  return end < 0 ? -1 : start + end;
}

/** True when the SIMD kernel is in use: for the tests, which must know what they compare. */
export function usesKernel(): boolean {
  return kernel !== undefined;
}
