// The read side of the shortcut view, shared by every source: the current snapshot, swapped whole by reference.
import { sameFcc, type ForeignClusterConnection } from '../core/fcc.ts';
import { sameConfigurations, sameTunnel, type LiqoConfiguration, type TunnelStates } from '../core/leaf-views.ts';
import { sameHubIp, type HubIp } from '../core/hub-ipam.ts';
import { HUB_NOT_READ, type HubIpam } from '../core/hub-resolution.ts';
import type { HubPart } from '../core/hubs.ts';
import { buildSnapshot, type Snapshot, type SnapshotInput } from '../core/snapshot.ts';

/** What requests and the controller read. Sources (files, the API) write through a SnapshotStore. */
export interface ShortcutView {
  /** The snapshot a request uses from start to end; an empty one until the first sync. */
  current(): Snapshot;
  /** True after the first successful read of the source, even an empty one. */
  isSynced(): boolean;
  /** When the view last matched its source (epoch ms), undefined before the first sync. */
  lastSync(): number | undefined;
  /**
   * True from a pause of the process (a freeze past its watches' timeouts) until every source has listed again: the
   * snapshot may be far behind its sources, so nothing is planned on it. Listeners are called when it ends.
   */
  isLapsed(): boolean;
  /** Called after every new snapshot, and when a lapse ends; returns the unsubscribe function. */
  subscribe(listener: (snapshot: Snapshot) => void): () => void;
}

export type Clock = () => number;

/** What a snapshot is built from, each part from its own source (or all of them from the files). */
export interface ViewParts {
  /** FCCs of no hub in particular (the leaf's own, or --shortcuts files). */
  readonly fccs: readonly ForeignClusterConnection[];
  readonly tunnels: TunnelStates;
  readonly configurations: readonly LiqoConfiguration[];
  /** Every hub reader's part at once (the files); cluster sources publish theirs one by one (publishHub). */
  readonly hubs: readonly HubPart[];
  /** The leaf's consumers from its ForeignClusters; undefined where they are not known. */
  readonly consumers: readonly string[] | undefined;
}

