// An in-memory Kubernetes API server that speaks the real REST wire protocol, for tests of the informers, the
// EndpointSlice reconciler and the Lease-based leader election. Plain HTTP on 127.0.0.1, port 0.
//
// What it reproduces (each point checked against the Kubernetes sources, see the notes beside the code):
// - one global, monotonically increasing resourceVersion; uid, creationTimestamp, generation on every object;
// - LIST with label selectors, limit/continue paging at a fixed resourceVersion, resourceVersion(Match) reads;
// - WATCH as a chunked stream of one JSON event per line, resumed from a resourceVersion out of the retained history,
//   `410 Expired` as an in-stream ERROR event once the history is compacted, bookmarks, timeoutSeconds, label
//   selectors with the watch cache's "left the selection → DELETED" rule;
// - create/update/delete and JSON Patch (incl. `test`), the only patch type the product sends, with the API server's
//   status codes and `Status` bodies; a write that changes nothing stores nothing;
// - the status subresource, bearer tokens, a mutating hook standing in for admission webhooks.
// What it does not: server-side apply, managedFields, merge patches, field selectors, finalizers, generateName, RBAC,
// namespaces as objects (any namespace exists), validation, protobuf, CBOR. test/e2e runs the real kube-apiserver for
// all of that; this server is for fast unit tests of the list/watch loop, the reconciler and the leader election.
//
// client-node 1.4.0 recipes, all exercised in kube-api-server.test.ts:
//
//   const kc = new KubeConfig();
//   kc.loadFromFile(await server.kubeconfig());
//
//   // (a) list + watch a custom resource, cluster-wide or in one namespace. makeInformer passes `labelSelector` to
//   //     the watch only: the list function must apply the same selector itself.
//   const custom = kc.makeApiClient(CustomObjectsApi);
//   const all = makeInformer(kc, '/apis/networking.liqo.io/v1beta1/foreignclusterconnections',
//     () => custom.listClusterCustomObject({ group: 'networking.liqo.io', version: 'v1beta1', plural: 'foreignclusterconnections' }));
//   const inLiqo = makeInformer(kc, '/apis/networking.liqo.io/v1beta1/namespaces/liqo/foreignclusterconnections',
//     () => custom.listNamespacedCustomObject({ group: 'networking.liqo.io', version: 'v1beta1', namespace: 'liqo', plural: 'foreignclusterconnections' }));
//   await all.start();
//
//   // (b) JSON Patch is the default Content-Type of every generated patch method (the first JSON-like entry of its
//   //     consumes list), so a plain call sends application/json-patch+json:
//   const discovery = kc.makeApiClient(DiscoveryV1Api);
//   await discovery.patchNamespacedEndpointSlice({ name, namespace, body: [
//     { op: 'test', path: '/metadata/resourceVersion', value: seenResourceVersion },
//     { op: 'replace', path: '/endpoints/0/addresses/0', value: '10.61.0.7' },
//   ] });
//   // A failed `test` answers 422 reason Invalid (not 409); a stale resourceVersion carried in the patched object
//   // (e.g. a `replace` of /metadata/resourceVersion, or a merge patch with metadata.resourceVersion) answers 409.
//
//
// Errors of the generated APIs are `ApiException`s: `code` is the HTTP status, `body` is the response text (a JSON
// `Status` string, not an object; undefined for 401). Watch errors before the stream starts reach `done(err)` with
// `err.statusCode`; errors inside the stream (410) are ERROR events passed to the watch callback.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import jsonpatch from 'fast-json-patch';
import { stringify as toYaml } from 'yaml';

// ---------------------------------------------------------------------------------------------------------------
// Public types

