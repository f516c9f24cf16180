// The rewrite (docs/reference.md, "The rewrite"): the pure rewrite of one reflected slice against one cluster's pairs. Inputs are never mutated.
import {
  isSkip, ORIGINAL_ADDRESSES_ANNOTATION, readReflectedSlice, SHORTCUT_ADDRESSES_ANNOTATION,
  type ReflectedSlice, type SliceOptions, type SliceSkip,
} from './endpoint-slice.ts';
import { ipv4, ipv6, type AddressCodec } from './ip.ts';
import { field, isArray, isObject, parseJsonObject, type Json, type JsonObject } from './json.ts';
import { STOCK_REASONS, type FamilyResolver, type PodRef, type StockReason } from './hub-resolution.ts';
import { HUB_NOT_READ_REASON } from './hubs.ts';
import type { FamilyIndex } from './pair-index.ts';
import type { ShortcutPair } from './pairs.ts';
import type { ClusterView, Snapshot } from './snapshot.ts';
import { sliceRecordSpaces, storedHolds, storedRecord, type IgnoredEntry, type SliceRecordSpaces } from './trust.ts';

/** One address whose text changes, by position: the rewrite never adds, drops or reorders. */
export interface AddressEdit {
  readonly endpoint: number;
  readonly address: number;
  readonly from: string;
  readonly to: string;
  /** `restored`: back to the hub address recorded in the annotation, because no usable pair holds it now. */
  readonly kind: 'rewritten' | 'restored';
}

/** The annotation's new text, or undefined to remove it. Only keys whose value changes are listed. */
export interface AnnotationEdit {
  readonly key: typeof SHORTCUT_ADDRESSES_ANNOTATION | typeof ORIGINAL_ADDRESSES_ANNOTATION;
  readonly value: string | undefined;
}

/**
 * Why an address was left exactly as it came, neither changed nor flagged:
 * - `not-canonical`: not an address of the slice's family as the webhook writes them;
 * - `no-fcc`: no ForeignClusterConnection names the slice's cluster at all, and the leaf sees no external CIDR of
 *   the slice's hub (the FCC path is the only one);
 * - `not-hub-external`: no ForeignClusterConnection names the slice's cluster, and the address is outside the leaf's
 *   view of the hub's external CIDR, the only addresses the stock path resolves (a stock-Liqo leaf needs no FCC, so
 *   `no-fcc` would point its user at something it does not need);
 * - `no-pair`: FCCs name the cluster, but no usable pair's source holds the address;
 * - the stock path's reasons (hub-resolution.ts) for an address in the leaf's view of the hub's external CIDR:
 *   `hub-external`, `no-hub-ip`, `no-peer`, `no-shortcut`, `tunnel-down`, `connection-stale`.
 */
export type UntouchedReason = 'not-canonical' | 'no-fcc' | 'not-hub-external' | 'no-pair' | StockReason;

export const UNTOUCHED_REASONS: readonly UntouchedReason[] = ['not-canonical', 'no-fcc', 'not-hub-external', 'no-pair', ...STOCK_REASONS];

export type UntouchedCounts = Readonly<Record<UntouchedReason, number>>;

export interface SliceRewrite {
  readonly slice: ReflectedSlice;
  readonly edits: readonly AddressEdit[];
  readonly annotations: readonly AnnotationEdit[];
  /** Addresses left exactly as they came, by reason: what `addresses_untouched_total` counts. */
  readonly untouched: UntouchedCounts;
  /** Entries naming an address of the slice that the product could not have written: what `records_ignored_total` counts. */
  readonly ignored: readonly IgnoredEntry[];
}

export type AddressReason = 'rewritten' | 'restored' | 'through-shortcut' | 'identity' | UntouchedReason;

