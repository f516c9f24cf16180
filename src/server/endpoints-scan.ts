// An EndpointSlice's `endpoints` array read from JSON bytes as the rewrite reads it, checked as strictly as JSON.parse
// checks it: how review-json.ts avoids building the hundreds of objects and strings of the endpoints it never reads.
//
// JSON.parse of a review's object was the largest single cost of a review (about 70 µs of the bench's 100-endpoint
// slice, nearly all of it in the endpoints: conditions, targetRef, nodeName, zone...). The rewrite reads one thing
// from an endpoint, its `addresses`. So the array is scanned here instead: every byte is checked against the JSON
// grammar (strings and their escapes, numbers, literals, commas, colons, brackets), and for each element the scan
// notes where the value of its last `addresses` key lies, when that value is an array. Only those small arrays are
// then read, by JSON.parse (`endpointsFrom`).
//
// `scanEndpointsScalar` is the specification (endpoints-scan.wat the same with SIMD); the caller must be able to fall back to JSON.parse on any refusal, because
// a refusal also covers what the scan does not handle (an escaped key inside an element, nesting past MAX_DEPTH, more
// than MAX_ENDPOINTS elements), not only what JSON.parse would refuse. The other direction is the one that matters:
// whatever the scan accepts, JSON.parse accepts too, with the same elements and addresses (the tests hold it to that).
import { isArray, isObject, type Json } from '../core/json.ts';
import { MAX_DEPTH } from './container-end.ts';
import { ENDPOINTS_SCAN_WASM } from './endpoints-scan-wasm.ts';
import { BYTE, skipWhitespace } from './json-bytes.ts';
import { WasmKernel } from './wasm-kernel.ts';

/** Kubernetes allows 1,000 endpoints per slice; past this many the scan leaves the array to JSON.parse. */
export const MAX_ENDPOINTS = 4096;

/**
 * Where each element's addresses are: `spans[2e]` and `spans[2e + 1]`, start and end of the array, or -1 and -1.
 * The spans are the scan's own buffer, valid until the next scan: a review reads them at once, and a fresh 32 KB
 * per review would be garbage for the collector.
 */
export interface EndpointsScan {
  /** Where the endpoints array opens. */
  readonly start: number;
  /** Just past the closing bracket of the endpoints array. */
  readonly end: number;
  readonly count: number;
  readonly spans: Int32Array;
}

function isDigit(byte: number): boolean {
  return byte >= BYTE.zero && byte <= BYTE.nine;
}

function isHex(byte: number): boolean {
  const lower = byte | 0x20;
  return isDigit(byte) || (lower >= 0x61 && lower <= 0x66);
}

/** The characters that may follow a backslash, other than `u`. */
const SHORT_ESCAPES = new Set([...'"\\/bfnrt'].map((character) => character.charCodeAt(0)));
const UNICODE_ESCAPE = 0x75;

/** Index past the string whose opening quote is at `at`, or -1. */
function stringEnd(body: Uint8Array, at: number): number {
  const length = body.length;
  let i = at + 1;
  while (i < length) {
    const byte = body[i] ?? 0;
    if (byte === BYTE.quote) return i + 1;
    if (byte < 0x20) return -1;
    if (byte !== BYTE.backslash) {
      i++;
      continue;
    }
    const next = body[i + 1] ?? 0;
    if (next === UNICODE_ESCAPE) {
      for (let k = 2; k < 6; k++) if (!isHex(body[i + k] ?? 0)) return -1;
      i += 6;
    } else if (SHORT_ESCAPES.has(next)) {
      i += 2;
    } else {
      return -1;
    }
  }
  return -1;
}

function digitsEnd(body: Uint8Array, at: number): number {
  let i = at;
  while (isDigit(body[i] ?? 0)) i++;
  return i === at ? -1 : i;
}

/** Index past the number at `at` (RFC 8259: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?), or -1. */
function numberEnd(body: Uint8Array, at: number): number {
  let i = at;
  if (body[i] === BYTE.minus) i++;
  if (body[i] === BYTE.zero) i++;
  else if (isDigit(body[i] ?? 0)) i = digitsEnd(body, i);
  else return -1;
  if (body[i] === BYTE.dot) {
    i = digitsEnd(body, i + 1);
    if (i < 0) return -1;
  }
  const exponent = (body[i] ?? 0) | 0x20;
  if (exponent === 0x65) {
    i++;
    if (body[i] === BYTE.plus || body[i] === BYTE.minus) i++;
    i = digitsEnd(body, i);
  }
  return i;
}

