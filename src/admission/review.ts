// Decodes an AdmissionReview from untrusted JSON: v1, or v1beta1 answered in kind. No casts, only narrowing.
import { field, isObject, objectField, stringField, type Json, type JsonObject } from '../core/json.ts';
import { PRODUCT_FIELD_MANAGER } from '../core/endpoint-slice.ts';
import { failure, success, type Result } from '../core/result.ts';
import { SPACES_ONLY, type RecordCheck } from '../core/trust.ts';

export const REVIEW_V1 = 'admission.k8s.io/v1';
export const REVIEW_V1BETA1 = 'admission.k8s.io/v1beta1';
export type ReviewVersion = typeof REVIEW_V1 | typeof REVIEW_V1BETA1;

export interface GroupVersionKind { readonly group: string; readonly version: string; readonly kind: string }

export interface AdmissionRequest {
  readonly apiVersion: ReviewVersion;
  readonly uid: string;
  readonly kind: GroupVersionKind | undefined;
  readonly operation: string;
  readonly dryRun: boolean;
  /** The object exactly as the API server sent it: the patch is computed against this. */
  readonly object: Json | undefined;
  /** The object as stored before this write (UPDATE); what a record in the write must already be in. */
  readonly oldObject: Json | undefined;
  /** The writer's field manager (`request.options.fieldManager` of its create, update or apply), where it gave one. */
  readonly fieldManager?: string | undefined;
}

export type DecodedReview = Result<AdmissionRequest>;

const invalid = failure<AdmissionRequest>;

function groupVersionKind(value: JsonObject | undefined): GroupVersionKind | undefined {
  if (value === undefined) return undefined;
  const version = stringField(value, 'version');
  const kind = stringField(value, 'kind');
  if (version === undefined || kind === undefined) return undefined;
  return { group: stringField(value, 'group') ?? '', version, kind };
}

export function decodeReview(body: unknown): DecodedReview {
  if (!isObject(body)) return invalid('the body is not a JSON object');
  const apiVersion = stringField(body, 'apiVersion');
  if (apiVersion !== REVIEW_V1 && apiVersion !== REVIEW_V1BETA1) {
    return invalid(`apiVersion must be ${REVIEW_V1} or ${REVIEW_V1BETA1}, got ${JSON.stringify(field(body, 'apiVersion') ?? null)}`);
  }
  if (stringField(body, 'kind') !== 'AdmissionReview') {
    return invalid(`kind must be AdmissionReview, got ${JSON.stringify(field(body, 'kind') ?? null)}`);
  }
  const request = objectField(body, 'request');
  if (request === undefined) return invalid('request is missing or not an object');
  const uid = stringField(request, 'uid');
  if (uid === undefined || uid === '') return invalid('request.uid is missing or not a non-empty string');
  const operation = stringField(request, 'operation');
  if (operation === undefined) return invalid('request.operation is missing or not a string');
  return success({
    apiVersion,
    uid,
    kind: groupVersionKind(objectField(request, 'kind')),
    operation,
    dryRun: field(request, 'dryRun') === true,
    object: field(request, 'object'),
    oldObject: field(request, 'oldObject') ?? undefined,
    fieldManager: stringField(objectField(request, 'options') ?? {}, 'fieldManager'),
  });
}

const MUTATED_OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE']);

/**
 * What every resource's review checks before its rule runs: a CREATE or UPDATE, of the resource's own group, version
 * and kind where the review names one (a hand-made review may not). Undefined: the rule runs; else why it does not.
 */
export function notForRule<R extends string>(request: AdmissionRequest, expected: GroupVersionKind, wrongKind: R):
  { readonly reason: 'operation' | R; readonly detail: string } | undefined {
  if (!MUTATED_OPERATIONS.has(request.operation)) return { reason: 'operation', detail: `${request.operation} is not CREATE or UPDATE` };
  const { kind } = request;
  if (kind !== undefined && (kind.group !== expected.group || kind.version !== expected.version || kind.kind !== expected.kind)) {
    return { reason: wrongKind, detail: `${kind.group}/${kind.version} ${kind.kind} is not ${expected.group}/${expected.version} ${expected.kind}` };
  }
  return undefined;
}

/**
 * A record in another writer's write counts only where the stored object already carries it: Liqo's writers copy
 * the hub's annotations, so a record arriving with their write may be a hub tenant's. The product's own writes (its
 * field manager) carry records it wrote. A leaf principal able to write with that field manager could write the
 * addresses themselves, so the field manager is no weaker a proof than the service account (`userInfo`).
 */
export function recordCheck(request: AdmissionRequest): RecordCheck {
  return request.fieldManager === PRODUCT_FIELD_MANAGER ? SPACES_ONLY : { against: 'stored', stored: request.oldObject };
}