/** What `explain` shows for one address; only built when someone asks. */
export interface AddressTrace {
  readonly endpoint: number;
  readonly address: number;
  readonly input: string;
  readonly base: string;
  readonly output: string;
  readonly pair: ShortcutPair | undefined;
  /** The stock path's resolution of an address in the hub's external space: the hub IP, the peer, the leaf Configuration. */
  readonly hub: { readonly ip: string; readonly peer: string; readonly configuration: string } | undefined;
  /** Why the stock path left an address of the hub's external space (also when it was restored). */
  readonly stock: { readonly reason: StockReason; readonly detail: string; readonly peer?: string | undefined } | undefined;
  readonly reason: AddressReason;
  readonly flagged: boolean;
  /** The entry for this address that was not used, and why (the address was treated as if it had none). */
  readonly ignored: IgnoredEntry | undefined;
}

export type TraceObserver = (trace: AddressTrace) => void;

/**
 * Entries of the original-addresses annotation that are safe to use: string to a canonical address of the slice's
 * family. Anything else (bad JSON, arrays, numbers, other families) is dropped entry by entry.
 */
function readOriginals<V extends number | bigint>(
  codec: AddressCodec<V>, text: Json | undefined,
): ReadonlyMap<string, { readonly text: string; readonly value: V }> {
  const originals = new Map<string, { readonly text: string; readonly value: V }>();
  const parsed = parseJsonObject(text);
  if (parsed === undefined) return originals;
  for (const key of Object.keys(parsed)) {
    const value = parsed[key];
    if (typeof value !== 'string') continue;
    // Kept with its parsed value: the rewrite needs both, and parsing IPv6 text is not cheap.
    const parsedValue = codec.parseCanonical(value);
    if (parsedValue !== undefined) originals.set(key, { text: value, value: parsedValue });
  }
  return originals;
}

/**
 * The annotation's JSON, as JSON.stringify would print an object with these entries in this order (IP texts have a
 * dot or a colon, so none is an array index that objects would move to the front). A Map rather than an object:
 * using every address as a property name interns each new address string, which costs more than the rewrite.
 * Entries follow the outputs' first appearance (the flags' order: every recorded output is flagged), not the order
 * they were recorded in, so a second pass writes the same text even when an address already in the shortcut space
 * comes before the one rewritten to it.
 */
function originalsText(flags: ReadonlyMap<string, string | undefined>): string {
  let text = '';
  for (const [output, base] of flags) {
    // Both are canonical address text (digits, a-f, dots, colons), so quoting is all JSON asks of them.
    if (base !== undefined) text += `${text === '' ? '{' : ','}"${output}":"${base}"`;
  }
  return `${text}}`;
}

/** Kubernetes refuses an object whose annotations, keys and values together, pass 256 KiB. */
export const ANNOTATIONS_LIMIT_BYTES = 256 * 1024;

/** Go's len() of a string: its UTF-8 bytes. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) { bytes += 4; i++; } else bytes += 3;
  }
  return bytes;
}

function annotationBytes(current: JsonObject | undefined, desired: readonly AnnotationEdit[]): number {
  let total = 0;
  const ours = new Set<string>(desired.map((edit) => edit.key));
  for (const key of current === undefined ? [] : Object.keys(current)) {
    const value = current?.[key];
    if (!ours.has(key) && typeof value === 'string') total += utf8Length(key) + utf8Length(value);
  }
  for (const { key, value } of desired) if (value !== undefined) total += key.length + value.length;
  return total;
}

function reasonFor(
  { input, base, output, pair, hub, flagged }: Omit<AddressTrace, 'reason' | 'endpoint' | 'address' | 'stock' | 'ignored'>, untouched: UntouchedReason,
): AddressReason {
  if (pair !== undefined || hub !== undefined) return output === base && flagged ? 'identity' : 'rewritten';
  if (output !== input) return 'restored';
  return flagged ? 'through-shortcut' : untouched;
}

/** What a family's rewrite reads besides the pairs. */
interface FamilyContext<V extends number | bigint> {
  /** The reason of an address no usable pair holds (UntouchedReason says which when). */
  readonly unmatched: 'no-fcc' | 'not-hub-external' | 'no-pair';
  /** The stock path for the slice's hub: addresses in the leaf's view of its external CIDR go there, not to the pairs. */
  readonly resolver: FamilyResolver<V>;
  /** SliceOptions.addressesAsSent: no address is an output of the stock path, so none is restored from its entries. */
  readonly asSent: boolean;
  /** Where an entry must lie to be used (trust.ts). */
  readonly spaces: SliceRecordSpaces<V>;
  /** At admission of another writer's write: the record as stored, which each used entry must repeat. */
  readonly stored: JsonObject | undefined;
}

