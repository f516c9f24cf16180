// Decodes an AdmissionReview from untrusted JSON: v1, or v1beta1 answered in kind. No casts, only narrowing.
import { field, isObject, objectField, stringField, type Json, type JsonObject } from '../core/json.ts';
import { failure, success, type Result } from '../core/result.ts';

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
  /** `request.options.fieldManager`: who writes (Liqo's writer names itself); undefined when not said. */
  readonly fieldManager: string | undefined;
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

/** The Create/UpdateOptions the API server passes along (a patch's become UpdateOptions); anything else is unsaid. */
function fieldManagerOf(options: JsonObject | undefined): string | undefined {
  const manager = options === undefined ? undefined : stringField(options, 'fieldManager');
  return manager === '' ? undefined : manager;
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
    fieldManager: fieldManagerOf(objectField(request, 'options')),
  });
}
