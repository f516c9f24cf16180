// The controller's requests to the objects it keeps, as one small interface: a page of a list, one object, one JSON
// Patch, a watch. The pass, the healing watch and their retries read nothing else of the API, so the client
// behind it is as lean as the pass needs (lean-stored-objects.ts: answers read only as far as the pass reads them)
// while the view's list-watch keeps client-node. A failed request throws an error that httpStatus() and
// retryAfterHeader() of kube/client.ts read.
import type { PatchOperation } from '../admission/patch.ts';
import type { ListPage } from '../kube/client.ts';
import type { WatchOpener } from '../view/list-watch.ts';

/** Where a kind of object is stored. */
export interface StoredKind {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export interface StoredObjectRef extends StoredKind {
  readonly namespace: string;
  readonly name: string;
}

export interface ListPageRequest extends StoredKind {
  readonly labelSelector: string;
  readonly limit: number;
  readonly continueToken?: string | undefined;
}

export interface StoredObjects {
  /** One page of the objects of every namespace that match the selector. */
  listPage(request: ListPageRequest): Promise<ListPage>;
  /** The object as stored now. */
  get(ref: StoredObjectRef): Promise<unknown>;
  /** A JSON Patch with our field manager; resolves once the API server stored it (the answer's body is not read). */
  patch(ref: StoredObjectRef, patch: readonly PatchOperation[]): Promise<void>;
  /** A watch of a kind's collection (the healing watch), each event parsed once. */
  readonly watch: WatchOpener;
  /** Closes kept-alive connections (shutdown). */
  close(): void;
}
