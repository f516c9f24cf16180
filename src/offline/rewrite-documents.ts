// The offline harness behind `shortcut-webhook rewrite`: each document through the same code path as the server.
import { admissionResponse, type ReviewSkipReason } from '../admission/responses.ts';
import { patchFor, type PatchOperation } from '../admission/patch.ts';
import { reviewEndpointSlice } from '../admission/review-endpoint-slice.ts';
import { reviewShadowEndpointSlice, type ShadowReviewed } from '../admission/review-shadow-endpoint-slice.ts';
import { decodeReview, type AdmissionRequest } from '../admission/review.ts';
import { shadowPatchFor } from '../admission/shadow-patch.ts';
import { repairShadowEndpointSlice } from '../core/direct-connections.ts';
import { asShadowEndpointSlice, isShadowEndpointSliceObject, SHADOW_GROUP, SHADOW_KIND } from '../core/shadow-endpoint-slice.ts';
import type { Document, ListDocument } from '../util/documents.ts';
import { asEndpointSlice, isSkip, sliceName } from '../core/endpoint-slice.ts';
import { field, isArray, isObject, stringField, type Json, type JsonObject } from '../core/json.ts';
import { applyRewrite, rewriteEndpointSlice, type AddressTrace, type SliceRewrite } from '../core/rewrite.ts';
import { failure, success, type Result } from '../core/result.ts';
import type { Snapshot } from '../core/snapshot.ts';

export interface DocumentResult {
  readonly name: string;
  /** What `--output yaml|json` prints: the rewritten slice or list, or the review the server would answer. */
  readonly output: unknown;
  /** What `--output patch` prints: the operations that turn the input into `output` (for a review, its patch). */
  readonly patch: readonly PatchOperation[];
  /** Per slice in the document: what `--explain` prints. */
  readonly slices: readonly SliceReport[];
}

/** Why a slice was left alone: a SliceSkip, or a reason only a review has (such as its operation). */
export interface LeftAlone { readonly skip: ReviewSkipReason | 'internal-error'; readonly detail: string }

/** Per object: an EndpointSlice with the trace of each address, or a ShadowEndpointSlice with its listed addresses. */
export type SliceReport =
  | { readonly kind: 'endpointslice'; readonly name: string; readonly result: SliceRewrite | LeftAlone; readonly traces: readonly AddressTrace[] }
  | { readonly kind: 'shadow'; readonly name: string; readonly result: ShadowReviewed | LeftAlone };

/** The local cluster a report was decided for; undefined for an object left alone. */
export function clusterOf(report: SliceReport): string | undefined {
  if ('skip' in report.result) return undefined;
  return 'slice' in report.result ? report.result.slice.clusterId : report.result.shadow.clusterId;
}


export interface OfflineOptions {
  readonly clusterId?: string | undefined;
}

/**
 * The kinds `rewrite` takes as a document or a List's item (an AdmissionReview as a document only): the one place a
 * kind is accepted. Anything else (a Deployment, a Secret, FCCs given as input instead of with --shortcuts) is invalid
 * input, exit 1: echoing it back unchanged with exit 0 hid a swapped argument. ShadowEndpointSlices are Liqo's input
 * to its own EndpointSlices on the direct-connections path.
 */
const INPUT_KINDS: ReadonlySet<string> = new Set(['EndpointSlice', 'ShadowEndpointSlice', 'AdmissionReview']);

/** Why `object` is no input `rewrite` takes, or undefined. */
function kindProblem(object: JsonObject, where: string): string | undefined {
  const kind = stringField(object, 'kind');
  if (kind !== undefined && INPUT_KINDS.has(kind)) return undefined;
  const what = `${stringField(object, 'apiVersion') ?? '(no apiVersion)'} ${kind ?? '(no kind)'} ${sliceName(object)}`;
  const hint = kind === 'IP' ? '; give the hub\'s IPs with --hub'
    : kind === 'ForeignClusterConnection' || kind === 'Configuration' || kind === 'Connection'
      ? `; give ${kind} objects with --shortcuts (the hub's Configurations with --hub)` : '';
  return `${what}${where} is not an input rewrite takes (an EndpointSlice or a ShadowEndpointSlice, a List of them, or an AdmissionReview)${hint}`;
}

/**
 * What the rewrite decides for one object, each address traced, without its output or patch: all `status` reads of
 * each of 20,000 slices, where building the rewritten copy and its patch cost a fifth of its fold. A string says why
 * the object is invalid input.
 */
