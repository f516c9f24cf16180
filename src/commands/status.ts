// `shortcut-webhook status`: which path each peer's (or Service's) traffic takes now, read from the cluster. It builds
// serve's own view (live-view.ts, as explain does), then lists the stored EndpointSlices and ShadowEndpointSlices in
// pages of 500 and folds each page into counters (offline/status.ts) before asking for the next, so a leaf with tens of
// thousands of slices is never held whole. Read-only: it lists and watches, nothing else.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { EXIT_INVALID_INPUT, EXIT_OK, type Io } from '../cli.ts';
import type { StatusConfig } from '../config.ts';
import { MANAGED_BY_LABEL, REFLECTION_MANAGER } from '../core/endpoint-slice.ts';
import { CONNECTION_PLURAL } from '../core/leaf-views.ts';
import { viewNotes } from '../core/local-clusters.ts';
import { SHADOW_GROUP, SHADOW_PLURAL, SHADOW_VERSION } from '../core/shadow-endpoint-slice.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { describeError, httpStatus, readListPage, type KubeAccess, type ListPage } from '../kube/client.ts';
import {
  connectionRecord, SERVICE_NAME_LABEL, StatusFold, type AddressStatus, type ConnectionRecord, type CountsJson, type PeerStatus,
  type ServiceStatus, type StoredResource,
} from '../offline/status.ts';
import { table } from '../offline/explain.ts';
import { ContinueTokens } from '../util/continue-tokens.ts';
import { errorMessage } from '../util/errors.ts';
import { loadLiveAccess, readLiveView } from './live-view.ts';

/** Items per list request: the API server's own recommendation for large collections, and what bounds memory here. */
export const PAGE_SIZE = 500;

export interface RunStatusOptions {
  readonly syncTimeoutMs?: number;
}

interface Listed {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** `endpointslices.discovery.k8s.io`: how messages name it, as kubectl and RBAC do. */
  readonly title: string;
}

const ENDPOINT_SLICES: Listed = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', title: 'endpointslices.discovery.k8s.io' };
const SHADOWS: Listed = { group: SHADOW_GROUP, version: SHADOW_VERSION, plural: SHADOW_PLURAL, title: `${SHADOW_PLURAL}.${SHADOW_GROUP}` };
const CONNECTIONS: Listed = { group: 'networking.liqo.io', version: 'v1beta1', plural: CONNECTION_PLURAL, title: `${CONNECTION_PLURAL}.networking.liqo.io` };

/** Why a list failed, for the command's message. */
class ListError extends Error {
  constructor(readonly resource: Listed, readonly status: number | undefined, message: string) {
    super(message);
  }
}

type PageReader = (token: string | undefined) => Promise<ListPage>;

function pageReader(access: KubeAccess, resource: Listed, namespace: string | undefined, labelSelector: string | undefined): PageReader {
  const api = access.config.makeApiClient(CustomObjectsApi);
  const where = { group: resource.group, version: resource.version, plural: resource.plural, limit: PAGE_SIZE, ...(labelSelector === undefined ? {} : { labelSelector }) };
  const scope = namespace === undefined ? 'in all namespaces' : `in namespace ${namespace}`;
  return async (token) => {
    const paging = token === undefined ? {} : { _continue: token };
    try {
      return readListPage(namespace === undefined
        ? await api.listClusterCustomObject({ ...where, ...paging })
        : await api.listNamespacedCustomObject({ ...where, namespace, ...paging }));
    } catch (error) {
      throw new ListError(resource, httpStatus(error), `cannot list ${resource.title} ${scope}: ${describeError(error)}`);
    }
  };
}

/** Every page in turn, each handed over and dropped before the next is asked for; `first` is a page already read. */
async function eachPage(read: PageReader, onItems: (items: readonly unknown[]) => void, first?: ListPage): Promise<void> {
  let page = first ?? await read(undefined);
  const tokens = new ContinueTokens();
  for (;;) {
    onItems(page.items);
    const token = page.continueToken;
    if (token === undefined) return;
    tokens.follow(token);
    page = await read(token);
  }
}

function whyText(why: PeerStatus['why']): string {
  return why.length === 0 ? '' : why.map((entry) => `${entry.reason} ${entry.addresses}`).join(', ');
}

