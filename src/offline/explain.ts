// `rewrite --explain`: plain-text tables a person reads next to `kubectl get`, one per slice, then FCC states.
import { containsAddress, type Cidr } from '../core/cidr.ts';
import type { ForeignClusterConnection } from '../core/fcc.ts';
import { sortedTunnels } from '../core/leaf-views.ts';
import { localClusters, viewNotes } from '../core/local-clusters.ts';
import { describeState, hubPrefixFor, type PairState } from '../core/pairs.ts';
import type { AddressTrace } from '../core/rewrite.ts';
import type { Snapshot } from '../core/snapshot.ts';
import type { DocumentResult } from './rewrite-documents.ts';

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
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

/** The leaf's Liqo objects given with --shortcuts, as the decisions above read them; nothing when none were given. */
function leafTables(snapshot: Snapshot): string[] {
  const lines: string[] = [];
  const { configurations } = snapshot.views;
  if (configurations.length > 0) {
    lines.push('', 'Liqo Configurations of the leaf (its own pods, and where it sees each peer):', ...table(
      ['CONFIGURATION', 'PEER', 'OWN PODS', 'PEER PODS', 'PEER EXTERNAL'],
      configurations.map((c) => [c.ref, c.remoteCluster ?? '-', cidrTexts(c.localPod), cidrTexts(c.remotePod), cidrTexts(c.remoteExternal)]),
    ));
  }
  const { hub } = snapshot;
  if (hub.known) {
    lines.push('', `The hub's IPAM (${hub.ips.size} pod IP${hub.ips.size === 1 ? '' : 's'}; its Configurations say where it sees each peer's pods):`, ...table(
      ['CONFIGURATION', 'PEER', 'HUB VIEW', 'PEER PODS'],
      hub.configurations.map((c) => [c.ref, c.remoteCluster ?? '-', cidrTexts(c.podMappings.map((m) => m.seen)), cidrTexts(c.podMappings.map((m) => m.declared))]),
    ));
  }
  if (snapshot.tunnels.size > 0) {
    lines.push('', 'Liqo Connections of the leaf (a shortcut is used only while all of its peer\'s are Connected):', ...table(
      ['PEER', 'STATE'], sortedTunnels(snapshot.tunnels).map(([peer, state]) => [peer, state || '(no status)']),
    ));
  }
  return lines;
}

/**
 * For an address no usable pair took: the unusable FCC whose hub prefix holds it, so the table says why (a shortcut
 * that is not connected, in conflict, ...) instead of only that nothing matched.
 */
function blockingState(snapshot: Snapshot, fccs: ReadonlyMap<string, ForeignClusterConnection>, cluster: string, address: string): PairState | undefined {
  return snapshot.forCluster(cluster).states.find((state) => {
    if (state.usable) return false;
    const fcc = fccs.get(state.fcc);
    const prefix = fcc === undefined ? undefined : hubPrefixFor(fcc, cluster);
    return prefix !== undefined && containsAddress(prefix, address);
  });
}

function traceRow(trace: AddressTrace, snapshot: Snapshot, fccs: ReadonlyMap<string, ForeignClusterConnection>, cluster: string): string[] {
  // The stock path: the hub IP, the peer and the leaf Configuration used, or why the address stays.
  if (trace.hub !== undefined) {
    return [shown(trace.input), shown(trace.output), `IP ${trace.hub.ip}`, `${trace.reason}: via ${trace.hub.peer} (${trace.hub.configuration})`];
  }
  if (trace.stock !== undefined) {
    // hub-external's why is the same for every address, said once below the tables.
    const why = trace.stock.reason === 'hub-external' ? trace.stock.reason : `${trace.stock.reason}: ${trace.stock.detail}`;
    return [shown(trace.input), shown(trace.output), '-', trace.reason === 'restored' ? `restored, ${why}` : why];
  }
  const blocked = trace.reason === 'no-pair' || trace.reason === 'restored' ? blockingState(snapshot, fccs, cluster, trace.base) : undefined;
  if (blocked !== undefined && !blocked.usable) {
    return [shown(trace.input), shown(trace.output), blocked.fcc, `${trace.reason}: ${blocked.reason}`];
  }
  // Already in the shortcut space (or an identity pair's): the FCC whose usable pair's target holds it is the one
  // that flags it. Targets of usable pairs do not overlap, so there is one.
  const holder = trace.pair ?? (trace.flagged
    ? snapshot.forCluster(cluster).pairs.find((pair) => containsAddress(pair.shortcutPrefix, trace.output)) : undefined);
  return [shown(trace.input), shown(trace.output), holder?.fcc ?? '-', trace.reason];
}

export function explain(results: readonly DocumentResult[], snapshot: Snapshot, clusterId: string | undefined): string {
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
      const cluster = result.slice.clusterId;
      if (!clusters.includes(cluster)) clusters.push(cluster);
      lines.push(`${document.name} ${slice.name}: cluster ${cluster}, ${result.slice.family}`);
      if (slice.traces.length === 0) lines.push('(no addresses)');
      else lines.push(...table(['INPUT', 'OUTPUT', slice.traces.some((t) => t.hub !== undefined) ? 'FCC OR HUB IP' : 'FCC', 'REASON'],
        slice.traces.map((trace) => traceRow(trace, snapshot, fccs, cluster))));
    }
  }
  if (clusters.length === 0) clusters.push(...localClusters(snapshot, clusterId));
  for (const cluster of clusters) {
    lines.push('', `FCC states for cluster ${cluster}:`, ...stateTable(snapshot, cluster));
  }
  lines.push(...leafTables(snapshot));
  return `${lines.join('\n').replace(/^\n/, '')}\n`;
}
