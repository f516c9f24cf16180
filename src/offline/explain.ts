// `rewrite --explain`: plain-text tables a person reads next to `kubectl get`, one per slice, then FCC states and
// the leaf's and the hub's Liqo objects the decisions read.
import { containsAddress, type Cidr } from '../core/cidr.ts';
import type { ForeignClusterConnection } from '../core/fcc.ts';
import { sortedTunnels, tunnelText, tunnelWord } from '../core/leaf-views.ts';
import { localClusters, viewNotes } from '../core/local-clusters.ts';
import { describeState, hubPrefixFor, type PairState } from '../core/pairs.ts';
import type { AddressTrace } from '../core/rewrite.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { ShadowAddress } from '../core/direct-connections.ts';
import type { ShadowReviewed } from '../admission/review-shadow-endpoint-slice.ts';
import type { DocumentResult } from './rewrite-documents.ts';
import { readerName } from '../core/hubs.ts';

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

/** Addresses left alone may hold spaces or nothing at all: quote them so the table shows what is really there. */
function shown(text: string): string {
  return /^[\x21-\x7e]+$/.test(text) ? text : JSON.stringify(text);
}

function stateTable(snapshot: Snapshot, cluster: string): string[] {
  // The same notes /readyz gives; with no FCC at all there is no table to show under them.
  const notes = viewNotes(snapshot, cluster, true).map((note) => `(${note})`);
  if (snapshot.fccs.length === 0) return notes;
  const states = snapshot.statesFor(cluster);
  return [...notes, ...table(['FCC', 'STATE', 'DETAIL'], states.map((state) => [state.fcc, state.usable ? 'usable' : state.reason, describeState(state)]))];
}

function cidrTexts(cidrs: readonly Cidr[]): string {
  return cidrs.length === 0 ? '-' : cidrs.map((cidr) => cidr.text).join(',');
}

/**
 * The leaf's Liqo objects given with --shortcuts, as the decisions above read them; nothing when none were given.
 * `now` dates a stale Connection's last heartbeat.
 */
function leafTables(snapshot: Snapshot, now: number): string[] {
  const lines: string[] = [];
  const { configurations } = snapshot.views;
  if (configurations.length > 0) {
    lines.push('', 'Liqo Configurations of the leaf (its own pods, and where it sees each peer):', ...table(
      ['CONFIGURATION', 'PEER', 'OWN PODS', 'PEER PODS', 'PEER EXTERNAL'],
      configurations.map((c) => [c.ref, c.remoteCluster ?? '-', cidrTexts(c.localPod), cidrTexts(c.remotePod), cidrTexts(c.remoteExternal)]),
    ));
  }
  const readers = { parts: snapshot.hubs, consumers: snapshot.consumers };
  for (const part of snapshot.hubs) {
    const hub = part.ipam;
    if (!hub.known) continue;
    // One reader is "the hub", as it always was; with several, each is named.
    const whose = snapshot.hubs.length === 1 ? 'The hub\'s IPAM' : `The IPAM of hub ${readerName(part, readers)}`;
    lines.push('', `${whose} (${hub.ips.size} pod IP${hub.ips.size === 1 ? '' : 's'}; its Configurations say where it sees each peer's pods):`, ...table(
      ['CONFIGURATION', 'PEER', 'HUB VIEW', 'PEER PODS'],
      hub.configurations.map((c) => [c.ref, c.remoteCluster ?? '-', cidrTexts(c.podMappings.map((m) => m.seen)), cidrTexts(c.podMappings.map((m) => m.declared))]),
    ));
  }
  if (snapshot.tunnels.size > 0) {
    lines.push('', 'Liqo Connections of the leaf (a shortcut is used only while all of its peer\'s are Connected):', ...table(
      ['PEER', 'STATE'], sortedTunnels(snapshot.tunnels).map(([peer, state]) => [peer, tunnelText(state, now)]),
    ));
  }
  return lines;
}