export interface ResourceDefinition {
  /** '' for the core group, served under /api/v1. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly singular?: string;
  readonly shortNames?: readonly string[];
  /** Writes to the main endpoint keep the stored .status; PUT/PATCH on /status change .status only. */
  readonly statusSubresource?: boolean;
  /**
   * A compiled-in type rather than a CRD. Three visible differences on the wire: items of its lists carry no
   * apiVersion/kind (typed lists), a PUT without metadata.resourceVersion is an unconditional update (CRDs answer 422),
   * and DELETE answers a `Status` of Success rather than the deleted object.
   */
  readonly builtin?: boolean;
  /** metadata.generation: 1 on create, +1 on every change outside metadata (and status). Default true. */
  readonly tracksGeneration?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

/** What the server hands back: a copy, free to mutate. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

/**
 * What the server accepts: any JSON object with apiVersion, kind and metadata. Typed as `object` so that client-node
 * models (V1EndpointSlice), readonly JSON builders and KubeObject all fit; the shape is checked at run time.
 */
export type KubeObjectInput = object;

export interface TypeRef {
  readonly apiVersion: string;
  readonly kind: string;
}

export interface ObjectRef extends TypeRef {
  readonly namespace?: string;
  readonly name: string;
}

export type WriteOperation = 'CREATE' | 'UPDATE';

export interface MutateContext {
  readonly operation: WriteOperation;
  /** The stored object an UPDATE replaces. */
  readonly old: KubeObject | undefined;
  readonly resource: ResourceDefinition;
  /** 'status' for writes to the status subresource (webhooks registered for `endpointslices` never see those). */
  readonly subresource: string | undefined;
  readonly dryRun: boolean;
  /** The write's `?fieldManager=` (an AdmissionReview's `request.options.fieldManager`). */
  readonly fieldManager?: string | undefined;
}

/**
 * Stands in for the admission chain: called on every create, update and patch (HTTP or direct) with the object about
 * to be stored; what it returns is stored. Throw a `KubeStatusError` to deny with that status; any other error answers
 * 500. It runs while the server holds its write lock: it may read from the server, but must not write to it.
 */
export type MutateHook = (object: KubeObject, context: MutateContext) => KubeObjectInput | Promise<KubeObjectInput>;

export interface KubeApiServerOptions {
  /** Require `Authorization: Bearer <token>`; anything else answers 401. */
  readonly token?: string;
  readonly mutate?: MutateHook;
  /** The resources served from the start; default `DEFAULT_RESOURCES`. */
  readonly resources?: readonly ResourceDefinition[];
}

export interface KubeconfigOptions {
  /** Folder to write into; default a fresh temporary folder removed by close(). */
  readonly dir?: string;
  /** Token written into the user; default the server's token. `null` writes a user without credentials. */
  readonly token?: string | null;
  /** Namespace of the context. */
  readonly namespace?: string;
}

export interface FailureMatch {
  /** e.g. 'PATCH'; any method when absent. */
  readonly method?: string;
  /** A substring of the URL path (no query), e.g. '/endpointslices/'. */
  readonly pathIncludes?: string;
  /** How the URL path (no query) ends, e.g. '/leases' for lists of Leases and not for one Lease. */
  readonly pathEndsWith?: string;
  /** true: only watch requests; false: only non-watch requests; absent: both. */
  readonly watch?: boolean;
  /** How many matching requests fail; default 1. */
  readonly count?: number;
}

/** A request the server holds on arrival (holdNext). */
export interface HeldRequest {
  /** Resolves once a matching request has arrived and is held. */
  readonly arrived: Promise<void>;
  /** Lets it go on: it is served as it would have been, an injected failure included. */
  release(): void;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
  /** The parsed JSON body; undefined when there was none. */
  readonly body: unknown;
  readonly watch: boolean;
  /** The HTTP status answered; undefined while the response is being prepared. */
  readonly status: number | undefined;
}

export type UnavailableMode =
  /** Every request answers 503 ServiceUnavailable (an API server behind a load balancer with no healthy backend). */
  | 'status'
  /** Every connection is reset as soon as it is accepted: clients see ECONNRESET / "socket hang up". */
  | 'reset';

export interface KubeApiServer {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Every request received, in arrival order (a copy). */
  readonly requests: readonly RecordedRequest[];
  close(): Promise<void>;
  /** Writes a kubeconfig pointing at this server and returns its path. A string is taken as `{ dir }`. */
  kubeconfig(options?: string | KubeconfigOptions): Promise<string>;
  registerResource(definition: ResourceDefinition): void;
  /** Like deleting a CRD: its objects go, its watches end, its paths answer 404. */
  unregisterResource(type: TypeRef): void;
  /** Direct writes behave like a client's (mutate hook, resourceVersion, watch events) minus auth and injected faults. */
  create(object: KubeObjectInput): Promise<KubeObject>;
  /** Without metadata.resourceVersion the update is unconditional; with a stale one it throws a 409 KubeStatusError. */
  update(object: KubeObjectInput): Promise<KubeObject>;
  /** Like `update` through the status subresource: only `.status` changes (how operators report state). */
  updateStatus(object: KubeObjectInput): Promise<KubeObject>;
  /** Deletes; undefined when there was nothing to delete. */
  remove(ref: ObjectRef): Promise<KubeObject | undefined>;
  get(ref: ObjectRef): KubeObject | undefined;
  list(type: TypeRef, options?: { readonly namespace?: string }): KubeObject[];
  /** The current global resourceVersion. */
  resourceVersion(): string;
  /** Forgets the change history: a watch resumed from any resourceVersion before now gets 410 Expired. */
  compact(): void;
  /** Sends a BOOKMARK at the current resourceVersion to every open watch that asked for bookmarks. */
  bookmark(): void;
  /** Destroys the sockets of open watches, mid-stream, without the chunked terminator (a network failure). */
  dropWatches(): void;
  /** Ends open watches cleanly, as the API server does when a watch times out. */
  endWatches(): void;
  openWatches(): number;
  /** TCP connections accepted since the start: how many a client opened. */
  connectionsAccepted(): number;
  /**
   * The next `count` requests matching `match` answer `status` with a matching `Status` body, before any other work.
   * A 429 or 503 says Retry-After: 1 (the API server's own), or `retryAfterSeconds` (0: no header).
   */
  failNext(match: FailureMatch, status: number, options?: { readonly retryAfterSeconds?: number }): void;
  /**
   * The next request matching `match` (one request: `count` is not read) waits on arrival, before any other work,
   * until released: a request in flight for as long as a test needs, while the test moves the world. An injected
   * failure is taken once it goes on; close() lets go of whatever is still held.
   */
  holdNext(match: FailureMatch): HeldRequest;
  /** While unavailable, open watches are dropped and requests fail as `mode` says (default 'status'). */
  setAvailable(available: boolean, options?: { readonly mode?: UnavailableMode }): void;
  /** From now on only this bearer token is accepted (a rotated, revoked one answers 401); open watches carry on. */
  setToken(token: string): void;
}

export const ENDPOINT_SLICES: ResourceDefinition = {
  group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', singular: 'endpointslice', kind: 'EndpointSlice',
  namespaced: true, builtin: true,
};
export const LEASES: ResourceDefinition = {
  group: 'coordination.k8s.io', version: 'v1', plural: 'leases', singular: 'lease', kind: 'Lease', namespaced: true,
  builtin: true, tracksGeneration: false,
};
export const LIQO_CONNECTIONS: ResourceDefinition = {
  group: 'networking.liqo.io', version: 'v1beta1', plural: 'connections', singular: 'connection', kind: 'Connection',
  namespaced: true, statusSubresource: true,
};
export const LIQO_CONFIGURATIONS: ResourceDefinition = {
  group: 'networking.liqo.io', version: 'v1beta1', plural: 'configurations', singular: 'configuration', kind: 'Configuration',
  namespaced: true, shortNames: ['conf'], statusSubresource: true,
};
/** Liqo's IPAM record of an address (v1.2.0 apis/ipam/v1alpha1): served by a hub, not by default here. */
export const LIQO_IPS: ResourceDefinition = {
  group: 'ipam.liqo.io', version: 'v1alpha1', plural: 'ips', singular: 'ip', kind: 'IP', namespaced: true, statusSubresource: true,
};
export const FOREIGN_CLUSTER_CONNECTIONS: ResourceDefinition = {
  group: 'networking.liqo.io', version: 'v1beta1', plural: 'foreignclusterconnections',
  singular: 'foreignclusterconnection', kind: 'ForeignClusterConnection', namespaced: true,
  shortNames: ['fcc', 'fcconnection'], statusSubresource: true,
};
export const DEFAULT_RESOURCES: readonly ResourceDefinition[] = [
  ENDPOINT_SLICES, LEASES, LIQO_CONNECTIONS, LIQO_CONFIGURATIONS, FOREIGN_CLUSTER_CONNECTIONS,
];

// ---------------------------------------------------------------------------------------------------------------
// Status errors: the bodies of k8s.io/apimachinery/pkg/api/errors, message texts included.

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly code: number;
}

export class KubeStatusError extends Error {
  readonly status: Status;
  constructor(code: number, reason: string, message: string, details?: Readonly<Record<string, unknown>>) {
    super(message);
    this.name = 'KubeStatusError';
    this.status = {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason,
      ...(details === undefined ? {} : { details }), code,
    };
  }
}

const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

function groupResource(def: ResourceDefinition): string {
  return def.group === '' ? def.plural : `${def.plural}.${def.group}`;
}

function groupKind(def: ResourceDefinition): string {
  return def.group === '' ? def.kind : `${def.kind}.${def.group}`;
}

