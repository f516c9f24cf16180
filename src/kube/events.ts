// Kubernetes Events (events.k8s.io/v1) as client-go's new recorder writes them: reporting controller
// `shortcut-webhook`, one Event per (regarding object, reason, type), its repeats counted in `series` (kubectl shows
// "x N over M"), and a bound on writes so that a flapping tunnel cannot flood the API server: per Event at most one
// write each MIN_WRITE_INTERVAL_MS (repeats meanwhile are counted and written with the next), and at most
// MAX_WRITES_PER_MINUTE in all. Where Events may not be created (no grant), the product works on and says so once.
import { randomBytes } from 'node:crypto';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../log.ts';
import { isObject, objectAt, stringField } from '../core/json.ts';
import { microTime } from '../util/micro-time.ts';
import { describeError, httpStatus, readListPage } from './client.ts';

export interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecord {
  readonly regarding: ObjectReference;
  readonly type: EventType;
  /** UpperCamelCase, what happened: `DirectNetworkLost`. */
  readonly reason: string;
  /** What the controller did about it: `Failover`. */
  readonly action: string;
  /** Human-readable, up to 1 kB. */
  readonly note: string;
}

export interface EventSink {
  record(event: EventRecord): void;
}

export const REPORTING_CONTROLLER = 'shortcut-webhook';
/** client-go's EventSeries window: a repeat within it counts on the same Event. */
const SERIES_WINDOW_MS = 6 * 60_000;
const MIN_WRITE_INTERVAL_MS = 10_000;
const MAX_WRITES_PER_MINUTE = 30;
const MAX_NOTE_BYTES = 1024;
const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

function truncate(note: string): string {
  const bytes = Buffer.from(note, 'utf8');
  return bytes.length <= MAX_NOTE_BYTES ? note : `${bytes.subarray(0, MAX_NOTE_BYTES - 3).toString('utf8').replace(/\uFFFD$/, '')}...`;
}

interface Series {
  /** The stored Event's name, once created. */
  name: string | undefined;
  count: number;
  /** Occurrences not yet written. */
  pending: number;
  firstAt: number;
  lastWriteAt: number;
  note: string;
  timer: NodeJS.Timeout | undefined;
  writing: Promise<void> | undefined;
  /** The latest occurrence, what a write held back until shutdown writes. */
  event: EventRecord;
}

export interface EventRecorderOptions {
  readonly config: KubeConfig;
  readonly logger: Logger;
  /** The replica (POD_NAME), as reportingInstance. */
  readonly instance: string;
  readonly now?: () => number;
  /** Per Event, at most one write this often (default MIN_WRITE_INTERVAL_MS). */
  readonly minWriteIntervalMs?: number;
}