/**
 * For an address no usable pair took: the unusable FCC whose hub prefix holds it, so the table says why (a shortcut
 * that is not connected, in conflict, ...) instead of only that nothing matched.
 */
function blockingState(snapshot: Snapshot, fccs: ReadonlyMap<string, ForeignClusterConnection>, cluster: string, address: string): PairState | undefined {
  return blockers(snapshot, fccs, cluster).find((blocker) => containsAddress(blocker.prefix, address))?.state;
}

/** Made once per snapshot and cluster rather than per address: `status` and the controller's tally ask for each of 400,000. */
const BLOCKERS = new WeakMap<Snapshot, Map<string, readonly { readonly state: PairState; readonly prefix: Cidr }[]>>();

/** The unusable states of the cluster's FCCs, each with its hub prefix, in the order of the states. */
function blockers(snapshot: Snapshot, fccs: ReadonlyMap<string, ForeignClusterConnection>, cluster: string): readonly { readonly state: PairState; readonly prefix: Cidr }[] {
  let byCluster = BLOCKERS.get(snapshot);
  if (byCluster === undefined) BLOCKERS.set(snapshot, byCluster = new Map());
  let found = byCluster.get(cluster);
  if (found === undefined) {
    found = snapshot.forCluster(cluster).states.flatMap((state) => {
      if (state.usable) return [];
      const fcc = fccs.get(state.fcc);
      const prefix = fcc === undefined ? undefined : hubPrefixFor(fcc, cluster);
      return prefix === undefined ? [] : [{ state, prefix }];
    });
    byCluster.set(cluster, found);
  }
  return found;
}

/** One address as --explain reports it, in the table and in JSON alike. */
export interface AddressExplanation {
  readonly input: string;
  readonly output: string;
  /** The FCC whose pair moved or flags the address, or the unusable one whose hub prefix holds it; null when none. */
  readonly fcc: string | null;
  /** The pair that applies, `hub -> shortcut`, when one does. */
  readonly pair: string | null;
  /** The stock-Liqo path's resolution: the hub IP (`namespace/name`), the pod's cluster and the leaf Configuration used. */
  readonly hubIp: string | null;
  readonly peer: string | null;
  readonly configuration: string | null;
  /**
   * The address's reason, and after a colon what decided it: an unusable FCC's reason (`no-pair: not-connected`), the
   * peer a hub address was resolved through (`rewritten: via cluster3 (...)`), or why the stock path left it.
   */
  readonly reason: string;
}

const NOT_HUB_EXTERNAL = 'outside the leaf\'s view of the hub\'s external CIDR, the only addresses the stock path resolves';

export function explainTrace(trace: AddressTrace, snapshot: Snapshot, fccs: ReadonlyMap<string, ForeignClusterConnection>, cluster: string): AddressExplanation {
  const explanation = explainPath(trace, snapshot, fccs, cluster);
  if (trace.ignored === undefined) return explanation;
  // The address was decided as if it had no record: say which entry was set aside, and why.
  const { out, base, because } = trace.ignored;
  return { ...explanation, reason: `${explanation.reason} (record ${out} -> ${base} ignored: ${because})` };
}