const errors = {
  notFound: (def: ResourceDefinition, name: string) =>
    new KubeStatusError(404, 'NotFound', `${groupResource(def)} "${name}" not found`,
      { name, group: def.group, kind: def.plural }),
  // What the API server answers for a path no installed resource serves (a CRD that is not installed).
  noSuchResource: () => new KubeStatusError(404, 'NotFound', 'the server could not find the requested resource', {}),
  alreadyExists: (def: ResourceDefinition, name: string) =>
    new KubeStatusError(409, 'AlreadyExists', `${groupResource(def)} "${name}" already exists`,
      { name, group: def.group, kind: def.plural }),
  conflict: (def: ResourceDefinition, name: string, why: string) =>
    new KubeStatusError(409, 'Conflict', `Operation cannot be fulfilled on ${groupResource(def)} "${name}": ${why}`,
      { name, group: def.group, kind: def.plural }),
  invalid: (def: ResourceDefinition, name: string, field: string, detail: string) =>
    new KubeStatusError(422, 'Invalid', `${groupKind(def)} "${name}" is invalid: ${field}: ${detail}`,
      { name, group: def.group, kind: def.kind, causes: [{ reason: 'FieldValueInvalid', message: detail, field }] }),
  badRequest: (message: string) => new KubeStatusError(400, 'BadRequest', message),
  expired: (message: string) => new KubeStatusError(410, 'Expired', message),
  unauthorized: () => new KubeStatusError(401, 'Unauthorized', 'Unauthorized'),
  methodNotSupported: (def: ResourceDefinition, action: string) =>
    new KubeStatusError(405, 'MethodNotAllowed', `${action} is not supported on resources of kind "${groupResource(def)}"`,
      { group: def.group, kind: def.plural }),
  unsupportedMediaType: (contentType: string) =>
    new KubeStatusError(415, 'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (got ${contentType})`),
  internal: (message: string) =>
    new KubeStatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
  tooLargeResourceVersion: (requested: number, current: number) =>
    new KubeStatusError(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`,
      { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }),
};

/** The Status a generic failure of `code` carries: NewGenericServerResponse's reasons and messages. */
function genericStatusError(code: number, def: ResourceDefinition | undefined, name: string | undefined, retryAfterSeconds = 1): KubeStatusError {
  if (code === 409 && def !== undefined) return errors.conflict(def, name ?? '', OPTIMISTIC_LOCK_MESSAGE);
  if (code === 404 && def !== undefined && name !== undefined) return errors.notFound(def, name);
  const table: Record<number, readonly [string, string]> = {
    400: ['BadRequest', 'the server rejected our request for an unknown reason'],
    401: ['Unauthorized', 'Unauthorized'],
    403: ['Forbidden', 'forbidden: injected failure'],
    404: ['NotFound', 'the server could not find the requested resource'],
    409: ['Conflict', 'the server reported a conflict'],
    410: ['Expired', 'The resourceVersion for the provided list is too old.'],
    422: ['Invalid', 'the server rejected our request due to an error in our request'],
    429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
    500: ['InternalError', 'Internal error occurred: injected failure'],
    503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
    504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
  };
  const [reason, message] = table[code] ?? ['Unknown', `the server responded with the status code ${code} but did not return more information`];
  const retry = code === 429 || code === 503 ? { retryAfterSeconds } : undefined;
  return new KubeStatusError(code, reason, message, retry);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON helpers

type JsonMap = Record<string, unknown>;

function isMap(value: unknown): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function copy<T>(value: T): T {
  return structuredClone(value);
}

function metadataOf(object: JsonMap): JsonMap {
  const existing = object['metadata'];
  if (isMap(existing)) return existing;
  const fresh: JsonMap = {};
  object['metadata'] = fresh;
  return fresh;
}

function text(object: JsonMap, key: string): string | undefined {
  const value = object[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function labelsOf(object: JsonMap): Record<string, string> {
  const labels = metadataOf(object)['labels'];
  const result: Record<string, string> = {};
  if (!isMap(labels)) return result;
  for (const [key, value] of Object.entries(labels)) if (typeof value === 'string') result[key] = value;
  return result;
}

/** Only ever called on objects this server built: metadata is an object, name a string. */
function isKubeObject(value: unknown): value is KubeObject {
  return isMap(value) && isMap(value['metadata']);
}

function toKubeObject(value: JsonMap): KubeObject {
  const object = copy(value);
  if (!isKubeObject(object)) throw new Error('stored object without metadata');
  return object;
}

function nowRfc3339(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function randomSuffix(): string {
  // The alphabet of k8s.io/apimachinery/pkg/util/rand: no vowels, no look-alikes.
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let suffix = '';
  for (let i = 0; i < 5; i += 1) suffix += alphabet[Math.floor(Math.random() * alphabet.length)];
  return suffix;
}

// ---------------------------------------------------------------------------------------------------------------
// Label selectors (k8s.io/apimachinery/pkg/labels): equality, set-based and existence requirements.

type Predicate = (object: JsonMap) => boolean;

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i += 1) {
    const c = selector[i];
    if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (c === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((part) => part.trim());
}

function checkLabel(key: string, values: readonly string[], requirement: string): void {
  if (!LABEL_KEY.test(key)) throw errors.badRequest(`unable to parse requirement: invalid label key "${key}" in "${requirement}"`);
  for (const value of values) {
    if (!LABEL_VALUE.test(value)) throw errors.badRequest(`unable to parse requirement: invalid label value "${value}" in "${requirement}"`);
  }
}

export function parseLabelSelector(selector: string | undefined): Predicate {
  if (selector === undefined || selector.trim() === '') return () => true;
  const requirements = splitTopLevel(selector).map((requirement): ((labels: Record<string, string>) => boolean) => {
    let match: RegExpExecArray | null;
    if ((match = /^!\s*([^\s=!(),]+)$/.exec(requirement)) !== null) {
      const key = match[1] ?? '';
      checkLabel(key, [], requirement);
      return (labels) => !Object.hasOwn(labels, key);
    }
    if ((match = /^([^\s=!(),]+)\s+(in|notin)\s+\(([^()]*)\)$/.exec(requirement)) !== null) {
      const key = match[1] ?? '';
      const values = (match[3] ?? '').split(',').map((value) => value.trim());
      checkLabel(key, values, requirement);
      return match[2] === 'in'
        ? (labels) => Object.hasOwn(labels, key) && values.includes(labels[key] ?? '')
        : (labels) => !Object.hasOwn(labels, key) || !values.includes(labels[key] ?? '');
    }
    if ((match = /^([^\s=!(),]+)\s*(==|=|!=)\s*([^\s=!(),]*)$/.exec(requirement)) !== null) {
      const key = match[1] ?? '';
      const value = match[3] ?? '';
      checkLabel(key, [value], requirement);
      return match[2] === '!='
        ? (labels) => labels[key] !== value
        : (labels) => Object.hasOwn(labels, key) && labels[key] === value;
    }
    if ((match = /^([^\s=!(),]+)$/.exec(requirement)) !== null) {
      const key = match[1] ?? '';
      checkLabel(key, [], requirement);
      return (labels) => Object.hasOwn(labels, key);
    }
    throw errors.badRequest(`unable to parse requirement: found '${requirement}', expected: a label requirement`);
  });
  return (object) => {
    const labels = labelsOf(object);
    return requirements.every((requirement) => requirement(labels));
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The store: objects, the change history and the open watches. Every write goes through one lock, so a
// read-modify-write (and the mutate hook inside it) never interleaves with another.

interface Resource {
  /** Replaced when the same group/version/plural is registered again, so open watches stay attached. */
  def: ResourceDefinition;
  readonly id: string;
  readonly apiVersion: string;
  /** key → object; key is "namespace/name" for namespaced resources, "name" otherwise. Sorted on read. */
  readonly objects: Map<string, JsonMap>;
}

interface Change {
  readonly rv: number;
  readonly resource: Resource;
  readonly key: string;
  /** undefined when the object was deleted */
  readonly current: JsonMap | undefined;
  /** undefined when the object was created */
  readonly previous: JsonMap | undefined;
}

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: unknown;
}

interface Watcher {
  readonly resource: Resource;
  readonly filter: Predicate;
  readonly bookmarks: boolean;
  readonly response: ServerResponse;
}

interface WriteOptions {
  readonly subresource: string | undefined;
  readonly dryRun: boolean;
  readonly fieldManager?: string | undefined;
  /** Through the REST API (true) or a direct test write (false): the API's own checks apply only to the former. */
  readonly fromClient: boolean;
}


function resourceId(group: string, version: string, plural: string): string {
  return `${group}/${version}/${plural}`;
}

function apiVersionOf(def: ResourceDefinition): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`;
}

function objectKey(def: ResourceDefinition, namespace: string | undefined, name: string): string {
  return def.namespaced ? `${namespace ?? ''}/${name}` : name;
}

function withResourceVersion(object: JsonMap, rv: number): JsonMap {
  const result = copy(object);
  metadataOf(result)['resourceVersion'] = String(rv);
  return result;
}

/** How the watch cache shows one change to one watcher (cacheWatcher.convertToWatchEvent). */
function eventFor(change: Change, filter: Predicate): WatchEvent | undefined {
  const currentPasses = change.current !== undefined && filter(change.current);
  const previousPasses = change.previous !== undefined && filter(change.previous);
  if (currentPasses && !previousPasses) return { type: 'ADDED', object: change.current };
  if (currentPasses && previousPasses) return { type: 'MODIFIED', object: change.current };
  if (!currentPasses && previousPasses && change.previous !== undefined) {
    // A deleted object, or one that left the selection, is shown as it last matched, at the change's version.
    return { type: 'DELETED', object: withResourceVersion(change.previous, change.rv) };
  }
  return undefined;
}

function writeEvent(response: ServerResponse, event: WatchEvent): void {
  if (!response.writableEnded && !response.destroyed) response.write(`${JSON.stringify(event)}\n`);
}

class Store {
  private rv = 1;
  /** Changes with rv > compactedAt are retained; a watch may resume from any rv >= compactedAt. */
  private compactedAt = 1;
  private readonly history: Change[] = [];
  private readonly resourcesById = new Map<string, Resource>();
  private readonly resourcesByType = new Map<string, Resource>();
  readonly watchers = new Set<Watcher>();
  private lock: Promise<unknown> = Promise.resolve();

  constructor(private readonly mutate: MutateHook | undefined) {}

  currentRv(): number {
    return this.rv;
  }

  oldestResumableRv(): number {
    return this.compactedAt;
  }

  register(def: ResourceDefinition): void {
    const id = resourceId(def.group, def.version, def.plural);
    const existing = this.resourcesById.get(id);
    if (existing !== undefined) {
      this.resourcesByType.delete(`${existing.apiVersion}|${existing.def.kind}`);
      existing.def = def;
      this.resourcesByType.set(`${existing.apiVersion}|${def.kind}`, existing);
      return;
    }
    const resource: Resource = { def, id, apiVersion: apiVersionOf(def), objects: new Map() };
    this.resourcesById.set(id, resource);
    this.resourcesByType.set(`${resource.apiVersion}|${def.kind}`, resource);
  }

  unregister(type: TypeRef): void {
    const resource = this.byType(type);
    this.resourcesById.delete(resource.id);
    this.resourcesByType.delete(`${resource.apiVersion}|${resource.def.kind}`);
    for (const watcher of this.watchers) if (watcher.resource === resource) watcher.response.end();
  }

  resources(): Resource[] {
    return [...this.resourcesById.values()];
  }

  byPath(group: string, version: string, plural: string): Resource | undefined {
    return this.resourcesById.get(resourceId(group, version, plural));
  }

  byType(type: TypeRef): Resource {
    const resource = this.resourcesByType.get(`${type.apiVersion}|${type.kind}`);
    if (resource === undefined) throw new Error(`no resource registered for ${type.apiVersion} ${type.kind}`);
    return resource;
  }

  compact(): void {
    this.compactedAt = this.rv;
    this.history.length = 0;
  }

  /** The resource's objects as they were at `rv`, rebuilt by undoing the retained history; sorted by key. */
  objectsAt(resource: Resource, rv: number): Array<[string, JsonMap]> {
    const objects = new Map(resource.objects);
    for (let i = this.history.length - 1; i >= 0; i -= 1) {
      const change = this.history[i];
      if (change === undefined || change.rv <= rv) break;
      if (change.resource !== resource) continue;
      if (change.previous === undefined) objects.delete(change.key);
      else objects.set(change.key, change.previous);
    }
    return [...objects.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  changesAfter(resource: Resource, rv: number): Change[] {
    return this.history.filter((change) => change.rv > rv && change.resource === resource);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private commit(resource: Resource, key: string, current: JsonMap | undefined, previous: JsonMap | undefined): void {
    const change: Change = { rv: this.rv, resource, key, current, previous };
    if (current === undefined) resource.objects.delete(key);
    else resource.objects.set(key, current);
    this.history.push(change);
    for (const watcher of this.watchers) {
      if (watcher.resource !== resource) continue;
      const event = eventFor(change, watcher.filter);
      if (event !== undefined) writeEvent(watcher.response, event);
    }
  }

  private async admit(resource: Resource, object: JsonMap, old: JsonMap | undefined, operation: WriteOperation,
    options: WriteOptions): Promise<JsonMap> {
    if (this.mutate === undefined) return object;
    let result: unknown;
    try {
      result = await this.mutate(toKubeObject(object), {
        operation, old: old === undefined ? undefined : toKubeObject(old), resource: resource.def,
        subresource: options.subresource, dryRun: options.dryRun, fieldManager: options.fieldManager,
      });
    } catch (error) {
      if (error instanceof KubeStatusError) throw error;
      throw errors.internal(`admission webhook "mutate" failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!isMap(result)) throw errors.internal('admission webhook "mutate" returned something that is not an object');
    return asMap(result);
  }

  private checkTypeMeta(resource: Resource, object: JsonMap): void {
    const apiVersion = object['apiVersion'];
    const kind = object['kind'];
    if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== resource.apiVersion) {
      throw errors.badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${resource.apiVersion})`);
    }
    if (kind !== undefined && kind !== '' && kind !== resource.def.kind) {
      throw errors.badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${resource.def.kind})`);
    }
  }

  get(resource: Resource, namespace: string | undefined, name: string): JsonMap | undefined {
    return resource.objects.get(objectKey(resource.def, namespace, name));
  }

  create(resource: Resource, namespace: string | undefined, body: JsonMap, options: WriteOptions): Promise<JsonMap> {
    return this.exclusive(async () => {
      const def = resource.def;
      this.checkTypeMeta(resource, body);
      let object = copy(body);
      const metadata = metadataOf(object);
      if (def.namespaced) {
        const own = text(metadata, 'namespace');
        if (own !== undefined && namespace !== undefined && own !== namespace) {
          throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
        }
        const effective = namespace ?? own;
        if (effective === undefined) throw errors.badRequest('an empty namespace may not be set during creation');
        metadata['namespace'] = effective;
      } else {
        delete metadata['namespace'];
      }
      // etcd3 store: "resourceVersion should not be set on objects to be created", an internal error.
      if (options.fromClient && text(metadata, 'resourceVersion') !== undefined) {
        throw errors.internal('resourceVersion should not be set on objects to be created');
      }
      delete metadata['resourceVersion'];
      if (text(metadata, 'name') === undefined) {
        throw errors.invalid(def, '', 'metadata.name', 'Required value: name or generateName is required');
      }
      object = await this.admit(resource, object, undefined, 'CREATE', options);
      object['apiVersion'] = resource.apiVersion;
      object['kind'] = def.kind;
      const admitted = metadataOf(object);
      const name = text(admitted, 'name') ?? '';
      const key = objectKey(def, text(admitted, 'namespace'), name);
      if (resource.objects.has(key)) throw errors.alreadyExists(def, name);
      admitted['uid'] = randomUUID();
      admitted['creationTimestamp'] = nowRfc3339();
      if (def.tracksGeneration === false) delete admitted['generation'];
      else admitted['generation'] = 1;
      // The status strategy resets .status on create; direct test writes keep it so a test can seed any state.
      if (def.statusSubresource === true && options.fromClient) delete object['status'];
      if (options.dryRun) return object;
      this.rv += 1;
      admitted['resourceVersion'] = String(this.rv);
      this.commit(resource, key, object, undefined);
      return object;
    });
  }

  /**
   * PUT (`candidate` is the body) and PATCH (`candidate` is computed from the stored object inside the lock).
   * `unconditional` allows a candidate without resourceVersion (built-in types over PUT, every direct update).
   */
  update(resource: Resource, namespace: string | undefined, name: string,
    candidateFor: (stored: JsonMap) => JsonMap, unconditional: boolean, options: WriteOptions): Promise<JsonMap> {
    return this.exclusive(async () => {
      const def = resource.def;
      const key = objectKey(def, namespace, name);
      const old = resource.objects.get(key);
      if (old === undefined) throw errors.notFound(def, name);
      let candidate = candidateFor(copy(old));
      this.checkTypeMeta(resource, candidate);
      const candidateMeta = metadataOf(candidate);
      const ownName = text(candidateMeta, 'name');
      if (ownName !== undefined && ownName !== name) {
        throw errors.badRequest(`the name of the object (${ownName}) does not match the name on the URL (${name})`);
      }
      const ownNamespace = text(candidateMeta, 'namespace');
      if (def.namespaced && ownNamespace !== undefined && ownNamespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      candidate = await this.admit(resource, candidate, old, 'UPDATE', options);
      const oldMeta = metadataOf(old);
      const requestedRv = text(metadataOf(candidate), 'resourceVersion');
      if (requestedRv === undefined && !unconditional) {
        throw errors.invalid(def, name, 'metadata.resourceVersion', 'Invalid value: 0x0: must be specified for an update');
      }
      if (requestedRv !== undefined && requestedRv !== oldMeta['resourceVersion']) {
        throw errors.conflict(def, name, OPTIMISTIC_LOCK_MESSAGE);
      }
      const next = prepareUpdate(resource, old, candidate, options.subresource);
      if (isDeepStrictEqual(next, old)) return old; // a no-op write stores nothing: no new resourceVersion, no event
      if (options.dryRun) return next;
      this.rv += 1;
      metadataOf(next)['resourceVersion'] = String(this.rv);
      this.commit(resource, key, next, old);
      return next;
    });
  }

  remove(resource: Resource, namespace: string | undefined, name: string,
    preconditions: { uid?: string; resourceVersion?: string }, options: WriteOptions): Promise<JsonMap> {
    return this.exclusive(async () => {
      const def = resource.def;
      const key = objectKey(def, namespace, name);
      const old = resource.objects.get(key);
      if (old === undefined) throw errors.notFound(def, name);
      const oldMeta = metadataOf(old);
      if (preconditions.uid !== undefined && preconditions.uid !== oldMeta['uid']) {
        throw errors.conflict(def, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${String(oldMeta['uid'])}`);
      }
      if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== oldMeta['resourceVersion']) {
        throw errors.conflict(def, name, `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${String(oldMeta['resourceVersion'])}`);
      }
      if (options.dryRun) return old;
      this.rv += 1;
      this.commit(resource, key, undefined, old);
      return withResourceVersion(old, this.rv);
    });
  }
}