function sameFccs(a: readonly ForeignClusterConnection[], b: readonly ForeignClusterConnection[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((fcc, i) => {
    const other = b[i];
    return other !== undefined && sameFcc(fcc, other);
  });
}

function sameIps(a: HubIpam & { known: true }, b: HubIpam & { known: true }): boolean {
  if (a.ips.size !== b.ips.size) return false;
  for (const family of ['ipv4', 'ipv6'] as const) {
    const others: ReadonlyMap<number | bigint, readonly HubIp[]> = b.ips[family];
    for (const [address, list] of a.ips[family]) {
      const other = others.get(address);
      if (other === undefined || other.length !== list.length || list.some((ip, i) => !sameHubIp(ip, other[i] ?? ip) || other[i] === undefined)) return false;
    }
  }
  return true;
}

/** Same decisions: a hub IP's resourceVersion or a Configuration's condition moving changes nothing to resolve. */
export function sameHub(a: HubIpam, b: HubIpam): boolean {
  if (!a.known || !b.known) return !a.known && !b.known && a.why === b.why;
  return sameConfigurations(a.configurations, b.configurations) && sameIps(a, b);
}

function sameParts(a: readonly HubPart[], b: readonly HubPart[]): boolean {
  return a.length === b.length && a.every((part, i) => {
    const other = b[i];
    return other !== undefined && part.id === other.id && part.away === other.away && sameHub(part.ipam, other.ipam) && sameFccs(part.fccs, other.fccs);
  });
}

function sameConsumers(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.length === b.length && a.every((id, i) => id === b[i]);
}

function sameTunnels(a: TunnelStates, b: TunnelStates): boolean {
  if (a.size !== b.size) return false;
  for (const [peer, state] of a) {
    const other = b.get(peer);
    if (other === undefined || !sameTunnel(state, other)) return false;
  }
  return true;
}

const RESTORE_ONLY_IPAM: HubIpam = Object.freeze({ known: false, why: 'restore-only: nothing is resolved, every address the view vouches for goes back to the hub\'s' });

/** How many FCCs the view remembers after they are gone (a few hundred bytes each). */
const MAX_FORMER_FCCS = 1024;

export class SnapshotStore implements ShortcutView {
  private snapshot: Snapshot = buildSnapshot({ version: 0, fccs: [] });
  private synced = false;
  private syncedAt: number | undefined;
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();
  private fccs: readonly ForeignClusterConnection[] = [];
  /**
   * FCCs the view held and no longer holds as they were (deleted, or their networks changed), oldest first and
   * bounded: the records a shortcut left on stored slices are trusted by the spaces of the FCC that wrote them
   * (core/trust.ts), so a shortcut that disappears is still undone.
   */
  private readonly former = new Map<string, ForeignClusterConnection>();
  private tunnels: TunnelStates = new Map();
  private configurations: readonly LiqoConfiguration[] = [];
  private hubs: readonly HubPart[] = [];
  private consumers: readonly string[] | undefined = undefined;
  private stockInputs = 0;
  /** Lapses asked for (pauses seen); a lapse ends only when the sources listed again after the latest. */
  private lapses = 0;
  private lapsed = false;

  /**
   * `restoreOnly` (serve --restore-only, the undo before an uninstall): the view is read as ever, so that the records
   * it vouches for are still trusted (core/trust.ts reads FCCs, former ones included, and the leaf's Configurations),
   * but no FCC gives a pair and no hub's IPAM is known: nothing is moved, every trusted record is restored.
   */
  constructor(private readonly clock: Clock = Date.now, private readonly options: { readonly restoreOnly?: boolean } = {}) {}

  current(): Snapshot {
    return this.snapshot;
  }

  isSynced(): boolean {
    return this.synced;
  }

  lastSync(): number | undefined {
    return this.syncedAt;
  }

  isLapsed(): boolean {
    return this.lapsed;
  }

  /**
   * The process was paused: the view is lapsed until `relist` (every source listing again) settles, for the latest
   * pause. Listeners hear of the end with the snapshot the lists made.
   */
  lapse(relist: () => Promise<void>): void {
    const lapse = ++this.lapses;
    this.lapsed = true;
    void relist().then(() => {
      if (lapse !== this.lapses || !this.lapsed) return;
      this.lapsed = false;
      for (const listener of this.listeners) listener(this.snapshot);
    });
  }

  subscribe(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A new full list of FCCs from the source: the view is synced from now on. A list that decodes as the current one
   * keeps the current snapshot: Liqo touches its objects often (status.lastUpdated), and each rebuild would wake the
   * controller and re-evaluate every pair for nothing.
   */
  publishFccs(fccs: readonly ForeignClusterConnection[]): Snapshot {
    return this.publish({ fccs });
  }

  /**
   * New tunnel states (Liqo Connections by peer); the FCCs stay, and readiness still waits for them. Unchanged states
   * (a Connection's latency or its other fields moved) keep the current snapshot.
   */
  publishTunnels(tunnels: TunnelStates): Snapshot {
    return this.publish({ tunnels });
  }

  /**
   * The leaf's Liqo Configurations (local-view safety, hub-external); like tunnels, they do not make the view
   * synced, and unchanged ones (a condition's timestamp moved) keep the current snapshot.
   */
  publishConfigurations(configurations: readonly LiqoConfiguration[]): Snapshot {
    return this.publish({ configurations });
  }

  /**
   * Any of the view's parts at once, in one rebuild: a source that reads them together (the files) must not show
   * listeners the new Liqo objects beside the old FCCs, a state that never existed, logged and counted as a change.
   * FCCs make the view synced; the first FCC list is published even when empty, so listeners learn the first state.
   */
  publish(parts: Partial<ViewParts>): Snapshot {
    const first = parts.fccs !== undefined && !this.synced;
    if (parts.fccs !== undefined) this.confirm();
    let changed = false;
    const stockInputs = this.stockInputs;
    if (parts.fccs !== undefined && !sameFccs(parts.fccs, this.fccs)) {
      this.retire(this.fccs, parts.fccs);
      this.fccs = parts.fccs;
      changed = true;
    }
    if (parts.tunnels !== undefined && !sameTunnels(parts.tunnels, this.tunnels)) {
      this.tunnels = parts.tunnels;
      this.stockInputs = stockInputs + 1;
    }
    if (parts.configurations !== undefined && !sameConfigurations(parts.configurations, this.configurations)) {
      this.configurations = parts.configurations;
      this.stockInputs = stockInputs + 1;
    }
    // A hub's FCCs are stock inputs too: which of them a slice's pairs come from follows its hub.
    if (parts.hubs !== undefined && !sameParts(parts.hubs, this.hubs)) {
      this.retire(this.hubs.flatMap((hub) => hub.fccs), parts.hubs.flatMap((hub) => hub.fccs));
      this.hubs = parts.hubs;
      this.stockInputs = stockInputs + 1;
    }
    if (Object.hasOwn(parts, 'consumers') && !sameConsumers(parts.consumers, this.consumers)) {
      this.consumers = parts.consumers;
      this.stockInputs = stockInputs + 1;
    }
    changed ||= this.stockInputs !== stockInputs;
    return changed || first ? this.rebuild() : this.snapshot;
  }

  /**
   * One hub reader's part, by its cluster ID (undefined: the unbound reader), in the order readers were first
   * published; the parts read so far decide, the others are not there yet.
   */
  publishHub(id: string | undefined, part: Partial<Omit<HubPart, 'id'>>): Snapshot {
    const index = this.hubs.findIndex((existing) => existing.id === id);
    const current = this.hubs[index] ?? { id, ipam: HUB_NOT_READ, fccs: [] };
    const next: HubPart = {
      id, ipam: part.ipam ?? current.ipam, fccs: part.fccs ?? current.fccs, away: Object.hasOwn(part, 'away') ? part.away : current.away,
    };
    const hubs = index < 0 ? [...this.hubs, next] : this.hubs.map((existing, i) => (i === index ? next : existing));
    return this.publish({ hubs });
  }

  /** The source was read and matched the view: nothing to rebuild, but the view is fresh. */
  confirm(): void {
    this.synced = true;
    this.syncedAt = this.clock();
  }

  private retire(before: readonly ForeignClusterConnection[], after: readonly ForeignClusterConnection[]): void {
    for (const fcc of before) {
      if (after.some((next) => sameFcc(next, fcc))) continue;
      const key = `${fcc.ref}\n${fcc.clusterA ?? ''}\n${fcc.clusterB ?? ''}\n${JSON.stringify([fcc.sideA, fcc.sideB])}`;
      this.former.delete(key);
      this.former.set(key, fcc);
      // FCCs come from writers: the oldest are forgotten first.
      if (this.former.size > MAX_FORMER_FCCS) this.former.delete(this.former.keys().next().value ?? key);
    }
  }

  /** The FCCs and hub parts the snapshot is built from: as read, or (restore-only) FCCs as trust anchors alone. */
  private restoreOnly(): Pick<SnapshotInput, 'fccs' | 'formerFccs' | 'hubs'> {
    const former = [...this.former.values()];
    if (this.options.restoreOnly !== true) return { fccs: this.fccs, formerFccs: former, hubs: this.hubs };
    return {
      fccs: [],
      formerFccs: [...former, ...this.fccs, ...this.hubs.flatMap((hub) => hub.fccs)],
      hubs: this.hubs.map((hub) => ({ ...hub, fccs: [], ipam: RESTORE_ONLY_IPAM })),
    };
  }

  private rebuild(): Snapshot {
    this.snapshot = buildSnapshot({
      version: this.snapshot.version + 1, tunnels: this.tunnels, configurations: this.configurations, consumers: this.consumers,
      stockInputs: this.stockInputs, ...this.restoreOnly(),
    });
    for (const listener of this.listeners) listener(this.snapshot);
    return this.snapshot;
  }
}