const NONE_IGNORED: readonly IgnoredEntry[] = Object.freeze([]);

/**
 * The hub pod an endpoint names (`targetRef`: Liqo's RemotePod keeps the hub pod's name and namespace). A name without
 * a namespace still narrows the choice: it must never be read as "any pod".
 */
export function podOf(endpoint: JsonObject): PodRef | undefined {
  const ref = Object.hasOwn(endpoint, 'targetRef') ? endpoint.targetRef : undefined;
  if (!isObject(ref)) return undefined;
  const name = field(ref, 'name');
  const namespace = field(ref, 'namespace');
  if (typeof name !== 'string' || name === '') return undefined;
  return { name, namespace: typeof namespace === 'string' && namespace !== '' ? namespace : undefined };
}

function noneUntouched(): Record<UntouchedReason, number> {
  return {
    'not-canonical': 0, 'no-fcc': 0, 'not-hub-external': 0, 'no-pair': 0, 'hub-external': 0, 'no-hub-ip': 0, 'no-peer': 0, 'no-shortcut': 0, 'tunnel-down': 0,
    'connection-stale': 0,
  };
}

function rewriteFamily<V extends number | bigint>(
  slice: ReflectedSlice, codec: AddressCodec<V>, index: FamilyIndex<V>, context: FamilyContext<V>, observe: TraceObserver | undefined,
): SliceRewrite | SliceSkip {
  const current = slice.annotations;
  const originals = readOriginals(codec, current && field(current, ORIGINAL_ADDRESSES_ANNOTATION));
  const edits: AddressEdit[] = [];
  // Flagged outputs in order of first appearance, each with the hub address it was first rewritten from, if any:
  // one Map for the flag list and the originals, so an address costs two lookups, not five.
  const flags = new Map<string, string | undefined>();
  let recorded = 0;
  const untouched = noneUntouched();
  let ignored = NONE_IGNORED as IgnoredEntry[];
  const { endpoints, clusterId } = slice;
  const { resolver } = context;
  for (let e = 0; e < endpoints.length; e++) {
    const endpoint = endpoints[e];
    if (!isObject(endpoint)) continue;
    // The key written out, not passed to field(): a load V8 can specialise for the one shape endpoints have,
    // where field()'s variable key is a generic lookup (field() serves every object of the process).
    const addresses = Object.hasOwn(endpoint, 'addresses') ? endpoint.addresses : undefined;
    if (!isArray(addresses)) continue;
    // Read only where the stock path may need it: the FCC path never looks at the pod.
    const pod = resolver.active ? podOf(endpoint) : undefined;
    for (let a = 0; a < addresses.length; a++) {
      const input = addresses[a];
      if (typeof input !== 'string') continue;
      const inputValue = codec.parseCanonical(input);
      if (inputValue === undefined) {
        untouched['not-canonical']++;
        observe?.({ endpoint: e, address: a, input, base: input, output: input, pair: undefined, hub: undefined, stock: undefined, reason: 'not-canonical', flagged: false, ignored: undefined });
        continue;
      }
      // A fresh slice has no originals: no lookup, which would hash every address text for nothing.
      const entry = originals.size === 0 ? undefined : originals.get(input);
      // On a write of Liqo's own writer an entry of the stock path is stale: the address is one Liqo sent itself
      // (SliceOptions.addressesAsSent). The FCC path's entries are read as ever.
      const sent = entry !== undefined && context.asSent && resolver.active && resolver.resolve(entry.value, pod, clusterId) !== undefined
        ? undefined : entry;
      // An entry the product could not have written is as if absent: Liqo's address is rewritten or left as usual.
      const because = sent === undefined ? undefined
        : context.stored !== undefined && !storedHolds(context.stored, input, sent.text) ? 'not-stored' : context.spaces.check(inputValue, sent.value);
      const original = because === undefined ? sent : undefined;
      const refused = sent === undefined || because === undefined ? undefined : { out: input, base: sent.text, because };
      if (refused !== undefined) {
        if (ignored === NONE_IGNORED) ignored = [];
        ignored.push(refused);
      }
      const base = original?.text ?? input;
      const baseValue = original?.value ?? inputValue;
      // The hub's external space is the stock path's (hub-resolution.ts); every other address is the pairs'.
      const resolution = resolver.active ? resolver.resolve(baseValue, pod, clusterId) : undefined;
      const resolved = resolution?.resolved === true ? resolution : undefined;
      const remapped = resolution === undefined ? index.remap(baseValue) : resolved?.value;
      const outputValue = remapped ?? baseValue;
      const output = outputValue === baseValue ? base : codec.format(outputValue);
      if (output !== input) {
        edits.push({ endpoint: e, address: a, from: input, to: output, kind: remapped === undefined ? 'restored' : 'rewritten' });
      }
      // A remapped or resolved address is flagged by construction: no second lookup for it. Only such an address
      // differs from its base, so every recorded output is flagged.
      const isFlagged = remapped !== undefined || (resolution === undefined && index.inTarget(outputValue));
      if (isFlagged && flags.get(output) === undefined) {
        if (output !== base) {
          flags.set(output, base);
          recorded++;
        } else if (!flags.has(output)) flags.set(output, undefined);
      }
      // Left as it came: counted by reason.
      const unresolved = resolution !== undefined && !resolution.resolved ? resolution : undefined;
      const reason: UntouchedReason = unresolved?.reason ?? context.unmatched;
      if (!isFlagged && output === input) untouched[reason]++;
      if (observe !== undefined) {
        const pair = remapped === undefined || resolution !== undefined ? undefined : index.sourceOf(baseValue)?.pair;
        const hub = resolved === undefined ? undefined : { ip: resolved.ip.ref, peer: resolved.peer, configuration: resolved.configuration };
        const stock = unresolved === undefined ? undefined : {
          reason: unresolved.reason, detail: unresolved.detail, ...(unresolved.peer === undefined ? {} : { peer: unresolved.peer }),
        };
        const trace = { input, base, output, pair, hub, flagged: isFlagged };
        observe({ endpoint: e, address: a, ...trace, stock, reason: reasonFor(trace, reason), ignored: refused });
      }
    }
  }
  const desired: AnnotationEdit[] = [
    { key: SHORTCUT_ADDRESSES_ANNOTATION, value: flags.size > 0 ? [...flags.keys()].join(',') : undefined },
    { key: ORIGINAL_ADDRESSES_ANNOTATION, value: recorded > 0 ? originalsText(flags) : undefined },
  ];
  // A patch the API server would refuse is a denied write: leave such a slice (thousands of addresses) untouched.
  if (annotationBytes(current, desired) > ANNOTATIONS_LIMIT_BYTES) return { skip: 'annotations-too-large', detail:
    `the annotations would pass the API server's ${ANNOTATIONS_LIMIT_BYTES} byte limit` };
  const annotations = desired.filter(({ key, value }) => {
    const present = current !== undefined && Object.hasOwn(current, key);
    return value === undefined ? present : !present || current[key] !== value;
  });
  return { slice, edits, annotations, untouched, ignored };
}

