// SPEC §3: the pure rewrite of one reflected slice against one cluster's pairs. Inputs are never mutated.
import {
  isSkip, ORIGINAL_ADDRESSES_ANNOTATION, readReflectedSlice, SHORTCUT_ADDRESSES_ANNOTATION,
  type ReflectedSlice, type SliceOptions, type SliceSkip,
} from './endpoint-slice.ts';
import { within } from './cidr.ts';
import { ipv4, ipv6, type AddressCodec } from './ip.ts';
import { field, isArray, isObject, type Json, type JsonObject } from './json.ts';
import type { FamilyIndex } from './pair-index.ts';
import type { ShortcutPair } from './pairs.ts';
import type { ClusterView, Snapshot } from './snapshot.ts';

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
 * Why an address was left exactly as it came, neither changed nor flagged (SPEC §6: `--explain` names `hub-external`):
 * - `not-canonical`: not an address of the slice's family as the webhook writes them;
 * - `hub-external`: in the leaf's view of the hub's external CIDR (the slice's `offloading.liqo.io/origin`), where the
 *   hub's IPAM allocated it: its host part is not the pod's, so no shortcut can map it;
 * - `no-fcc`: no ForeignClusterConnection names the slice's cluster at all;
 * - `no-pair`: FCCs name the cluster, but no usable pair's source holds the address.
 */
export type UntouchedReason = 'not-canonical' | 'hub-external' | 'no-fcc' | 'no-pair';

export const UNTOUCHED_REASONS: readonly UntouchedReason[] = ['not-canonical', 'hub-external', 'no-fcc', 'no-pair'];

export type UntouchedCounts = Readonly<Record<UntouchedReason, number>>;

export interface SliceRewrite {
  readonly slice: ReflectedSlice;
  readonly edits: readonly AddressEdit[];
  readonly annotations: readonly AnnotationEdit[];
  /** Addresses left exactly as they came, by reason: what `addresses_untouched_total` counts. */
  readonly untouched: UntouchedCounts;
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
  readonly reason: AddressReason;
  readonly flagged: boolean;
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
  if (typeof text !== 'string' || text === '') return originals;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return originals;
  }
  if (!isObject(parsed)) return originals;
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
function utf8Length(text: string): number {
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
  { input, base, output, pair, flagged }: Omit<AddressTrace, 'reason' | 'endpoint' | 'address'>, untouched: UntouchedReason,
): AddressReason {
  if (pair !== undefined) return output === base && flagged ? 'identity' : 'rewritten';
  if (output !== input) return 'restored';
  return flagged ? 'through-shortcut' : untouched;
}

/** What a family's rewrite reads besides the pairs: enough to say why an address was left alone. */
interface UntouchedContext<V> {
  /** The reason of an address no usable pair holds: `no-fcc` when no FCC names the slice's cluster at all. */
  readonly unmatched: 'no-fcc' | 'no-pair';
  /** The leaf's view of the slice's hub's external CIDR, in this family (usually one block, often none). */
  readonly hubExternal: readonly { readonly network: V; readonly last: V }[];
}

function rewriteFamily<V extends number | bigint>(
  slice: ReflectedSlice, codec: AddressCodec<V>, index: FamilyIndex<V>, context: UntouchedContext<V>, observe: TraceObserver | undefined,
): SliceRewrite | SliceSkip {
  const current = slice.annotations;
  const originals = readOriginals(codec, current && field(current, ORIGINAL_ADDRESSES_ANNOTATION));
  const edits: AddressEdit[] = [];
  // Flagged outputs in order of first appearance, each with the hub address it was first rewritten from, if any:
  // one Map for the flag list and the originals, so an address costs two lookups, not five.
  const flags = new Map<string, string | undefined>();
  let recorded = 0;
  let notCanonical = 0;
  let hubExternal = 0;
  // In no usable pair: one count, under context.unmatched's reason.
  let unmatched = 0;
  const { endpoints } = slice;
  const externals = context.hubExternal;
  for (let e = 0; e < endpoints.length; e++) {
    const endpoint = endpoints[e];
    if (!isObject(endpoint)) continue;
    // The key written out, not passed to field(): a load V8 can specialise for the one shape endpoints have,
    // where field()'s variable key is a generic lookup (field() serves every object of the process).
    const addresses = Object.hasOwn(endpoint, 'addresses') ? endpoint.addresses : undefined;
    if (!isArray(addresses)) continue;
    for (let a = 0; a < addresses.length; a++) {
      const input = addresses[a];
      if (typeof input !== 'string') continue;
      const inputValue = codec.parseCanonical(input);
      if (inputValue === undefined) {
        notCanonical++;
        observe?.({ endpoint: e, address: a, input, base: input, output: input, pair: undefined, reason: 'not-canonical', flagged: false });
        continue;
      }
      // A fresh slice has no originals: no lookup, which would hash every address text for nothing.
      const original = originals.size === 0 ? undefined : originals.get(input);
      const base = original?.text ?? input;
      const baseValue = original?.value ?? inputValue;
      const remapped = index.remap(baseValue);
      const outputValue = remapped ?? baseValue;
      const output = outputValue === baseValue ? base : codec.format(outputValue);
      if (output !== input) {
        edits.push({ endpoint: e, address: a, from: input, to: output, kind: remapped === undefined ? 'restored' : 'rewritten' });
      }
      // A remapped address lies in its pair's target by construction: no second lookup for it. Only a remapped
      // address differs from its base, so every recorded output is flagged.
      const isFlagged = remapped !== undefined || index.inTarget(outputValue);
      if (isFlagged && flags.get(output) === undefined) {
        if (output !== base) {
          flags.set(output, base);
          recorded++;
        } else if (!flags.has(output)) flags.set(output, undefined);
      }
      // Left as it came: counted by reason. Without the leaf's views (the common case) that is one increment.
      let external = false;
      if (!isFlagged && output === input) {
        if (externals.length > 0) external = externals.some((block) => within(block, inputValue));
        if (external) hubExternal++; else unmatched++;
      }
      if (observe !== undefined) {
        const pair = remapped === undefined ? undefined : index.sourceOf(baseValue)?.pair;
        const trace = { input, base, output, pair, flagged: isFlagged };
        observe({ endpoint: e, address: a, ...trace, reason: reasonFor(trace, external ? 'hub-external' : context.unmatched) });
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
  const untouched = { 'not-canonical': notCanonical, 'hub-external': hubExternal, 'no-fcc': 0, 'no-pair': 0, [context.unmatched]: unmatched };
  return { slice, edits, annotations, untouched };
}

/** The rewrite of SPEC §3; `observe` sees every address (for `explain`) and costs nothing when absent. */
function rewriteSlice(slice: ReflectedSlice, snapshot: Snapshot, observe?: TraceObserver): SliceRewrite | SliceSkip {
  const view: ClusterView = snapshot.forCluster(slice.clusterId);
  const unmatched = view.states.length === 0 ? 'no-fcc' : 'no-pair';
  const origin = slice.origin;
  return slice.family === 'IPv4'
    ? rewriteFamily(slice, ipv4, view.index.ipv4, { unmatched, hubExternal: origin === undefined ? [] : snapshot.views.externalOf(origin, 'IPv4') }, observe)
    : rewriteFamily(slice, ipv6, view.index.ipv6, { unmatched, hubExternal: origin === undefined ? [] : snapshot.views.externalOf(origin, 'IPv6') }, observe);
}

/** f of SPEC §3 from any JSON: a skip (left alone) or the rewrite against the slice's cluster in `snapshot`. */
export function rewriteEndpointSlice(
  object: unknown, snapshot: Snapshot, options: SliceOptions = {}, observe?: TraceObserver,
): SliceRewrite | SliceSkip {
  const slice = readReflectedSlice(object, options);
  return isSkip(slice) ? slice : rewriteSlice(slice, snapshot, observe);
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
    const next: Record<string, Json> = { ...(slice.annotations ?? {}) };
    for (const { key, value } of annotations) {
      if (value === undefined) delete next[key]; else next[key] = value;
    }
    result.metadata = { ...(isObject(metadata) ? metadata : {}), annotations: next };
  }
  return result;
}