export function decideObject(object: unknown, snapshot: Snapshot, options: OfflineOptions, prefix = ''): SliceReport | string {
  if (isObject(object)) {
    const problem = kindProblem(object, prefix ? ` at ${prefix}` : '');
    if (problem !== undefined) return problem;
  }
  if (isShadowEndpointSliceObject(object)) {
    const repair = repairShadowEndpointSlice(object, snapshot, { clusterId: options.clusterId });
    const name = sliceName(object);
    if (repair.kind !== 'skip') return { kind: 'shadow', name, result: repair };
    if (repair.reason === 'malformed') return `malformed ShadowEndpointSlice ${name}${prefix ? ` at ${prefix}` : ''}: ${repair.detail}`;
    return { kind: 'shadow', name, result: { skip: repair.reason, detail: repair.detail } };
  }
  const traces: AddressTrace[] = [];
  const result = rewriteEndpointSlice(object, snapshot, options, (trace) => traces.push(trace));
  const report = { kind: 'endpointslice' as const, name: sliceName(object), result, traces };
  // The webhook lets a broken slice through untouched; offline, it is invalid input the user should hear about.
  if (isSkip(result) && result.skip === 'malformed') return `malformed EndpointSlice ${report.name}${prefix ? ` at ${prefix}` : ''}: ${result.detail}`;
  // An EndpointSlice of another API version (or a kind another route takes that no route here handles yet).
  if (isSkip(result) && result.skip === 'not-endpointslice' && stringField(isObject(object) ? object : {}, 'kind') === 'EndpointSlice') {
    return `${report.name}${prefix ? ` at ${prefix}` : ''}: ${result.detail}`;
  }
  return report;
}

function rewriteOne(object: unknown, snapshot: Snapshot, options: OfflineOptions, prefix: string):
  { output: unknown; patch: PatchOperation[]; report: SliceReport } | string {
  const report = decideObject(object, snapshot, options, prefix);
  if (typeof report === 'string') return report;
  if ('skip' in report.result) return { output: object, patch: [], report };
  const prefixed = (operation: PatchOperation) => ({ ...operation, path: `${prefix}${operation.path}` });
  if (report.kind === 'shadow') {
    // Repaired as the shadow route would, with each listed address's outcome for --explain.
    const repair = report.result;
    return { output: repair.kind === 'changed' ? repair.object : object, patch: shadowPatchFor(repair).map(prefixed), report };
  }
  return { output: applyRewrite(report.result), patch: patchFor(report.result).map(prefixed), report };
}

function leftAlone(outcome: { readonly kind: 'skipped'; readonly reason: ReviewSkipReason; readonly detail: string } | { readonly kind: 'error'; readonly error: unknown }): LeftAlone {
  return outcome.kind === 'skipped' ? { skip: outcome.reason, detail: outcome.detail } : { skip: 'internal-error', detail: String(outcome.error) };
}

/** Whether a review is of a ShadowEndpointSlice: by its kind, or without one by its object. */
function isShadowReview(request: AdmissionRequest): boolean {
  return request.kind === undefined ? isShadowEndpointSliceObject(request.object) : request.kind.group === SHADOW_GROUP && request.kind.kind === SHADOW_KIND;
}

/** An AdmissionReview: answered exactly as the server would, with the traces of its object for --explain. */
function reviewDocument(name: string, value: JsonObject, snapshot: Snapshot, options: OfflineOptions): DocumentResult | string {
  const decoded = decodeReview(value);
  if (!decoded.ok) return `${name}: invalid AdmissionReview: ${decoded.message}`;
  const request = decoded.value;
  if (isShadowReview(request)) {
    const outcome = reviewShadowEndpointSlice(request, snapshot, { clusterId: options.clusterId });
    const result = outcome.kind === 'patched' || outcome.kind === 'unchanged' ? outcome.rewrite : leftAlone(outcome);
    return {
      name,
      output: admissionResponse(request, outcome),
      patch: outcome.kind === 'patched' ? shadowPatchFor(outcome.rewrite) : [],
      slices: [{ kind: 'shadow', name: sliceName(request.object), result }],
    };
  }
  const traces: AddressTrace[] = [];
  const outcome = reviewEndpointSlice(request, snapshot, { ...options, observe: (trace) => traces.push(trace) });
  const explained: SliceRewrite | LeftAlone = outcome.kind === 'patched' || outcome.kind === 'unchanged' ? outcome.rewrite : leftAlone(outcome);
  return {
    name,
    output: admissionResponse(request, outcome),
    patch: outcome.kind === 'patched' ? patchFor(outcome.rewrite) : [],
    slices: [{ kind: 'endpointslice', name: sliceName(request.object), result: explained, traces }],
  };
}

