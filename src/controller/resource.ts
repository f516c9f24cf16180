// What the controller's write pass needs to know of a kind of stored object, and nothing more: where it is stored
// (group, version, plural), which of them are the reflected ones (a label selector), and a pure plan from a stored
// object and the view to the guarded patch that brings it in step. The pass (reconciler.ts) lists, plans, patches,
// retries conflicts and bounds the rate the same way for every kind: EndpointSlices (endpoint-slices.ts) are one
// descriptor, and a second kind is one more.
import type { PatchOperation } from '../admission/patch.ts';
import { objectAt, stringField, type JsonObject } from '../core/json.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { Logger } from '../log.ts';
import type { Metrics, ReconcileResult } from '../metrics.ts';

/** A write to one stored object, planned on the resourceVersion read. */
export interface StoredWrite {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  /** Starts with a `test` of the resourceVersion read: the write applies to exactly what was planned on. */
  readonly patch: readonly PatchOperation[];
}

export type StoredPlan<W extends StoredWrite> =
  | { readonly kind: 'write'; readonly write: W }
  | { readonly kind: 'in-step' }
  | { readonly kind: 'not-ours' };

/**
 * The write of `changed` (the object as the rule leaves it, which still carries the stored metadata), guarded by a
 * `test` of the resourceVersion read; `not-ours` when the stored object lacks a namespace, name or resourceVersion.
 */
export function guardedWrite<E extends object>(changed: JsonObject, patch: readonly PatchOperation[], extra: E): StoredPlan<StoredWrite & E> {
  const metadata = objectAt(changed, 'metadata');
  const namespace = metadata && stringField(metadata, 'namespace');
  const name = metadata && stringField(metadata, 'name');
  const resourceVersion = metadata && stringField(metadata, 'resourceVersion');
  if (!namespace || !name || !resourceVersion) return { kind: 'not-ours' };
  return {
    kind: 'write',
    write: { ...extra, namespace, name, resourceVersion, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...patch] },
  };
}

export interface PlanContext {
  readonly snapshot: Snapshot;
  readonly clusterId: string | undefined;
}

export interface Sinks {
  readonly logger: Logger;
  readonly metrics: Metrics;
}

export interface ResourceDescriptor<W extends StoredWrite> {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** The stored objects the pass lists, across namespaces. */
  readonly labelSelector: string;
  /**
   * Where the resource may not be served at all (a CRD not installed): a list answered 404 leaves this kind idle for
   * the pass, said once in the log, instead of failing the pass and retrying it.
   */
  readonly optional: boolean;
  /** Pure: the write that brings `item` in step with the view, the same result the webhook gives on admission. */
  plan(item: unknown, context: PlanContext): StoredPlan<W>;
  /** A planned write was stored: what the log and the metrics say of it. */
  patched(write: W, sinks: Sinks): void;
  /** Each object's outcome in a pass, for the metrics. */
  counted(result: ReconcileResult, metrics: Metrics): void;
}

/** A planned write that carries what to report once it is stored. */
export interface PlannedWrite extends StoredWrite {
  report(sinks: Sinks): void;
}

/** A descriptor with its write type closed over, so that descriptors of several kinds sit in one list. */
export interface Resource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly labelSelector: string;
  readonly optional: boolean;
  plan(item: unknown, context: PlanContext): StoredPlan<PlannedWrite>;
  counted(result: ReconcileResult, metrics: Metrics): void;
}

export function defineResource<W extends StoredWrite>(descriptor: ResourceDescriptor<W>): Resource {
  const { group, version, plural, labelSelector, optional } = descriptor;
  return {
    group, version, plural, labelSelector, optional,
    plan: (item, context) => {
      const plan = descriptor.plan(item, context);
      if (plan.kind !== 'write') return plan;
      const { write } = plan;
      return { kind: 'write', write: { ...write, report: (sinks: Sinks) => descriptor.patched(write, sinks) } };
    },
    counted: (result, metrics) => descriptor.counted(result, metrics),
  };
}