/** The registry's BeforeUpdate: server-owned metadata wins, the status strategy applies, generation moves. */
function prepareUpdate(resource: Resource, old: JsonMap, candidate: JsonMap, subresource: string | undefined): JsonMap {
  const def = resource.def;
  let next: JsonMap;
  if (def.statusSubresource === true && subresource === 'status') {
    // The status strategy copies the stored object and takes only .status from the request.
    next = copy(old);
    if (candidate['status'] === undefined) delete next['status'];
    else next['status'] = copy(candidate['status']);
  } else {
    next = copy(candidate);
    if (def.statusSubresource === true) {
      if (old['status'] === undefined) delete next['status'];
      else next['status'] = copy(old['status']);
    }
  }
  next['apiVersion'] = resource.apiVersion;
  next['kind'] = def.kind;
  const oldMeta = metadataOf(old);
  const nextMeta = metadataOf(next);
  for (const field of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds',
    'generation', 'resourceVersion']) {
    if (oldMeta[field] === undefined) delete nextMeta[field];
    else nextMeta[field] = copy(oldMeta[field]);
  }
  if (def.tracksGeneration !== false) {
    const outsideMetadata = (object: JsonMap): JsonMap => {
      const { metadata: _metadata, status, ...rest } = object;
      return def.statusSubresource === true ? rest : { ...rest, status };
    };
    if (!isDeepStrictEqual(outsideMetadata(old), outsideMetadata(next))) {
      nextMeta['generation'] = (typeof oldMeta['generation'] === 'number' ? oldMeta['generation'] : 0) + 1;
    }
  }
  return next;
}