function explainPath(trace: AddressTrace, snapshot: Snapshot, fccs: ReadonlyMap<string, ForeignClusterConnection>, cluster: string): AddressExplanation {
  const none = { hubIp: null, peer: null, configuration: null };
  // The stock path: the hub IP, the peer and the leaf Configuration used, or why the address stays.
  if (trace.hub !== undefined) {
    const { ip, peer, configuration } = trace.hub;
    return { input: trace.input, output: trace.output, fcc: null, pair: null, hubIp: ip, peer, configuration, reason: `${trace.reason}: via ${peer} (${configuration})` };
  }
  if (trace.stock !== undefined) {
    // hub-external's why is the same for every address, said once in the notes.
    const why = trace.stock.reason === 'hub-external' ? trace.stock.reason : `${trace.stock.reason}: ${trace.stock.detail}`;
    return { input: trace.input, output: trace.output, fcc: null, pair: null, ...none, reason: trace.reason === 'restored' ? `restored, ${why}` : why };
  }
  if (trace.reason === 'not-hub-external') {
    return { input: trace.input, output: trace.output, fcc: null, pair: null, ...none, reason: `${trace.reason}: ${NOT_HUB_EXTERNAL}` };
  }
  const blocked = trace.reason === 'no-pair' || trace.reason === 'restored' ? blockingState(snapshot, fccs, cluster, trace.base) : undefined;
  if (blocked !== undefined && !blocked.usable) {
    return { input: trace.input, output: trace.output, fcc: blocked.fcc, pair: null, ...none, reason: `${trace.reason}: ${blocked.reason}` };
  }
  // Already in the shortcut space (or an identity pair's): the FCC whose usable pair's target holds it is the one
  // that flags it. Targets of usable pairs do not overlap, so there is one.
  const holder = trace.pair ?? (trace.flagged
    ? snapshot.forCluster(cluster).pairs.find((pair) => containsAddress(pair.shortcutPrefix, trace.output)) : undefined);
  return {
    input: trace.input, output: trace.output, fcc: holder?.fcc ?? null,
    pair: holder === undefined ? null : `${holder.hubPrefix.text} -> ${holder.shortcutPrefix.text}`, ...none, reason: trace.reason,
  };
}

function traceRow(trace: AddressTrace, snapshot: Snapshot, fccs: ReadonlyMap<string, ForeignClusterConnection>, cluster: string): string[] {
  const row = explainTrace(trace, snapshot, fccs, cluster);
  return [shown(row.input), shown(row.output), row.fcc ?? (row.hubIp === null ? '-' : `IP ${row.hubIp}`), row.reason];
}

/** The third column names what each path reads: an FCC for the FCC path, the hub's IP for the stock path. */
function pairColumn(snapshot: Snapshot, traces: readonly AddressTrace[]): string {
  const stock = traces.some((t) => t.hub !== undefined || t.stock !== undefined || t.reason === 'not-hub-external');
  if (!stock) return 'FCC';
  return snapshot.fccs.length > 0 ? 'FCC OR HUB IP' : 'HUB IP';
}

export function explain(results: readonly DocumentResult[], snapshot: Snapshot, clusterId: string | undefined, now = Date.now()): string {
  const fccs = new Map(snapshot.fccs.map((fcc) => [fcc.ref, fcc]));
  const lines: string[] = [];
  const clusters: string[] = [];
  for (const document of results) {
    for (const slice of document.slices) {
      if (lines.length > 0) lines.push('');
      const { result } = slice;
      if ('skip' in result) {
        lines.push(`${document.name} ${slice.name}: left alone (${result.skip}: ${result.detail})`);
        continue;
      }
      if (slice.kind === 'shadow') {
        const repair = slice.result;
        if (!('skip' in repair)) lines.push(...shadowLines(document.name, slice.name, repair));
        continue;
      }
      if (!('slice' in result)) continue;
      const cluster = result.slice.clusterId;
      if (!clusters.includes(cluster)) clusters.push(cluster);
      // With several hubs read, each slice says whose view decided it.
      const hub = snapshot.hubs.length > 1 ? `, hub ${result.slice.origin ?? '-'}` : '';
      lines.push(`${document.name} ${slice.name}: cluster ${cluster}${hub}, ${result.slice.family}`);
      if (slice.traces.length === 0) lines.push('(no addresses)');
      else lines.push(...table(['INPUT', 'OUTPUT', pairColumn(snapshot, slice.traces), 'REASON'],
        slice.traces.map((trace) => traceRow(trace, snapshot, fccs, cluster))));
    }
  }
  if (clusters.length === 0) clusters.push(...localClusters(snapshot, clusterId));
  if (snapshot.fccs.length === 0) {
    // No FCC at all: a heading of FCC states would tell a stock-Liqo user they lack something they do not need.
    const notes = new Set(clusters.flatMap((cluster) => stateTable(snapshot, cluster)));
    if (notes.size > 0) lines.push('', ...notes);
  }
  else for (const cluster of clusters) lines.push('', `FCC states for cluster ${cluster}:`, ...stateTable(snapshot, cluster));
  lines.push(...leafTables(snapshot, now));
  return `${lines.join('\n').replace(/^\n/, '')}\n`;
}

