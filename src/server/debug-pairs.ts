// The body of /debug/pairs: what the snapshot makes of every FCC, per local cluster, as JSON.
import type { Cidr } from '../core/cidr.ts';
import { peerDirectConnections, type PeerDirectConnections } from '../core/direct-connections.ts';
import { readerName } from '../core/hubs.ts';
import { sortedTunnels, tunnelWord } from '../core/leaf-views.ts';
import { peerDirectNetworks } from '../core/peer-paths.ts';
import { localClusters, statesOf, viewNotes } from '../core/local-clusters.ts';
import type { Snapshot } from '../core/snapshot.ts';

/** One set of credentials (the kube layer's CredentialStatus), as the process knows it: `origin` is a file or in-cluster. */
export interface CredentialReport {
  readonly origin: string;
  readonly kind: 'kubeconfig' | 'in-cluster';
  /** When the credentials in use were read (the start, or the last reload that changed them). */
  readonly loadedAt: string;
  readonly reloads: number;
  /** The last refusal (401: not authenticated; 403: not allowed) since the last accepted request, if any. */
  readonly refused: { readonly status: number; readonly at: string; readonly during: string } | null;
  /** The last re-read that failed (a file that does not parse), kept until one succeeds. */
  readonly reloadProblem: string | null;
}

/** Every read of a source has failed since `since` (ISO time), the last one for `problem`. */
export interface FailingReport {
  readonly since: string;
  readonly problem: string;
}

/** One cluster the view is read from (cluster mode): its credentials, and whether reading it keeps failing. */
export interface ClusterSourceReport {
  /** `shortcuts` (where the FCCs are read: the hub, or the local cluster) or `local` (the leaf's Liqo objects, the controller). */
  readonly cluster: string;
  /** The cluster ID a hub reader is bound to; absent for the unbound one and the local cluster. */
  readonly hub?: string;
  readonly credentials: CredentialReport;
  /** Every read of the FCCs has failed since `since`; null while they answer, and for the local cluster. */
  readonly failing: FailingReport | null;
}

/** The files the view is read from (file mode), and whether reading them keeps failing. */
export interface FileSourceReport {
  /** `--shortcuts` and `--hub` as given. */
  readonly files: { readonly shortcuts: readonly string[]; readonly hub: readonly string[] };
  /** Every read of the files has failed since `since` (unreadable, or not parsed); null while they read. */
  readonly failing: FailingReport | null;
}

/** A source of the view: clusters (`cluster`) in cluster mode, files (`files`) in file mode. */
export type SourceReport = ClusterSourceReport | FileSourceReport;

/**
 * A source as the page shows it. Any pod that reaches the ops port reads it, so it names no file and no credentials'
 * location: the kind of credentials (`kubeconfig` or `in-cluster`), how many paths each flag gave, and problems with
 * every absolute path cut to its last element (`fcc.yaml#1, line 2`). The log, which only the operator reads, keeps them.
 */
export type ShownSourceReport =
  | { readonly cluster: string; readonly credentials: Omit<CredentialReport, 'origin'>; readonly failing: FailingReport | null }
  | { readonly files: { readonly shortcuts: number; readonly hub: number }; readonly failing: FailingReport | null };

/** Absolute paths in a message, each cut to its last element; a URL's path (after `host:port`) is left alone. */
export function withoutPaths(message: string): string {
  return message.replace(/(^|[\s'"(=,])\/(?:[^\s'",)/]+\/)*([^\s'",)/]*)/g, '$1$2');
}

function shownFailing(failing: FailingReport | null): FailingReport | null {
  return failing === null ? null : { since: failing.since, problem: withoutPaths(failing.problem) };
}

function shownSource(source: SourceReport): ShownSourceReport {
  if ('files' in source) return { files: { shortcuts: source.files.shortcuts.length, hub: source.files.hub.length }, failing: shownFailing(source.failing) };
  const { origin: _where, reloadProblem, ...credentials } = source.credentials;
  return {
    cluster: source.cluster,
    credentials: { ...credentials, reloadProblem: reloadProblem === null ? null : withoutPaths(reloadProblem) },
    failing: shownFailing(source.failing),
  };
}