function applyJsonPatch(stored: JsonMap, patch: unknown): JsonMap {
  if (!Array.isArray(patch)) {
    throw errors.badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  try {
    const result: unknown = jsonpatch.applyPatch(stored, patch, true, false).newDocument;
    if (!isMap(result)) throw new Error('the patched document is not an object');
    return result;
  } catch (error) {
    // patch.go: every failure to apply a decoded patch, a failed `test` included, is NewGenericServerResponse(422),
    // whose message drops the cause.
    if (error instanceof KubeStatusError) throw error;
    throw new KubeStatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  }
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

interface ResourceRoute {
  readonly resource: Resource;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  readonly watchPath: boolean;
}

const MAX_BODY_BYTES = 3 * 1024 * 1024; // the API server's request body limit

function parseBool(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(payload)),
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  response.end(payload);
}

function sendStatus(response: ServerResponse, error: KubeStatusError): void {
  const headers: Record<string, string> = {};
  const retry = error.status.details?.['retryAfterSeconds'];
  if (typeof retry === 'number' && retry > 0) headers['Retry-After'] = String(retry);
  sendJson(response, error.status.code, error.status, headers);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new KubeStatusError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isMap(decoded) && decoded['v'] === 'meta.k8s.io/v1' && typeof decoded['rv'] === 'number' && typeof decoded['start'] === 'string') {
      return { rv: decoded['rv'], start: decoded['start'] };
    }
  } catch {
    // fall through
  }
  throw errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

