// Reads an AdmissionReview body without building `request.oldObject`, which the webhook never reads.
//
// JSON.parse of the whole body was most of what a review cost (about 150 of 360 µs of server CPU for the bench's
// 100-endpoint UPDATE), and in an UPDATE oldObject is half of the body. So oldObject is cut out: a scan of strings
// and brackets finds where it ends (container-end.ts), a placeholder takes its place, and JSON.parse reads the rest.
// The placeholder must come back as `request.oldObject`, or the whole body is parsed after all. A wrong cut can
// therefore only cost time, never change what is read: a key "oldObject" elsewhere (an annotation), odd spacing,
// duplicate keys, truncation all end in the ordinary parse. The one difference from JSON.parse: a body malformed only
// inside oldObject's balanced brackets is read rather than refused, because its content is never looked at.
import { randomUUID } from 'node:crypto';
import { field, isObject } from '../core/json.ts';
import { endOfContainer } from './container-end.ts';

const OLD_OBJECT_KEY = Buffer.from('"oldObject":');

/**
 * What `request.oldObject` reads as when it was not parsed. Random per process: a placeholder a client could put in
 * its own body would let a misplaced cut pass the check.
 */
export const OLD_OBJECT_NOT_PARSED = `(oldObject not parsed ${randomUUID()})`;
const PLACEHOLDER_JSON = JSON.stringify(OLD_OBJECT_NOT_PARSED);

function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The first byte the key's search looks for: a capital O is rare in Kubernetes JSON, `"` and letters are not. */
const RARE_BYTE = 0x4f;
const RARE_OFFSET = OLD_OBJECT_KEY.indexOf(RARE_BYTE);
/** Past this many capital Os that are not the key, the ordinary substring search takes over. */
const RARE_TRIES = 64;

function isKeyAt(body: Buffer, at: number): boolean {
  if (at < 0 || at + OLD_OBJECT_KEY.length > body.length) return false;
  for (let k = 0; k < OLD_OBJECT_KEY.length; k++) if (body[at + k] !== OLD_OBJECT_KEY[k]) return false;
  return true;
}

/**
 * `body.indexOf(OLD_OBJECT_KEY)`. The substring search cost 8 µs over the 19 KB before oldObject, more than the
 * rest of a review's routing; memchr for the key's capital O, then a check of the bytes around it, costs 0.2 µs.
 */
function findKey(body: Buffer): number {
  let rare = body.indexOf(RARE_BYTE);
  for (let tries = 0; rare >= 0 && tries < RARE_TRIES; tries++) {
    if (isKeyAt(body, rare - RARE_OFFSET)) return rare - RARE_OFFSET;
    rare = body.indexOf(RARE_BYTE, rare + 1);
  }
  return rare < 0 ? -1 : body.indexOf(OLD_OBJECT_KEY, Math.max(0, rare - RARE_OFFSET));
}

/** Where the value of the first `"oldObject":` starts and ends, if it is an object or array that ends well. */
function oldObjectSpan(body: Buffer): { start: number; end: number } | undefined {
  const key = findKey(body);
  if (key < 0) return undefined;
  let start = key + OLD_OBJECT_KEY.length;
  while (isWhitespace(body[start])) start++;
  if (body[start] !== 0x7b && body[start] !== 0x5b) return undefined;
  const end = endOfContainer(body, start);
  return end < 0 ? undefined : { start, end };
}

function placeholderIsOldObject(value: unknown): boolean {
  const request = isObject(value) ? field(value, 'request') : undefined;
  return isObject(request) && field(request, 'oldObject') === OLD_OBJECT_NOT_PARSED;
}

/** JSON.parse of the body, except that `request.oldObject` may read as OLD_OBJECT_NOT_PARSED. Throws as JSON.parse. */
export function parseReviewJson(body: Buffer): unknown {
  const span = oldObjectSpan(body);
  if (span !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8', 0, span.start) + PLACEHOLDER_JSON + body.toString('utf8', span.end));
    } catch {
      value = undefined;
    }
    if (placeholderIsOldObject(value)) return value;
  }
  return JSON.parse(body.toString('utf8'));
}