function unmatchedReason(view: ClusterView, resolver: { readonly active: boolean }): FamilyContext<number>['unmatched'] {
  if (view.states.length > 0) return 'no-pair';
  return resolver.active ? 'not-hub-external' : 'no-fcc';
}

/** The rewrite of one slice; `observe` sees every address (for `explain`) and costs nothing when absent. */
function rewriteSlice(slice: ReflectedSlice, snapshot: Snapshot, options: SliceOptions, observe?: TraceObserver): SliceRewrite | SliceSkip {
  // Every hub-derived decision is the slice's own hub's: its FCCs, its IPAM, its trust spaces. A hub no reader stands
  // for is not guessed.
  const hub = snapshot.hubFor(slice.origin);
  if (!hub.read) return { skip: HUB_NOT_READ_REASON, detail: hub.detail };
  const view: ClusterView = hub.forCluster(slice.clusterId);
  const { resolver } = hub;
  const asSent = options.addressesAsSent === true;
  const { records } = options;
  // Parsed only when the write carries a record to check against it.
  const stored = records?.against === 'stored' && slice.annotations !== undefined && Object.hasOwn(slice.annotations, ORIGINAL_ADDRESSES_ANNOTATION)
    ? storedRecord(records.stored, ORIGINAL_ADDRESSES_ANNOTATION) : undefined;
  const { clusterId, origin } = slice;
  return slice.family === 'IPv4'
    ? rewriteFamily(slice, ipv4, view.index.ipv4, {
      unmatched: unmatchedReason(view, resolver.ipv4), resolver: resolver.ipv4, asSent, spaces: sliceRecordSpaces.ipv4(snapshot, clusterId, origin), stored,
    }, observe)
    : rewriteFamily(slice, ipv6, view.index.ipv6, {
      unmatched: unmatchedReason(view, resolver.ipv6), resolver: resolver.ipv6, asSent, spaces: sliceRecordSpaces.ipv6(snapshot, clusterId, origin), stored,
    }, observe);
}

