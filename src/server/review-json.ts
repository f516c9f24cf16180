// Reads an AdmissionReview body without building what the webhook never reads: `request.oldObject`, and all of
// `request.object.endpoints` but the addresses.
//
// JSON.parse of the whole body was most of what a review cost (about 150 of 360 µs of server CPU for the bench's
// 100-endpoint UPDATE). Two spans are therefore cut out of the text JSON.parse reads, each replaced by a placeholder:
// - oldObject, half of an UPDATE's body: a scan of strings and brackets finds where it ends (container-end.ts);
// - the object's endpoints array, most of the other half: a scan checks it as strictly as JSON.parse would and notes
//   where each element's addresses are (endpoints-scan.ts); the elements, reduced to those, replace the placeholder.
// Each placeholder must come back where it was meant to be (`request.oldObject`, `request.object.endpoints`), or the
// whole body is parsed after all. A wrong cut can therefore only cost time, never change what is read: a key of that
// name elsewhere (an annotation), odd spacing, duplicate keys, truncation all end in the ordinary parse. The one
// difference from JSON.parse: a body malformed only inside oldObject's balanced brackets is read rather than refused,
// because its content is never looked at.
import { randomUUID } from 'node:crypto';
import { field, isObject } from '../core/json.ts';
import { endOfContainer } from './container-end.ts';
import { endpointsFrom, scanEndpoints, type EndpointsScan } from './endpoints-scan.ts';
import { BYTE, skipWhitespace } from './json-bytes.ts';

const OLD_OBJECT_KEY = Buffer.from('"oldObject":');

/**
 * What `request.oldObject` reads as when it was not parsed. Random per process: a placeholder a client could put in
 * its own body would let a misplaced cut pass the check.
 */
export const OLD_OBJECT_NOT_PARSED = `(oldObject not parsed ${randomUUID()})`;
const PLACEHOLDER_JSON = Buffer.from(JSON.stringify(OLD_OBJECT_NOT_PARSED));

/** A span of the body left out of JSON.parse, and the JSON text that stands in for it. */
interface Cut {
  readonly start: number;
  readonly end: number;
  readonly placeholder: Buffer;
}

const ENDPOINTS_KEY = Buffer.from('"endpoints":');
/** What `request.object.endpoints` reads as between the parse and the scan's endpoints taking its place. */
const ENDPOINTS_NOT_PARSED = `(endpoints not parsed ${randomUUID()})`;
const ENDPOINTS_PLACEHOLDER_JSON = Buffer.from(JSON.stringify(ENDPOINTS_NOT_PARSED));

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
function oldObjectSpan(body: Buffer): Cut | undefined {
  const key = findKey(body);
  if (key < 0) return undefined;
  const start = skipWhitespace(body, key + OLD_OBJECT_KEY.length);
  if (body[start] !== BYTE.openObject && body[start] !== BYTE.openArray) return undefined;
  const end = endOfContainer(body, start);
  return end < 0 ? undefined : { start, end, placeholder: PLACEHOLDER_JSON };
}

/**
 * The first `"endpoints":` before `limit` (where oldObject starts: the object comes first from the API server), if
 * its value is an array the scan accepts. Kubernetes writes an EndpointSlice's endpoints after a short metadata, so
 * the search reads a few hundred bytes.
 */
function endpointsSpan(body: Buffer, limit: number): (Cut & { scan: EndpointsScan }) | undefined {
  // Read no further than the limit: the array must close before oldObject opens.
  const head = body.subarray(0, limit);
  const key = head.indexOf(ENDPOINTS_KEY);
  if (key < 0) return undefined;
  // The scan refuses anything but an array (null, a string) itself: no check of the bracket here.
  const start = skipWhitespace(head, key + ENDPOINTS_KEY.length);
  const scan = scanEndpoints(head, start);
  return scan === undefined ? undefined : { start, end: scan.end, placeholder: ENDPOINTS_PLACEHOLDER_JSON, scan };
}

/** The body with each cut replaced by its placeholder, decoded once (no string concatenation to flatten). */
function cutText(body: Buffer, cuts: readonly Cut[]): string {
  const pieces: Buffer[] = [];
  let at = 0;
  for (const cut of cuts) {
    pieces.push(body.subarray(at, cut.start), cut.placeholder);
    at = cut.end;
  }
  pieces.push(body.subarray(at));
  return Buffer.concat(pieces).toString('utf8');
}

function ownField(value: unknown, key: string): unknown {
  return isObject(value) ? field(value, key) : undefined;
}

/**
 * JSON.parse of the body, except that `request.oldObject` may read as OLD_OBJECT_NOT_PARSED, and `request.object`'s
 * endpoints as the rewrite reads them (endpoints-scan.ts). Throws as JSON.parse.
 */
export function parseReviewJson(body: Buffer): unknown {
  const oldObject = oldObjectSpan(body);
  const endpoints = endpointsSpan(body, oldObject?.start ?? body.length);
  const cuts = [endpoints, oldObject].filter((cut) => cut !== undefined);
  if (cuts.length > 0) {
    let value: unknown;
    try {
      value = JSON.parse(cutText(body, cuts));
    } catch {
      value = undefined;
    }
    const request = ownField(value, 'request');
    const object = ownField(request, 'object');
    // Each placeholder must come back where its cut was meant to be, or the whole body is parsed after all.
    const placed = (oldObject === undefined || ownField(request, 'oldObject') === OLD_OBJECT_NOT_PARSED)
      && (endpoints === undefined || ownField(object, 'endpoints') === ENDPOINTS_NOT_PARSED);
    if (placed) {
      // A fresh object of JSON.parse's, owned here: the endpoints take the placeholder's place.
      if (endpoints !== undefined && isObject(object)) Object.assign(object, { endpoints: endpointsFrom(body, endpoints.scan) });
      return value;
    }
  }
  return JSON.parse(body.toString('utf8'));
}