export interface DebugPairs {
  readonly version: number;
  readonly synced: boolean;
  readonly lastSync: string | null;
  readonly fccs: number;
  /** Why nothing may be rewritten at all, in words: empty when FCCs name every local cluster. */
  readonly notes: readonly string[];
  readonly clusters: readonly {
    readonly clusterId: string;
    /** `hub`: the hub whose reader the FCC was read from; absent for the leaf's own (or --shortcuts files'). */
    readonly pairs: readonly { fcc: string; hub?: string; peer: string; hubPrefix: string; shortcutPrefix: string }[];
    readonly unusable: readonly { fcc: string; hub?: string; peer: string | null; reason: string; detail: string }[];
  }[];
  /**
   * One entry per hub reader: which hub it reads (its cluster ID, or what the unbound one stands for), whether it is
   * away (its hub's objects left alone, `hub-not-read`), its FCCs and its IPAM objects.
   */
  readonly hubs: readonly {
    readonly hub: string;
    readonly bound: boolean;
    readonly away: string | null;
    readonly fccs: number;
    readonly ipam: { readonly known: true; readonly ips: number; readonly configurations: number } | { readonly known: false; readonly why: string };
  }[];
  /** The leaf's consumers (its ForeignClusters), or null where they are not known. */
  readonly consumers: readonly string[] | null;
  /** Consumers of this leaf that no reader stands for: their objects are left alone (`hub-not-read`). */
  readonly unreadHubs: readonly string[];
  /** The hub's IPAM objects the stock path reads, or why they are not known. */
  readonly hub:
    | { readonly known: true; readonly ips: number; readonly configurations: readonly { configuration: string; peer: string | null; hubViewPodCIDRs: readonly string[]; peerPodCIDRs: readonly string[] }[];
        readonly directNetworks: readonly { peer: string; state: string; detail: string }[];
        /** Liqo's own direct connections (ShadowEndpointSlices): what the repair makes of each peer's addresses. */
        readonly directConnections: readonly PeerDirectConnections[] }
    | { readonly known: false; readonly why: string };
  /** The leaf's own Liqo objects the decisions read (cluster mode, or given with the files); empty when unknown. */
  readonly leaf: {
    readonly connections: Readonly<Record<string, string>>;
    readonly configurations: readonly {
      configuration: string; peer: string | null; ownPodCIDRs: readonly string[]; peerPodCIDRs: readonly string[]; peerExternalCIDRs: readonly string[];
    }[];
  };
  /**
   * What the view is read from and whether reading it keeps failing: the clusters and their credentials (when they
   * were reloaded, whether the API refuses them), or the files; never where they are.
   */
  readonly sources: readonly ShownSourceReport[];
}

export interface DebugPairsInput {
  readonly snapshot: Snapshot;
  /** `--cluster-id`, if configured. */
  readonly clusterId: string | undefined;
  readonly synced: boolean;
  /** Epoch ms of the last sync, undefined before the first. */
  readonly lastSync: number | undefined;
  readonly sources?: readonly SourceReport[];
}

const texts = (cidrs: readonly Cidr[]): string[] => cidrs.map((cidr) => cidr.text);

export function debugPairs({ snapshot, clusterId, synced, lastSync, sources }: DebugPairsInput): DebugPairs {
  const readers = { parts: snapshot.hubs, consumers: snapshot.consumers };
  const hubOf = new Map<string, string>();
  for (const part of snapshot.hubs) for (const fcc of part.fccs) hubOf.set(fcc.ref, readerName(part, readers));
  const hubField = (fcc: string): { hub?: string } => {
    const hub = hubOf.get(fcc);
    return hub === undefined ? {} : { hub };
  };
  return {
    version: snapshot.version,
    synced,
    lastSync: lastSync === undefined ? null : new Date(lastSync).toISOString(),
    fccs: snapshot.fccs.length,
    notes: viewNotes(snapshot, clusterId, synced),
    clusters: localClusters(snapshot, clusterId).map((id) => {
      const states = statesOf(snapshot, { cluster: id, configured: clusterId });
      return {
        clusterId: id,
        pairs: snapshot.forCluster(id).pairs.map((pair) => ({
          fcc: pair.fcc, ...hubField(pair.fcc), peer: pair.peer, hubPrefix: pair.hubPrefix.text, shortcutPrefix: pair.shortcutPrefix.text,
        })),
        unusable: states.flatMap((state) => (state.usable ? []
          : [{ fcc: state.fcc, ...hubField(state.fcc), peer: state.peer ?? null, reason: state.reason, detail: state.detail }])),
      };
    }),
    // The one reader's IPAM in detail (with several, each hub's in `hubs`); the peers' networks of every hub read.
    hub: snapshot.hub.known
      ? {
        known: true, ips: snapshot.hub.ips.size,
        configurations: snapshot.hub.configurations.map((c) => ({
          configuration: c.ref, peer: c.remoteCluster ?? null,
          hubViewPodCIDRs: c.podMappings.map((m) => m.seen.text), peerPodCIDRs: c.podMappings.map((m) => m.declared.text),
        })),
        directNetworks: peerDirectNetworks(snapshot, clusterId).map(({ peer, state, detail }) => ({ peer, state, detail })),
        directConnections: peerDirectConnections(snapshot, clusterId),
      }
      : { known: false, why: withoutPaths(snapshot.hub.why) },
    hubs: snapshot.hubs.map((part) => ({
      hub: readerName(part, readers),
      bound: part.id !== undefined,
      away: part.away ?? null,
      fccs: part.fccs.length,
      ipam: part.ipam.known ? { known: true, ips: part.ipam.ips.size, configurations: part.ipam.configurations.length } : { known: false, why: withoutPaths(part.ipam.why) },
    })),
    consumers: snapshot.consumers ?? null,
    unreadHubs: snapshot.unreadHubs,
    leaf: {
      connections: Object.fromEntries(sortedTunnels(snapshot.tunnels).map(([peer, state]) => [peer, tunnelWord(state)])),
      configurations: snapshot.views.configurations.map((c) => ({
        configuration: c.ref, peer: c.remoteCluster ?? null,
        ownPodCIDRs: texts(c.localPod), peerPodCIDRs: texts(c.remotePod), peerExternalCIDRs: texts(c.remoteExternal),
      })),
    },
    sources: (sources ?? []).map(shownSource),
  };
}