/** f (docs/reference.md, "The rewrite") from any JSON: a skip (left alone) or the rewrite against the slice's cluster in `snapshot`. */
export function rewriteEndpointSlice(
  object: unknown, snapshot: Snapshot, options: SliceOptions = {}, observe?: TraceObserver,
): SliceRewrite | SliceSkip {
  const slice = readReflectedSlice(object, options);
  return isSkip(slice) ? slice : rewriteSlice(slice, snapshot, options, observe);
}

export function isUnchanged(rewrite: SliceRewrite): boolean {
  return rewrite.edits.length === 0 && rewrite.annotations.length === 0;
}

/** f(x) as an object: copies only along the changed paths, so unknown fields survive by reference. */
export function applyRewrite(rewrite: SliceRewrite): JsonObject {
  const { slice, edits, annotations } = rewrite;
  if (isUnchanged(rewrite)) return slice.object;
  const result: Record<string, Json> = { ...slice.object };
  if (edits.length > 0) {
    const endpoints = [...slice.endpoints];
    for (const edit of edits) {
      const endpoint = endpoints[edit.endpoint];
      if (!isObject(endpoint)) continue;
      const addresses = field(endpoint, 'addresses');
      if (!isArray(addresses)) continue;
      const copy = [...addresses];
      copy[edit.address] = edit.to;
      endpoints[edit.endpoint] = { ...endpoint, addresses: copy };
    }
    result.endpoints = endpoints;
  }
  if (annotations.length > 0) {
    const metadata = slice.object.metadata;
    const copy: Record<string, Json> = { ...(isObject(metadata) ? metadata : {}) };
    const next = editedAnnotations(rewrite);
    if (next === undefined) delete copy.annotations; else copy.annotations = next;
    result.metadata = copy;
  }
  return result;
}

/**
 * The slice's annotations once the rewrite's edits are made; undefined when they leave none, so that a restore gives
 * back a slice without the map, as it was before the first rewrite (and as the API server would store it).
 */
export function editedAnnotations(rewrite: SliceRewrite): JsonObject | undefined {
  const next: Record<string, Json> = { ...(rewrite.slice.annotations ?? {}) };
  for (const { key, value } of rewrite.annotations) {
    if (value === undefined) delete next[key]; else next[key] = value;
  }
  return Object.keys(next).length === 0 ? undefined : next;
}