/** A peer with no address counted: what the view says of it, path by path. */
function viewText(view: PeerStatus['view']): string {
  const parts = [
    ...view.fccs.map((fcc) => `fcc ${fcc.state}`),
    ...(view.directNetwork === null ? [] : [`direct network ${view.directNetwork}`]),
    ...(view.directConnections === null ? [] : [`direct connections ${view.directConnections}`]),
  ];
  return parts.length === 0 ? '-' : parts.join('; ');
}

function outOfStep(counts: CountsJson): string {
  return String(counts.outOfStep.endpointSlices + counts.outOfStep.shadowEndpointSlices);
}

const COUNT_HEADER = ['SLICES', 'SHADOWS', 'SERVICES', 'DIRECT', 'HUB', 'NONE', 'OUT-OF-STEP'] as const;

function countCells(counts: CountsJson): string[] {
  return [counts.endpointSlices, counts.shadowEndpointSlices, counts.services, counts.addresses.direct, counts.addresses.hub, counts.addresses.none]
    .map(String).concat(outOfStep(counts));
}

/** A HUBS column only where objects of more than one hub were seen: a single-hub leaf's tables stay as they were. */
function severalHubs(rows: readonly { readonly hubs: readonly string[] }[]): boolean {
  return new Set(rows.flatMap((row) => row.hubs)).size > 1;
}

const hubsCell = (hubs: readonly string[]): string => hubs.join(',') || '-';

export function peerLines(peers: readonly PeerStatus[]): string[] {
  const hubs = severalHubs(peers);
  return table(['PEER', ...(hubs ? ['HUBS'] : []), 'PATH', 'WHY', 'CONNECTION', 'SINCE', ...COUNT_HEADER], peers.map((peer) => [
    peer.role === 'hub' ? `${peer.peer} (hub)` : peer.peer,
    ...(hubs ? [hubsCell(peer.hubs)] : []),
    peer.path,
    whyText(peer.why) || viewText(peer.view),
    peer.connection ?? '-',
    peer.since ?? '-',
    ...countCells(peer.counts),
  ]));
}

export function serviceLines(services: readonly ServiceStatus[]): string[] {
  const hubs = severalHubs(services);
  return table(['SERVICE', ...(hubs ? ['HUBS'] : []), 'PATH', 'PEERS', 'WHY', ...COUNT_HEADER.filter((title) => title !== 'SERVICES')], services.map((service) => [
    service.service, ...(hubs ? [hubsCell(service.hubs)] : []), service.path, service.peers.join(',') || '-', whyText(service.why) || '-',
    ...countCells(service.counts).filter((_, i) => i !== 2),
  ]));
}

export function addressLines(addresses: readonly AddressStatus[]): string[] {
  return table(['SERVICE', 'OBJECT', 'INPUT', 'OUTPUT', 'PEER', 'PATH', 'REASON', 'IN STEP'], addresses.map((address) => [
    address.service, `${address.resource === 'EndpointSlice' ? 'endpointslice' : 'shadowendpointslice'} ${address.object}`,
    address.input, address.output, address.peer, address.path, address.reason, address.outOfStep ? 'no' : 'yes',
  ]));
}

/** `status -o json`: one object for the whole run. */
export interface StatusReport {
  readonly cluster: string | null;
  readonly peers?: readonly PeerStatus[];
  readonly services?: readonly ServiceStatus[];
  readonly addresses?: readonly AddressStatus[];
  readonly totals: CountsJson;
  readonly notes: readonly string[];
}

export function renderStatus(report: StatusReport, format: StatusConfig['output']): string {
  if (format === 'json') return `${JSON.stringify(report)}\n`;
  const lines = [`cluster ${report.cluster ?? '(unknown: no reflected object names it; give --cluster-id)'}`];
  if (report.peers !== undefined) lines.push(...(report.peers.length === 0 ? ['(no peer cluster known)'] : peerLines(report.peers)));
  if (report.services !== undefined) lines.push(...(report.services.length === 0 ? ['(no reflected Service here)'] : serviceLines(report.services)));
  if (report.addresses !== undefined && report.addresses.length > 0) lines.push('', ...addressLines(report.addresses));
  for (const note of report.notes) lines.push(`(${note})`);
  return `${lines.join('\n')}\n`;
}