function parseRv(value: string): number {
  if (!/^\d+$/.test(value)) throw errors.badRequest(`invalid resource version: ${value}`);
  return Number(value);
}

function matches(match: FailureMatch, method: string, path: string, watch: boolean): boolean {
  return (match.method === undefined || match.method.toUpperCase() === method)
    && (match.pathIncludes === undefined || path.includes(match.pathIncludes))
    && (match.pathEndsWith === undefined || path.endsWith(match.pathEndsWith))
    && (match.watch === undefined || match.watch === watch);
}

class ApiServer implements KubeApiServer {
  url = '';
  private readonly store: Store;
  private readonly server = createServer((request, response) => void this.handle(request, response));
  private readonly sockets = new Set<Socket>();
  private accepted = 0;
  private readonly log: Array<{ -readonly [K in keyof RecordedRequest]: RecordedRequest[K] }> = [];
  private readonly failures: Array<{ match: FailureMatch; status: number; remaining: number; retryAfterSeconds: number | undefined }> = [];
  private readonly holds: Array<{ match: FailureMatch; arrive: () => void; released: Promise<void> }> = [];
  /** Every hold's release, taken or not: close() must not leave a request waiting. */
  private readonly releases: (() => void)[] = [];
  private readonly tempDirs: string[] = [];
  private unavailable: UnavailableMode | undefined;
  private token: string | undefined;