/** One item of a List, rewritten: what each output format takes of it. */
export interface ItemResult {
  readonly output: unknown;
  readonly patch: readonly PatchOperation[];
  readonly report: SliceReport;
}

/** What a typed List's items are, and how their missing apiVersion and kind are put back. */
type ListType = 'EndpointSliceList' | 'ShadowEndpointSliceList' | undefined;

function listType(kind: unknown): ListType {
  return kind === 'EndpointSliceList' || kind === 'ShadowEndpointSliceList' ? kind : undefined;
}

/** Item `i` of a List rewritten in place, the patch paths prefixed with its index; a string says why it is invalid. */
function rewriteItem(name: string, typed: ListType, item: unknown, i: number, snapshot: Snapshot, options: OfflineOptions): ItemResult | string {
  const whole = typed === 'EndpointSliceList' ? asEndpointSlice(item) : typed === 'ShadowEndpointSliceList' ? asShadowEndpointSlice(item) : item;
  const one = rewriteOne(whole, snapshot, options, `/items/${i}`);
  if (typeof one === 'string') return `${name}: ${one}`;
  return typed !== undefined ? { ...one, output: isObject(item) && isObject(one.output) ? withoutAddedType(item, one.output) : one.output } : one;
}

/** A List: every item rewritten in place, the patch paths prefixed with the item's index. */
function listDocument(name: string, value: JsonObject, items: readonly Json[], snapshot: Snapshot, options: OfflineOptions): DocumentResult | string {
  const typed = listType(stringField(value, 'kind'));
  const rewritten = [];
  for (const [i, item] of items.entries()) {
    const one = rewriteItem(name, typed, item, i, snapshot, options);
    if (typeof one === 'string') return one;
    rewritten.push(one);
  }
  return {
    name,
    output: { ...value, items: rewritten.map((r) => r.output) },
    patch: rewritten.flatMap((r) => r.patch),
    slices: rewritten.map((r) => r.report),
  };
}

/**
 * A List read item by item (documents.ts): each item is read, rewritten and handed to `onItem` before the next one
 * is read, so that only the one in hand is held. A string says why the input is invalid.
 */
export function rewriteListItems(list: ListDocument, snapshot: Snapshot, options: OfflineOptions, onItem: (result: ItemResult) => void): string | undefined {
  const typed = listType(list.header['kind']);
  for (let i = 0; i < list.length; i++) {
    const item = list.item(i);
    if (!item.ok) return item.message;
    const one = rewriteItem(list.name, typed, item.value, i, snapshot, options);
    if (typeof one === 'string') return one;
    onItem(one);
  }
  return undefined;
}

/** One document whole; a string says why it is invalid. */
export function rewriteDocument(document: Document, snapshot: Snapshot, options: OfflineOptions = {}): DocumentResult | string {
  const { value, name } = document;
  if (!isObject(value)) return `${name}: not an object (expected an EndpointSlice, a ShadowEndpointSlice, a List or an AdmissionReview)`;
  const kind = stringField(value, 'kind');
  if (kind === 'AdmissionReview') return reviewDocument(name, value, snapshot, options);
  const items = kind?.endsWith('List') ? field(value, 'items') : undefined;
  if (isArray(items)) return listDocument(name, value, items, snapshot, options);
  const one = rewriteOne(value, snapshot, options, '');
  if (typeof one === 'string') return `${name}: ${one}`;
  return { name, output: one.output, patch: one.patch, slices: [one.report] };
}

/** The typed-list item as it came, with only the rewritten parts: apiVersion/kind added for the rewrite go again. */
function withoutAddedType(item: JsonObject, output: JsonObject): JsonObject {
  const { apiVersion, kind, ...rest } = output;
  return {
    ...(Object.hasOwn(item, 'apiVersion') && apiVersion !== undefined ? { apiVersion } : {}),
    ...(Object.hasOwn(item, 'kind') && kind !== undefined ? { kind } : {}),
    ...rest,
  };
}

/** All or nothing: one invalid document fails the run (exit 1) before anything is printed. */
export function rewriteDocuments(documents: readonly Document[], snapshot: Snapshot, options: OfflineOptions = {}): Result<readonly DocumentResult[]> {
  const results: DocumentResult[] = [];
  for (const document of documents) {
    const result = rewriteDocument(document, snapshot, options);
    if (typeof result === 'string') return failure(result);
    results.push(result);
  }
  return success(results);
}