function holdsBackslash(body: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (body[i] === BYTE.backslash) return true;
  return false;
}

/** By first byte. */
const LITERALS = new Map(['true', 'false', 'null'].map((word) => [word.charCodeAt(0), Buffer.from(word)] as const));

function literalEnd(body: Uint8Array, at: number, word: Uint8Array): number {
  for (let k = 0; k < word.length; k++) if (body[at + k] !== word[k]) return -1;
  return at + word.length;
}

const ADDRESSES_KEY = Buffer.from('"addresses"');

function isAddressesKey(body: Uint8Array, start: number, end: number): boolean {
  if (end - start !== ADDRESSES_KEY.length) return false;
  for (let k = 1; k < ADDRESSES_KEY.length - 1; k++) if (body[start + k] !== ADDRESSES_KEY[k]) return false;
  return true;
}

const SPANS = new Int32Array(2 * MAX_ENDPOINTS);
/** Per open container, 1 for an object, 0 for an array; depth 1 is the endpoints array, 2 an element. */
const OBJECTS = new Uint8Array(MAX_DEPTH);

/**
 * The endpoints array whose `[` is at `start`, checked and located as described above; undefined when JSON.parse
 * would refuse it, when it is not an array, or when the scan does not handle it.
 */
export function scanEndpointsScalar(body: Uint8Array, start: number): EndpointsScan | undefined {
  if (body[start] !== BYTE.openArray) return undefined;
  const spans = SPANS;
  const objects = OBJECTS;
  let depth = 0;
  let count = 0;
  /** Where the array value of an element's `addresses` key opened, until it closes. */
  let addressesAt = -1;
  let i = start;
  // One state per loop turn: a value is expected at i, or a key, or what follows a value.
  const VALUE = 0;
  const KEY = 1;
  const AFTER = 2;
  let state = VALUE;
  for (;;) {
    if (state === KEY) {
      if (body[i] !== BYTE.quote) return undefined;
      const keyEnd = stringEnd(body, i);
      if (keyEnd < 0) return undefined;
      let isAddresses = false;
      if (depth === 2) {
        // JSON.parse would read an escaped key as the text it stands for: left to JSON.parse.
        if (holdsBackslash(body, i, keyEnd)) return undefined;
        isAddresses = isAddressesKey(body, i, keyEnd);
      }
      i = skipWhitespace(body, keyEnd);
      if (body[i] !== BYTE.colon) return undefined;
      i = skipWhitespace(body, i + 1);
      if (isAddresses) {
        // The last `addresses` key wins, as with JSON.parse; one whose value is not an array clears the span.
        spans[2 * count - 2] = -1;
        spans[2 * count - 1] = -1;
        if (body[i] === BYTE.openArray) addressesAt = i;
      }
      state = VALUE;
    } else if (state === VALUE) {
      const byte = body[i] ?? 0;
      if (depth === 1) {
        if (count === MAX_ENDPOINTS) return undefined;
        spans[2 * count] = -1;
        spans[2 * count + 1] = -1;
        count++;
      }
      if (byte === BYTE.openObject || byte === BYTE.openArray) {
        if (depth === MAX_DEPTH) return undefined;
        objects[depth++] = byte === BYTE.openObject ? 1 : 0;
        i = skipWhitespace(body, i + 1);
        // An empty container: its closing bracket is read as what follows a value, and only that (not a comma).
        const empty = body[i] === (byte === BYTE.openObject ? BYTE.closeObject : BYTE.closeArray);
        state = empty ? AFTER : byte === BYTE.openObject ? KEY : VALUE;
      } else {
        if (depth === 0) return undefined;
        const literal = LITERALS.get(byte);
        i = byte === BYTE.quote ? stringEnd(body, i) : literal === undefined ? numberEnd(body, i) : literalEnd(body, i, literal);
        if (i < 0) return undefined;
        state = AFTER;
      }
    } else {
      if (depth === 0) return { start, end: i, count, spans };
      i = skipWhitespace(body, i);
      const byte = body[i] ?? 0;
      const inObject = objects[depth - 1] === 1;
      if (byte === BYTE.comma) {
        i = skipWhitespace(body, i + 1);
        state = inObject ? KEY : VALUE;
      } else if (byte === (inObject ? BYTE.closeObject : BYTE.closeArray)) {
        depth--;
        i++;
        if (depth === 2 && addressesAt >= 0) {
          spans[2 * count - 2] = addressesAt;
          spans[2 * count - 1] = i;
          addressesAt = -1;
        }
      } else {
        return undefined;
      }
    }
  }
}