export class EventRecorder implements EventSink {
  private readonly api: CustomObjectsApi;
  private readonly series = new Map<string, Series>();
  private readonly writes: number[] = [];
  private refused = false;
  private dropped = 0;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly options: EventRecorderOptions) {
    this.api = options.config.makeApiClient(CustomObjectsApi);
    this.now = options.now ?? Date.now;
  }

  record(event: EventRecord): void {
    if (this.stopped) return;
    const { regarding } = event;
    const key = [regarding.namespace, regarding.kind, regarding.name, regarding.uid ?? '', event.reason, event.type].join('\0');
    const now = this.now();
    let series = this.series.get(key);
    if (series === undefined || now - series.firstAt > SERIES_WINDOW_MS) {
      if (series?.timer !== undefined) clearTimeout(series.timer);
      series = { name: undefined, count: 0, pending: 0, firstAt: now, lastWriteAt: 0, note: event.note, timer: undefined, writing: undefined, event };
      this.series.set(key, series);
    }
    series.event = event;
    series.pending++;
    series.note = truncate(event.note);
    this.schedule(event, series);
  }

  /**
   * Writes what is pending (shutdown): the writes in flight end, then the occurrences the per-Event bound held back
   * are written at once, so the last transition is not lost when the pod stops. Nothing is recorded after it.
   */
  async flush(): Promise<void> {
    this.stopped = true;
    const all = [...this.series.values()];
    for (const series of all) {
      if (series.timer !== undefined) clearTimeout(series.timer);
      series.timer = undefined;
    }
    await Promise.all(all.map((series) => series.writing));
    await Promise.all(all.filter((series) => series.pending > 0).map((series) => this.write(series.event, series)));
  }

  private schedule(event: EventRecord, series: Series): void {
    if (series.timer !== undefined || series.writing !== undefined) return;
    const wait = Math.max(0, series.lastWriteAt + (this.options.minWriteIntervalMs ?? MIN_WRITE_INTERVAL_MS) - this.now());
    const go = () => {
      series.timer = undefined;
      series.writing = this.write(event, series).finally(() => {
        series.writing = undefined;
        if (series.pending > 0 && !this.stopped) this.schedule(event, series);
      });
    };
    if (wait === 0) go();
    else {
      series.timer = setTimeout(go, wait);
      series.timer.unref();
    }
  }

  /** Within MAX_WRITES_PER_MINUTE, else the occurrence is dropped (counted, said once per minute at most). */
  private admit(): boolean {
    const now = this.now();
    while (this.writes.length > 0 && now - (this.writes[0] ?? now) >= 60_000) this.writes.shift();
    if (this.writes.length >= MAX_WRITES_PER_MINUTE) return false;
    this.writes.push(now);
    return true;
  }

  private async write(event: EventRecord, series: Series): Promise<void> {
    if (this.refused) {
      series.pending = 0;
      return;
    }
    if (!this.admit()) {
      if (this.dropped++ === 0) this.options.logger.warn({ reason: event.reason }, 'Events are being written too fast: some are dropped (their counts are kept in the log)');
      series.pending = 0;
      return;
    }
    const now = this.now();
    // Occurrences recorded while this write is in flight are left pending for the next.
    const sending = series.pending;
    const count = series.count + sending;
    const { regarding } = event;
    try {
      if (series.name === undefined) {
        const name = `${regarding.name}.${randomBytes(8).toString('hex')}`;
        await this.api.createNamespacedCustomObject({
          group: 'events.k8s.io', version: 'v1', namespace: regarding.namespace, plural: 'events',
          body: {
            apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name, namespace: regarding.namespace },
            eventTime: microTime(series.firstAt), reportingController: REPORTING_CONTROLLER, reportingInstance: this.options.instance,
            action: event.action, reason: event.reason, note: series.note, type: event.type,
            regarding: { apiVersion: regarding.apiVersion, kind: regarding.kind, namespace: regarding.namespace, name: regarding.name, ...(regarding.uid === undefined ? {} : { uid: regarding.uid }) },
            ...(count > 1 ? { series: { count, lastObservedTime: microTime(now) } } : {}),
          },
        });
        series.name = name;
      } else {
        await this.api.patchNamespacedCustomObject({
          group: 'events.k8s.io', version: 'v1', namespace: regarding.namespace, plural: 'events', name: series.name,
          // The series only, as client-go's recorder patches it: kube-apiserver refuses any other change of an
          // events.k8s.io/v1 Event (its note is immutable: 422). `add` sets the series whether or not it is there.
          body: [{ op: 'add', path: '/series', value: { count, lastObservedTime: microTime(now) } }],
        }, JSON_PATCH);
      }
      series.count = count;
      series.pending -= sending;
      series.lastWriteAt = now;
    } catch (error) {
      const status = httpStatus(error);
      if (status === 403) {
        this.refused = true;
        series.pending = 0;
        this.options.logger.warn({ err: describeError(error) }, 'Events may not be created here (no grant): transitions are said in the log only');
        return;
      }
      // The Event was removed meanwhile (TTL, an operator): the next occurrence creates a new one.
      if (status === 404) series.name = undefined;
      this.options.logger.warn({ reason: event.reason, err: describeError(error) }, 'Event not written');
      series.lastWriteAt = now;
    }
  }
}

/** Liqo's label naming the peer a leaf's Connection or Configuration is for. */
const REMOTE_CLUSTER_LABEL = 'liqo.io/remote-cluster-id';

/**
 * The object an Event about `peer` regards, one an operator already looks at: the leaf's Liqo Connection to it,
 * else its Configuration, else `fallback` (the product's Deployment).
 */
export async function peerObject(config: KubeConfig, peer: string, fallback: ObjectReference | undefined): Promise<ObjectReference | undefined> {
  const api = config.makeApiClient(CustomObjectsApi);
  for (const [plural, kind] of [['connections', 'Connection'], ['configurations', 'Configuration']] as const) {
    try {
      const [item] = readListPage(await api.listClusterCustomObject({ group: 'networking.liqo.io', version: 'v1beta1', plural, labelSelector: `${REMOTE_CLUSTER_LABEL}=${peer}`, limit: 1 })).items;
      const metadata = isObject(item) ? objectAt(item, 'metadata') : undefined;
      const name = metadata && stringField(metadata, 'name');
      const namespace = metadata && stringField(metadata, 'namespace');
      const uid = metadata && stringField(metadata, 'uid');
      if (name && namespace) return { apiVersion: 'networking.liqo.io/v1beta1', kind, namespace, name, ...(uid ? { uid } : {}) };
    } catch {
      // Not served or not granted: the next kind, then the fallback.
    }
  }
  return fallback;
}