  constructor(options: KubeApiServerOptions) {
    this.token = options.token;
    this.store = new Store(options.mutate);
    for (const def of options.resources ?? DEFAULT_RESOURCES) this.store.register(def);
    this.server.on('connection', (socket: Socket) => {
      this.accepted++;
      if (this.unavailable === 'reset') {
        socket.destroy();
        return;
      }
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    const address: AddressInfo | string | null = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
    this.url = `http://127.0.0.1:${address.port}`;
  }

  get requests(): readonly RecordedRequest[] {
    return this.log.map((entry) => ({ ...entry }));
  }

  async close(): Promise<void> {
    for (const release of this.releases.splice(0)) release();
    this.endWatches();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await Promise.all(this.tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  }

  async kubeconfig(options: string | KubeconfigOptions = {}): Promise<string> {
    const settings: KubeconfigOptions = typeof options === 'string' ? { dir: options } : options;
    let dir = settings.dir;
    if (dir === undefined) {
      dir = await mkdtemp(join(tmpdir(), 'kube-api-server-'));
      this.tempDirs.push(dir);
    }
    const token = settings.token === undefined ? this.token : settings.token;
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      // client-node 1.4.0 refuses an http:// server unless the cluster says insecure-skip-tls-verify (createAgent).
      clusters: [{ name: 'test', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'test', user: token === undefined || token === null ? {} : { token } }],
      contexts: [{
        name: 'test',
        context: { cluster: 'test', user: 'test', ...(settings.namespace === undefined ? {} : { namespace: settings.namespace }) },
      }],
      'current-context': 'test',
    };
    const path = join(dir, `kubeconfig-${randomSuffix()}.yaml`);
    await writeFile(path, toYaml(config), { mode: 0o600 });
    return path;
  }

  registerResource(definition: ResourceDefinition): void {
    this.store.register(definition);
  }

  unregisterResource(type: TypeRef): void {
    this.store.unregister(type);
  }

  async create(object: KubeObjectInput): Promise<KubeObject> {
    const body = asMap(object);
    const resource = this.store.byType(typeOf(body));
    const namespace = resource.def.namespaced ? text(metadataOf(body), 'namespace') : undefined;
    const created = await this.store.create(resource, namespace, body, { subresource: undefined, dryRun: false, fromClient: false });
    return toKubeObject(created);
  }

  async update(object: KubeObjectInput): Promise<KubeObject> {
    return this.write(object, undefined);
  }

  async updateStatus(object: KubeObjectInput): Promise<KubeObject> {
    return this.write(object, 'status');
  }

  private async write(object: KubeObjectInput, subresource: 'status' | undefined): Promise<KubeObject> {
    const body = asMap(object);
    const resource = this.store.byType(typeOf(body));
    const metadata = metadataOf(body);
    const updated = await this.store.update(resource, text(metadata, 'namespace'), text(metadata, 'name') ?? '',
      () => body, true, { subresource, dryRun: false, fromClient: false });
    return toKubeObject(updated);
  }

  async remove(ref: ObjectRef): Promise<KubeObject | undefined> {
    const resource = this.store.byType(ref);
    if (this.store.get(resource, ref.namespace, ref.name) === undefined) return undefined;
    const object = await this.store.remove(resource, ref.namespace, ref.name, {}, { subresource: undefined, dryRun: false, fromClient: false });
    return toKubeObject(object);
  }

  get(ref: ObjectRef): KubeObject | undefined {
    const found = this.store.get(this.store.byType(ref), ref.namespace, ref.name);
    return found === undefined ? undefined : toKubeObject(found);
  }

  list(type: TypeRef, options: { readonly namespace?: string } = {}): KubeObject[] {
    const resource = this.store.byType(type);
    return this.store.objectsAt(resource, this.store.currentRv())
      .map(([, object]) => object)
      .filter((object) => options.namespace === undefined || metadataOf(object)['namespace'] === options.namespace)
      .map(toKubeObject);
  }

  resourceVersion(): string {
    return String(this.store.currentRv());
  }

  compact(): void {
    this.store.compact();
  }

  bookmark(): void {
    for (const watcher of this.store.watchers) {
      if (watcher.bookmarks) writeEvent(watcher.response, this.bookmarkEvent(watcher.resource, false));
    }
  }

  dropWatches(): void {
    for (const watcher of [...this.store.watchers]) watcher.response.socket?.destroy();
  }

  endWatches(): void {
    for (const watcher of [...this.store.watchers]) watcher.response.end();
  }

  connectionsAccepted(): number {
    return this.accepted;
  }

  openWatches(): number {
    return this.store.watchers.size;
  }

  failNext(match: FailureMatch, status: number, options: { readonly retryAfterSeconds?: number } = {}): void {
    this.failures.push({ match, status, remaining: match.count ?? 1, retryAfterSeconds: options.retryAfterSeconds });
  }

  holdNext(match: FailureMatch): HeldRequest {
    let arrive = (): void => {};
    let release = (): void => {};
    const arrived = new Promise<void>((resolve) => { arrive = resolve; });
    const released = new Promise<void>((resolve) => { release = resolve; });
    this.holds.push({ match, arrive, released });
    this.releases.push(release);
    return { arrived, release };
  }

  setToken(token: string): void {
    this.token = token;
  }

  setAvailable(available: boolean, options: { readonly mode?: UnavailableMode } = {}): void {
    this.unavailable = available ? undefined : options.mode ?? 'status';
    if (available) return;
    this.dropWatches();
    if (this.unavailable === 'reset') for (const socket of this.sockets) socket.destroy();
  }

  // -------------------------------------------------------------------------------------------------------------

  private bookmarkEvent(resource: Resource, initialEventsEnd: boolean): WatchEvent {
    return {
      type: 'BOOKMARK',
      object: {
        kind: resource.def.kind,
        apiVersion: resource.apiVersion,
        metadata: {
          resourceVersion: String(this.store.currentRv()),
          ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
        },
      },
    };
  }

  private takeFailure(method: string, path: string, watch: boolean): { status: number; retryAfterSeconds: number | undefined } | undefined {
    const index = this.failures.findIndex(({ match }) => matches(match, method, path, watch));
    const failure = this.failures[index];
    if (failure === undefined) return undefined;
    failure.remaining -= 1;
    if (failure.remaining <= 0) this.failures.splice(index, 1);
    return { status: failure.status, retryAfterSeconds: failure.retryAfterSeconds };
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const method = (request.method ?? 'GET').toUpperCase();
    const query: Record<string, string> = {};
    for (const [key, value] of url.searchParams) query[key] = value;
    const contentType = request.headers['content-type'];
    const entry: { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] } = {
      method, path: url.pathname, query, contentType, body: undefined,
      watch: parseBool(query['watch']), status: undefined,
    };
    try {
      const raw = method === 'GET' || method === 'HEAD' ? '' : await readBody(request);
      if (raw !== '') {
        try {
          entry.body = JSON.parse(raw);
        } catch {
          throw errors.badRequest(`couldn't get version/kind; json parse error: invalid JSON in the request body`);
        }
      }
      this.log.push(entry);
      if (this.unavailable !== undefined) throw genericStatusError(503, undefined, undefined);
      if (['/healthz', '/livez', '/readyz'].includes(url.pathname)) {
        response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        response.end('ok');
        return;
      }
      if (this.token !== undefined && request.headers.authorization !== `Bearer ${this.token}`) {
        throw errors.unauthorized();
      }
      const route = this.route(url.pathname);
      if (route?.watchPath === true) entry.watch = true;
      const hold = this.holds.findIndex(({ match }) => matches(match, method, url.pathname, entry.watch));
      if (hold >= 0) {
        const [held] = this.holds.splice(hold, 1);
        held?.arrive();
        await held?.released;
      }
      const injected = this.takeFailure(method, url.pathname, entry.watch);
      if (injected !== undefined) throw genericStatusError(injected.status, route?.resource.def, route?.name, injected.retryAfterSeconds);
      // No discovery documents: the product names every path itself (CustomObjectsApi), never asks what is served.
      if (route === undefined) throw errors.noSuchResource();
      await this.serveResource(method, route, query, mediaType(contentType), entry.body, response);
    } catch (error) {
      if (!this.log.includes(entry)) this.log.push(entry);
      if (response.headersSent) {
        response.end();
        return;
      }
      sendStatus(response, error instanceof KubeStatusError
        ? error
        : errors.internal(error instanceof Error ? error.message : String(error)));
    } finally {
      // Every response, a watch's included, has sent its status line by now.
      if (response.headersSent) entry.status = response.statusCode;
    }
  }

  /** /api/v1/..., /apis/{group}/{version}/..., optionally with the legacy /watch/ segment. */
  private route(pathname: string): ResourceRoute | undefined {
    const segments = pathname.split('/').filter((segment) => segment !== '').map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (segments[0] === 'api' && segments.length >= 3) {
      group = '';
      version = segments[1] ?? '';
      rest = segments.slice(2);
    } else if (segments[0] === 'apis' && segments.length >= 4) {
      group = segments[1] ?? '';
      version = segments[2] ?? '';
      rest = segments.slice(3);
    } else {
      return undefined;
    }
    const watchPath = rest[0] === 'watch';
    if (watchPath) rest = rest.slice(1);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    if (rest.length === 0 || rest.length > 3) throw errors.noSuchResource();
    const resource = this.store.byPath(group, version, rest[0] ?? '');
    if (resource === undefined) throw errors.noSuchResource();
    const name = rest[1];
    const subresource = rest[2];
    if (namespace !== undefined && !resource.def.namespaced) throw errors.noSuchResource();
    if (resource.def.namespaced && name !== undefined && namespace === undefined) throw errors.noSuchResource();
    if (subresource !== undefined && !(subresource === 'status' && resource.def.statusSubresource === true)) {
      throw errors.noSuchResource();
    }
    return { resource, namespace, name, subresource, watchPath };
  }

  private async serveResource(method: string, route: ResourceRoute, query: Record<string, string>, contentType: string,
    body: unknown, response: ServerResponse): Promise<void> {
    const { resource, namespace, name, subresource } = route;
    const def = resource.def;
    const fieldManager = typeof query['fieldManager'] === 'string' ? query['fieldManager'] : undefined;
    const options: WriteOptions = { subresource, dryRun: query['dryRun'] === 'All', fromClient: true, fieldManager };
    switch (method) {
      case 'GET': {
        if (route.watchPath || parseBool(query['watch'])) {
          this.watch(route, query, response);
          return;
        }
        if (name === undefined) {
          sendJson(response, 200, this.listResponse(resource, namespace, query));
          return;
        }
        const found = this.store.get(resource, namespace, name);
        if (found === undefined) throw errors.notFound(def, name);
        sendJson(response, 200, found);
        return;
      }
      case 'POST': {
        if (name !== undefined || (def.namespaced && namespace === undefined)) throw errors.methodNotSupported(def, 'create');
        if (!isMap(body)) throw errors.badRequest('the request body must be a JSON object');
        const created = await this.store.create(resource, namespace, body, options);
        sendJson(response, 201, created);
        return;
      }
      case 'PUT': {
        if (name === undefined) throw errors.methodNotSupported(def, 'update');
        if (!isMap(body)) throw errors.badRequest('the request body must be a JSON object');
        const updated = await this.store.update(resource, namespace, name, () => copy(body), def.builtin === true, options);
        sendJson(response, 200, updated);
        return;
      }
      case 'PATCH': {
        if (name === undefined) throw errors.methodNotSupported(def, 'patch');
        // The product sends JSON Patch only; merge and apply patches are the real API server's (test/e2e).
        if (contentType !== 'application/json-patch+json') throw errors.unsupportedMediaType(contentType);
        const patched = await this.store.update(resource, namespace, name, (stored) => applyJsonPatch(stored, body), true, options);
        sendJson(response, 200, patched);
        return;
      }
      case 'DELETE': {
        if (name === undefined) throw errors.methodNotSupported(def, 'deletecollection');
        const preconditions = isMap(body) && isMap(body['preconditions']) ? body['preconditions'] : {};
        const object = await this.store.remove(resource, namespace, name, {
          ...(typeof preconditions['uid'] === 'string' ? { uid: preconditions['uid'] } : {}),
          ...(typeof preconditions['resourceVersion'] === 'string' ? { resourceVersion: preconditions['resourceVersion'] } : {}),
        }, options);
        if (def.builtin === true) {
          const uid = metadataOf(object)['uid'];
          sendJson(response, 200, {
            kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
            details: { name, group: def.group, kind: def.plural, uid },
          });
        } else {
          sendJson(response, 200, object);
        }
        return;
      }
      default:
        throw errors.methodNotSupported(def, method.toLowerCase());
    }
  }

  private filterFor(route: ResourceRoute, query: Record<string, string>): Predicate {
    const labels = parseLabelSelector(query['labelSelector']);
    if ((query['fieldSelector'] ?? '') !== '') throw errors.badRequest('field selectors are not supported by the test API server');
    const { namespace, name } = route;
    return (object) => {
      const metadata = metadataOf(object);
      if (namespace !== undefined && metadata['namespace'] !== namespace) return false;
      if (name !== undefined && metadata['name'] !== name) return false;
      return labels(object);
    };
  }

  /** Semantics of resourceVersion, resourceVersionMatch, limit and continue as in the API concepts document. */
  private listResponse(resource: Resource, namespace: string | undefined, query: Record<string, string>): JsonMap {
    const filter = this.filterFor({ resource, namespace, name: undefined, subresource: undefined, watchPath: false }, query);
    const rvParam = query['resourceVersion'];
    const match = query['resourceVersionMatch'];
    const current = this.store.currentRv();
    let at = current;
    let start = '';
    if (match !== undefined && match !== '' && (rvParam === undefined || rvParam === '')) {
      throw new KubeStatusError(422, 'Invalid',
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    const token = query['continue'];
    if (token !== undefined && token !== '') {
      if (rvParam !== undefined && rvParam !== '') throw errors.badRequest('specifying resource version is not allowed when using continue');
      const decoded = decodeContinue(token);
      if (decoded.rv < this.store.oldestResumableRv()) {
        throw errors.expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
      }
      at = decoded.rv;
      start = decoded.start;
    } else if (rvParam !== undefined && rvParam !== '' && rvParam !== '0') {
      const requested = parseRv(rvParam);
      if (requested > current) throw errors.tooLargeResourceVersion(requested, current);
      if (match === 'Exact') {
        if (requested < this.store.oldestResumableRv()) throw errors.expired('The resourceVersion for the provided list is too old.');
        at = requested;
      } else if (match !== undefined && match !== '' && match !== 'NotOlderThan') {
        throw new KubeStatusError(422, 'Invalid', `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "${match}"`);
      }
    }
    const limit = Number(query['limit'] ?? '0');
    const selecting = (query['labelSelector'] ?? '') !== '';
    const candidates = this.store.objectsAt(resource, at).filter(([key]) => key >= start);
    const items: JsonMap[] = [];
    let lastKey = '';
    let more = false;
    let index = 0;
    for (; index < candidates.length; index += 1) {
      const entry = candidates[index];
      if (entry === undefined) break;
      const [key, object] = entry;
      if (!filter(object)) continue;
      if (limit > 0 && items.length === limit) {
        more = true;
        break;
      }
      items.push(object);
      lastKey = key;
    }
    const metadata: JsonMap = { resourceVersion: String(at) };
    if (more) {
      metadata['continue'] = encodeContinue(at, lastKey);
      if (!selecting) metadata['remainingItemCount'] = candidates.length - index;
    }
    return {
      kind: `${resource.def.kind}List`,
      apiVersion: resource.apiVersion,
      metadata,
      // Typed lists of compiled-in types encode items without TypeMeta; CRD lists keep each item's own.
      items: items.map((item) => {
        if (resource.def.builtin !== true) return item;
        const { apiVersion: _apiVersion, kind: _kind, ...rest } = item;
        return rest;
      }),
    };
  }

  /**
   * Watch semantics (watch cache): no or "0" resourceVersion sends the current state as ADDED first; a given one
   * replays the retained changes after it, or, when older than the history, one ERROR event carrying 410 Expired
   * and the end of the stream (errors after the request was accepted always travel inside a 200 stream).
   */
  private watch(route: ResourceRoute, query: Record<string, string>, response: ServerResponse): void {
    const filter = this.filterFor(route, query);
    const rvParam = query['resourceVersion'] ?? '';
    const bookmarks = parseBool(query['allowWatchBookmarks']);
    const sendInitialEvents = query['sendInitialEvents'];
    const timeoutSeconds = Number(query['timeoutSeconds'] ?? '0');
    const initial: WatchEvent[] = [];
    let expired: KubeStatusError | undefined;
    if (rvParam === '' || rvParam === '0') {
      if (!(rvParam === '0' && sendInitialEvents === 'false')) {
        for (const [, object] of this.store.objectsAt(route.resource, this.store.currentRv())) {
          if (filter(object)) initial.push({ type: 'ADDED', object });
        }
      }
    } else {
      const from = parseRv(rvParam);
      if (from < this.store.oldestResumableRv()) {
        expired = errors.expired(`too old resource version: ${from} (${this.store.oldestResumableRv()})`);
      } else {
        for (const change of this.store.changesAfter(route.resource, from)) {
          const event = eventFor(change, filter);
          if (event !== undefined) initial.push(event);
        }
      }
    }
    response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    response.flushHeaders();
    if (expired !== undefined) {
      writeEvent(response, { type: 'ERROR', object: expired.status });
      response.end();
      return;
    }
    for (const event of initial) writeEvent(response, event);
    if (sendInitialEvents === 'true' && bookmarks) writeEvent(response, this.bookmarkEvent(route.resource, true));
    const watcher: Watcher = { resource: route.resource, filter, bookmarks, response };
    this.store.watchers.add(watcher);
    let timer: NodeJS.Timeout | undefined;
    if (timeoutSeconds > 0) {
      timer = setTimeout(() => {
        // The API server tries to send a last bookmark before it ends a watch on timeout.
        if (bookmarks) writeEvent(response, this.bookmarkEvent(route.resource, false));
        response.end();
      }, timeoutSeconds * 1000);
    }
    response.on('close', () => {
      this.store.watchers.delete(watcher);
      if (timer !== undefined) clearTimeout(timer);
    });
  }
}

/** A plain JSON copy: class instances (client-node models) lose their prototype, Dates become strings. */
function asMap(object: KubeObjectInput): JsonMap {
  const parsed: unknown = JSON.parse(JSON.stringify(object));
  if (!isMap(parsed)) throw new Error('a Kubernetes object must be a JSON object');
  return parsed;
}

function typeOf(object: JsonMap): TypeRef {
  const apiVersion = object['apiVersion'];
  const kind = object['kind'];
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') throw new Error('the object needs apiVersion and kind');
  return { apiVersion, kind };
}

export async function startKubeApiServer(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const server = new ApiServer(options);
  await server.listen();
  return server;
}
