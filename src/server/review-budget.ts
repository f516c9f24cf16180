// How much work strangers can put in flight at once. The webhook port takes any pod's requests, and a review is
// held whole while it is received and parsed: 32 bodies of 6.7 MiB at once once took the process past the chart's
// heap (FATAL ERROR: Reached heap limit), and with it the controller. So the requests in flight are bounded in
// number, and in the heap their bodies may cost once parsed, estimated before a byte of the body is read and again
// once it is all in, before JSON.parse.
//
// What a parsed body costs, measured (docs/performance.md, "Work in flight"): 1.5 to 2.9 bytes of heap a byte for
// real reviews of maximum size, but 21 for `[{},{},...]` (an object is about 56 bytes of heap for 3 of text) and 27
// for arrays nested as deep as the body goes. The estimate: 5 bytes a byte (the costliest shape without objects
// or arrays, `[0,0,...]`, measured 4 to 5) and 64 for each object or array. It was above the measured cost of
// every shape tried, by 1.0 to 3 times; at most one container in two bytes makes 37 bytes a byte the most any
// body can be estimated at.

/**
 * The API server caps a request at 3 MiB, so a review carries at most object + oldObject (6 MiB) plus its
 * envelope: 7 MiB, as controller-runtime derives it. Anything larger is not a review from an API server.
 */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;

/** Heap bytes per body byte, for everything but objects and arrays. */
const HEAP_PER_BODY_BYTE = 5;
/** Heap bytes per JSON object or array, on top of its text. */
const HEAP_PER_CONTAINER = 64;
/** The most a body can cost a byte: every second byte opening an object or array. */
const WORST_HEAP_PER_BYTE = HEAP_PER_BODY_BYTE + HEAP_PER_CONTAINER / 2;
/**
 * Bodies at least this long are scanned for their objects and arrays before they are parsed; shorter ones are taken
 * at the worst case, 37 bytes a byte, without a scan, which costs a fifth of a parse (4 to 5 ns a byte on a loaded
 * machine): a review of a 100-endpoint slice (40 KB) then counts as 1.5 MB, a 256 KiB one as 9.25 MiB.
 */
const SCAN_FROM_BYTES = 256 * 1024;
/**
 * A long body's share before it is read: 6 bytes a byte, about what a real review's objects and arrays add to the 5
 * (a slice's endpoints have one every 40 to 60 bytes, 1.1 to 1.6 more), so a real review's share changes little
 * once it is in.
 */
const HEAP_PER_DECLARED_BYTE = 6;

/** Objects and arrays in a JSON text, an upper bound: a `{` or `[` inside a string counts too, which only errs safe. */
export function containersIn(body: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (byte === 0x7b || byte === 0x5b) count++;
  }
  return count;
}

/** The heap a body may cost once parsed, its text in hand. */
export function parsedHeapEstimate(body: Uint8Array): number {
  if (body.length < SCAN_FROM_BYTES) return body.length * WORST_HEAP_PER_BYTE;
  return body.length * HEAP_PER_BODY_BYTE + containersIn(body) * HEAP_PER_CONTAINER;
}

/**
 * The body's length as its headers declare it; the limit when undeclared (HTTP/1.1 chunked, HTTP/2 without
 * content-length; kube-apiserver always declares it). One declared over the limit counts as nothing: it is refused
 * 413 unread, which a busy webhook must still answer (not 503).
 */
export function declaredBodyBytes(headers: Readonly<Record<string, string | string[] | undefined>>, method: string): number {
  const declared = headers['content-length'];
  if (typeof declared === 'string' && /^\d+$/.test(declared)) return Number(declared) > MAX_BODY_BYTES ? 0 : Number(declared);
  return method === 'GET' || method === 'HEAD' ? 0 : MAX_BODY_BYTES;
}

/** The share of a body before it is read, from the length its headers declare (the limit, for one that declares none). */
export function declaredHeapEstimate(declaredBytes: number): number {
  return declaredBytes * (declaredBytes < SCAN_FROM_BYTES ? WORST_HEAP_PER_BYTE : HEAP_PER_DECLARED_BYTE);
}

export interface ReviewBudgetOptions {
  /** Requests being received, parsed or reviewed at once. */
  readonly maxReviews: number;
  /** The heap they may cost at once, as estimated above. */
  readonly maxBytes: number;
}

/** One request's share, held from its headers to its answer. */
export interface Ticket {
  /** Sets the share to `bytes` (a body, now in, may cost more or less than its headers said); false if it does not fit. */
  resize(bytes: number): boolean;
  /** Gives the share back; a second call does nothing. */
  release(): void;
}

/** What is in flight now, for the refusal's message and the metrics. */
export interface InFlight {
  readonly reviews: number;
  readonly bytes: number;
}

/**
 * The ledger. A request that does not fit is refused, never queued: a queue would hold the very bodies whose heap is
 * the problem.
 */
export class ReviewBudget {
  private reviews = 0;
  private bytes = 0;

  constructor(private readonly options: ReviewBudgetOptions) {}

  inFlight(): InFlight {
    return { reviews: this.reviews, bytes: this.bytes };
  }

  /** A share of `bytes`, or undefined when the number or the heap in flight would pass its bound. */
  admit(bytes: number): Ticket | undefined {
    if (this.reviews >= this.options.maxReviews) return undefined;
    if (this.bytes + bytes > this.options.maxBytes) return undefined;
    this.reviews++;
    this.bytes += bytes;
    let held = bytes;
    let released = false;
    return {
      resize: (next) => {
        if (released) return false;
        if (next > held && this.bytes - held + next > this.options.maxBytes) return false;
        this.bytes += next - held;
        held = next;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.reviews--;
        this.bytes -= held;
      },
    };
  }
}


/**
 * Two maximum-size bodies at once, as shared before they are read (6 x 7 MiB each), or 56 reviews of 40 KB: 84 MiB.
 * With the 54 to 56 MB the heap holds live during the controller's passes, 140 MB at most, inside the chart's
 * 160 MiB old space (--max-old-space-size=160) with room for the collector.
 */
export const DEFAULT_MAX_REVIEW_BYTES_IN_FLIGHT = 2 * declaredHeapEstimate(MAX_BODY_BYTES);
/**
 * Well above what the API server sends one replica at once in a pass (the controller's 8 patches in flight, Liqo's
 * writers beside them): a bound on small bodies, which the bytes bound leaves many of.
 */
export const DEFAULT_MAX_REVIEWS_IN_FLIGHT = 64;