export async function runStatus(config: StatusConfig, io: Io, env: NodeJS.ProcessEnv, options: RunStatusOptions = {}): Promise<number> {
  const fail = (message: string): number => {
    io.stderr.write(`shortcut-webhook status: ${message}\n`);
    return EXIT_INVALID_INPUT;
  };
  const access = loadLiveAccess(config, env);
  if (typeof access === 'string') return fail(access);
  const { scope } = config;
  const namespace = scope.kind === 'services' ? scope.namespace : undefined;
  const service = scope.kind === 'services' ? scope.service : undefined;
  const selector = `${MANAGED_BY_LABEL}=${REFLECTION_MANAGER}${service === undefined ? '' : `,${SERVICE_NAME_LABEL}=${service}`}`;
  const slices = pageReader(access.local, ENDPOINT_SLICES, namespace, selector);
  const shadows = pageReader(access.local, SHADOWS, namespace, selector);
  const notes: string[] = [];

  // The first page before the view: an unreachable cluster or a refused list fails at once, not after the sync bound.
  let first: ListPage;
  try {
    first = await slices(undefined);
  } catch (error) {
    return fail(errorMessage(error));
  }
  const snapshot = await readLiveView(access, {
    command: 'status', stderr: io.stderr, shortcutsNamespace: config.shortcutsNamespace,
    hubNamespaces: config.hubNamespaces, syncTimeoutMs: options.syncTimeoutMs,
    connectionStaleAfterMs: config.connectionStaleAfterMs,
  });
  if (typeof snapshot === 'string') return fail(snapshot);

  const fold = new StatusFold(snapshot, { clusterId: config.clusterId, keepAddresses: config.addresses });
  const folder = (resource: StoredResource) => (items: readonly unknown[]) => {
    for (const item of items) fold.add(resource, item);
  };
  try {
    // The shadows first: the EndpointSlice Liqo's writer made from one then counts its Service's addresses once.
    try {
      await eachPage(shadows, folder('ShadowEndpointSlice'));
    } catch (error) {
      // A leaf without Liqo's CRDs: the EndpointSlice route still says all there is to say.
      if (!(error instanceof ListError) || error.status !== 404) throw error;
      notes.push(`${SHADOWS.title} is not served here (Liqo's CRDs are not installed): no ShadowEndpointSlice counted`);
    }
    await eachPage(slices, folder('EndpointSlice'), first);
  } catch (error) {
    return fail(errorMessage(error));
  }
  const connections = scope.kind === 'peers' ? await readConnections(access.local, notes) : [];

  const totals = fold.totals();
  if (service !== undefined && totals.endpointSlices + totals.shadowEndpointSlices === 0) {
    return fail(`no Service ${namespace ?? ''}/${service} with reflected slices: no EndpointSlice or ShadowEndpointSlice labelled ${SERVICE_NAME_LABEL}=${service} and ${selector.split(',')[0]}`);
  }
  const cluster = fold.cluster();
  const report: StatusReport = {
    cluster: cluster ?? null,
    ...(scope.kind === 'peers' ? { peers: fold.peerStatuses(connections) } : { services: fold.serviceStatuses() }),
    ...(config.addresses ? { addresses: fold.addresses } : {}),
    totals,
    notes: [...notes, ...fold.disagreements, ...viewNotesOf(snapshot, cluster)],
  };
  io.stdout.write(renderStatus(report, config.output));
  return EXIT_OK;
}

function viewNotesOf(snapshot: Snapshot, cluster: string | undefined): string[] {
  return cluster === undefined ? [] : viewNotes(snapshot, cluster, true);
}

/** The leaf's Connections, for when each last changed; an absent CRD or a refused list is a note, not a failure. */
async function readConnections(access: KubeAccess, notes: string[]): Promise<ConnectionRecord[]> {
  const records: ConnectionRecord[] = [];
  try {
    await eachPage(pageReader(access, CONNECTIONS, undefined, undefined), (items) => {
      for (const item of items) {
        const record = connectionRecord(item);
        if (record !== undefined) records.push(record);
      }
    });
  } catch (error) {
    notes.push(error instanceof ListError && error.status === 404
      ? `${CONNECTIONS.title} is not served here (Liqo's CRDs are not installed): no Connection state`
      : `${errorMessage(error)}: no Connection time shown`);
  }
  return records;
}