/** One address listed in a ShadowEndpointSlice's direct-connections data, as --explain reports it. */
export interface ListedExplanation {
  /** The address as the hub wrote it. */
  readonly input: string;
  /** What the shadow carries now. */
  readonly output: string;
  /** The cluster B it is listed under. */
  readonly cluster: string;
  readonly outcome: ShadowAddress['outcome'];
  /** For hub-path, why (no-shortcut, tunnel-down, ambiguous); for unresolved, the reason; null otherwise. */
  readonly reason: string | null;
  readonly detail: string;
}

export function listedExplanation(address: ShadowAddress): ListedExplanation {
  const reason = address.outcome === 'hub-path' ? address.via : address.outcome === 'unresolved' ? address.reason : null;
  return { input: address.input, output: address.output, cluster: address.cluster, outcome: address.outcome, reason, detail: address.detail };
}

/** Why the data annotation was not read, when it was not; null when it was. */
function dataNote(repair: ShadowReviewed): string | null {
  const { data } = repair;
  return data.state === 'read' ? null : data.state === 'absent' ? 'no liqo.io/direct-connections-data: nothing listed, nothing to repair' : `liqo.io/direct-connections-data left as it is: ${data.detail}`;
}

/** A shadow's table: per listed address, input, output, cluster B and outcome. */
function shadowLines(document: string, name: string, repair: ShadowReviewed): string[] {
  const { shadow } = repair;
  const lines = [`${document} ${name}: ShadowEndpointSlice, cluster ${shadow.clusterId}, hub ${shadow.hub}, ${shadow.family}`];
  const note = dataNote(repair);
  if (note !== null) lines.push(`(${note})`);
  else if (repair.addresses.length === 0) lines.push('(no listed addresses)');
  else {
    lines.push(...table(['INPUT', 'OUTPUT', 'CLUSTER', 'OUTCOME', 'DETAIL'], repair.addresses.map((address) => {
      const row = listedExplanation(address);
      return [shown(row.input), shown(row.output), row.cluster, row.reason === null ? row.outcome : `${row.outcome}: ${row.reason}`, row.detail];
    })));
  }
  return lines;
}

/** One slice in `--explain -o json`: where it came from, and either its addresses or why it was left alone. */
export interface EndpointSliceExplanation {
  readonly kind?: undefined;
  readonly document: string;
  readonly slice: string;
  readonly cluster: string | null;
  readonly family: string | null;
  /** Why the whole slice was left alone (`indirect-slice: ...`); null when its addresses were looked at. */
  readonly leftAlone: string | null;
  readonly addresses: readonly AddressExplanation[];
}

/** One ShadowEndpointSlice (Liqo's direct connections): what each address of its data annotation got. */
export interface ShadowExplanation {
  readonly kind: 'ShadowEndpointSlice';
  readonly document: string;
  readonly slice: string;
  readonly cluster: string | null;
  readonly family: string | null;
  readonly leftAlone: string | null;
  /** Its hub (`offloading.liqo.io/origin`); null when left alone. */
  readonly hub: string | null;
  /** Why its data annotation was not read; null otherwise. */
  readonly data: string | null;
  readonly listed: readonly ListedExplanation[];
}

export type SliceExplanation = EndpointSliceExplanation | ShadowExplanation;

export interface FccExplanation {
  readonly cluster: string;
  readonly fcc: string;
  /** `usable`, or the reason it is not. */
  readonly state: string;
  readonly peer: string | null;
  readonly detail: string;
}

/** `--explain -o json`: the tables' content for scripts and CI, one object for the whole run. */
export interface Explanation {
  readonly slices: readonly SliceExplanation[];
  readonly fccs: readonly FccExplanation[];
  readonly notes: readonly string[];
  /** The leaf's Liqo Connections, by peer: the state a shortcut to that peer needs to be Connected. */
  readonly peers: readonly { readonly peer: string; readonly state: string; readonly lastHeartbeat?: string }[];
}