const ADDRESSES_OPEN = Buffer.from('{"addresses":');
const NULL_TEXT = Buffer.from('null');

function copyInto(target: Buffer, at: number, source: Uint8Array, start: number, end: number): number {
  let to = at;
  for (let i = start; i < end; i++) target[to++] = source[i] ?? 0;
  return to;
}

/** Only strings are addresses: anything else in the array becomes null, which the rewrite passes over. */
function onlyStrings(addresses: readonly unknown[]): Json[] | undefined {
  if (addresses.every((address) => typeof address === 'string')) return undefined;
  return addresses.map((address) => (typeof address === 'string' ? address : null));
}

/**
 * The endpoints as the rewrite reads them: an element whose last `addresses` key holds an array becomes
 * `{ addresses }` with its strings in place and null for anything else; every other element becomes null.
 *
 * Built by JSON.parse of `[{"addresses":<the array's own bytes>},null,...]`, not by object literals. JSON.parse
 * reads escapes and UTF-8 exactly as it would have in the whole body, and its objects carry no allocation site: built
 * as literals, the endpoints outlived a scavenge often enough under HTTP/2 (a review's body arrives over several
 * turns of the event loop) that V8 decided to allocate them straight in the old generation, and the webhook's heap
 * then grew by about 120 MB a second between full collections.
 */
export function endpointsFrom(body: Uint8Array, scan: EndpointsScan): readonly Json[] {
  // The addresses arrays lie inside the endpoints array: its length bounds theirs.
  const text = Buffer.allocUnsafe(scan.end - scan.start + scan.count * (ADDRESSES_OPEN.length + 2) + 2);
  let at = 0;
  text[at++] = BYTE.openArray;
  for (let e = 0; e < scan.count; e++) {
    if (e > 0) text[at++] = BYTE.comma;
    const start = scan.spans[2 * e] ?? -1;
    if (start < 0) {
      at = copyInto(text, at, NULL_TEXT, 0, NULL_TEXT.length);
      continue;
    }
    at = copyInto(text, at, ADDRESSES_OPEN, 0, ADDRESSES_OPEN.length);
    at = copyInto(text, at, body, start, scan.spans[2 * e + 1] ?? start);
    text[at++] = BYTE.closeObject;
  }
  text[at++] = BYTE.closeArray;
  const endpoints: unknown = JSON.parse(text.toString('utf8', 0, at));
  if (!isArray(endpoints)) return [];
  for (const endpoint of endpoints) {
    const addresses = isObject(endpoint) ? endpoint.addresses : undefined;
    const strings = isArray(addresses) ? onlyStrings(addresses) : undefined;
    if (strings !== undefined && isObject(endpoint)) Object.assign(endpoint, { addresses: strings });
  }
  return endpoints;
}

/** Where endpoints-scan.wat reads its input, the element count and the spans (fixed there too). */
const INPUT_OFFSET = 65_536;
const COUNT_OFFSET = 512;
const SPANS_OFFSET = 1024;
/** Zeros after the input: a zero ends every token, and a string is read 16 bytes at a time. */
const PADDING = 64;

const kernel = WasmKernel.load(ENDPOINTS_SCAN_WASM, 'scanEndpoints');

/** `scanEndpointsScalar`, with WebAssembly SIMD when it is there. */
export function scanEndpoints(body: Uint8Array, start: number): EndpointsScan | undefined {
  // Also keeps a negative start (which subarray would count from the end) from reaching the kernel.
  if (body[start] !== BYTE.openArray) return undefined;
  const input = body.subarray(start);
  if (kernel === undefined || !kernel.write(input, INPUT_OFFSET, PADDING, 0)) return scanEndpointsScalar(body, start);
  const end = kernel.run();
  if (end < 0) return undefined;
  const memory = kernel.int32();
  const count = memory[COUNT_OFFSET / 4] ?? 0;
  const spans = memory.subarray(SPANS_OFFSET / 4, SPANS_OFFSET / 4 + 2 * count);
  // The kernel's offsets are from `start`; the spans a caller reads are offsets into `body`, as the scalar's.
  for (let k = 0; k < spans.length; k++) if ((spans[k] ?? -1) >= 0) spans[k] = (spans[k] ?? 0) + start;
  return { start, end: start + end, count, spans };
}

/** True when the SIMD kernel is in use: for the tests, which must know what they compare. */
export function usesKernel(): boolean {
  return kernel !== undefined;
}