export function explainJson(results: readonly DocumentResult[], snapshot: Snapshot, clusterId: string | undefined): Explanation {
  const fccs = new Map(snapshot.fccs.map((fcc) => [fcc.ref, fcc]));
  const slices: SliceExplanation[] = [];
  const clusters: string[] = [];
  for (const document of results) {
    for (const slice of document.slices) {
      const { result } = slice;
      if ('skip' in result) {
        const leftAlone = `${result.skip}: ${result.detail}`;
        slices.push(slice.kind === 'shadow'
          ? { kind: 'ShadowEndpointSlice', document: document.name, slice: slice.name, cluster: null, family: null, leftAlone, hub: null, data: null, listed: [] }
          : { document: document.name, slice: slice.name, cluster: null, family: null, leftAlone, addresses: [] });
        continue;
      }
      if (slice.kind === 'shadow') {
        const repair = slice.result;
        if ('skip' in repair) continue;
        slices.push({
          kind: 'ShadowEndpointSlice', document: document.name, slice: slice.name, cluster: repair.shadow.clusterId, family: repair.shadow.family,
          leftAlone: null, hub: repair.shadow.hub, data: dataNote(repair), listed: repair.addresses.map(listedExplanation),
        });
        continue;
      }
      if (!('slice' in result)) continue;
      const cluster = result.slice.clusterId;
      if (!clusters.includes(cluster)) clusters.push(cluster);
      slices.push({
        document: document.name, slice: slice.name, cluster, family: result.slice.family, leftAlone: null,
        addresses: slice.traces.map((trace) => explainTrace(trace, snapshot, fccs, cluster)),
      });
    }
  }
  if (clusters.length === 0) clusters.push(...localClusters(snapshot, clusterId));
  return {
    slices,
    fccs: clusters.flatMap((cluster) => (snapshot.fccs.length === 0 ? [] : snapshot.statesFor(cluster)).map((state) => ({
      cluster, fcc: state.fcc, state: state.usable ? 'usable' : state.reason,
      peer: (state.usable ? state.pair.peer : state.peer) ?? null, detail: describeState(state),
    }))),
    notes: clusters.flatMap((cluster) => viewNotes(snapshot, cluster, true)),
    peers: sortedTunnels(snapshot.tunnels).map(([peer, state]) => ({
      peer, state: tunnelWord(state), ...(!state.up && state.reason === 'connection-stale' ? { lastHeartbeat: state.lastHeartbeat } : {}),
    })),
  };
}

/**
 * Without --explain: one line per FCC that names a cluster of these slices but cannot be used, and the notes
 * /readyz gives, so a run that changes nothing still says why on stderr.
 */
export function unusableNotes(sliceClusters: ReadonlySet<string>, snapshot: Snapshot, clusterId: string | undefined): string[] {
  const clusters = new Set(sliceClusters);
  if (clusters.size === 0 && clusterId !== undefined) clusters.add(clusterId);
  // A Configuration the decisions cannot place: no peer named, or no view of the peer recorded yet.
  const configurations = snapshot.views.configurations.flatMap((c) => (c.remoteCluster === undefined
    ? [`Configuration ${c.ref} is not used: it has no liqo.io/remote-cluster-id label, so it names no peer`]
    : c.remotePod.length === 0 && c.remoteExternal.length === 0
      ? [`Configuration ${c.ref} (peer ${c.remoteCluster}) records no status.remote.cidr: the leaf's view of that peer is unknown`]
      : []));
  return [...configurations, ...[...clusters].flatMap((cluster) => [
    ...viewNotes(snapshot, cluster, true),
    ...snapshot.forCluster(cluster).states.flatMap((state) => (state.usable
      ? [] : [`FCC ${state.fcc} is not used for cluster ${cluster}: ${state.reason} (${state.detail})`])),
  ])];
}
