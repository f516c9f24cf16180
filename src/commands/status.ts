// `shortcut-webhook status`: which path each peer's (or Service's) traffic takes now, read from the cluster. It builds
// serve's own view (live-view.ts, as explain does), then lists the stored EndpointSlices and ShadowEndpointSlices in
// pages of 500 and folds each page into counters (offline/status.ts), so a leaf with tens of thousands of slices is
// never held whole: at most the page being folded and the next one, asked for before the fold so that the API server
// reads and encodes it meanwhile. The pages come over the lean client (kube/lean-client.ts: one JSON.parse per page,
// no gzip, one keep-alive connection), at the pace of a plain list of the same objects (bench section status).
// Read-only: it lists and watches, nothing else.
import { EXIT_INVALID_INPUT, EXIT_OK, type Io } from '../cli.ts';
import type { StatusConfig } from '../config.ts';
import { MANAGED_BY_LABEL, REFLECTION_MANAGER } from '../core/endpoint-slice.ts';
import { CONNECTION_PLURAL } from '../core/leaf-views.ts';
import { viewNotes } from '../core/local-clusters.ts';
import { SHADOW_GROUP, SHADOW_PLURAL, SHADOW_VERSION } from '../core/shadow-endpoint-slice.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { describeError, httpStatus, readListPage, type ListPage } from '../kube/client.ts';
import { LeanKubeClient } from '../kube/lean-client.ts';
import {
  connectionRecord, SERVICE_NAME_LABEL, StatusFold, type AddressStatus, type ConnectionRecord, type CountsJson, type PeerStatus,
  type ServiceStatus, type StoredResource,
} from '../offline/status.ts';
import { table } from '../offline/explain.ts';
import { ContinueTokens } from '../util/continue-tokens.ts';
import { errorMessage } from '../util/errors.ts';
import { loadLiveAccess, readLiveView, type LiveAccess } from './live-view.ts';

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

function pageReader(client: LeanKubeClient, resource: Listed, namespace: string | undefined, labelSelector: string | undefined): PageReader {
  const where = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  const collection = `/apis/${resource.group}/${resource.version}${where}/${resource.plural}`;
  const scope = namespace === undefined ? 'in all namespaces' : `in namespace ${namespace}`;
  return async (token) => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (labelSelector !== undefined) query.set('labelSelector', labelSelector);
    if (token !== undefined) query.set('continue', token);
    try {
      return readListPage(await client.send({ method: 'GET', path: `${collection}?${query}`, read: 'json' }));
    } catch (error) {
      throw new ListError(resource, httpStatus(error), `cannot list ${resource.title} ${scope}: ${describeError(error)}`);
    }
  };
}

/**
 * Every page in turn, each handed over and dropped; `first` is a page already read. The next page is asked for before
 * this one is handed over, so at most two are held.
 */
async function eachPage(read: PageReader, onItems: (items: readonly unknown[]) => void, first?: ListPage): Promise<void> {
  let page = first ?? await read(undefined);
  const tokens = new ContinueTokens();
  for (;;) {
    const token = page.continueToken;
    if (token !== undefined) tokens.follow(token);
    const next = token === undefined ? undefined : read(token);
    // Its failure is met below; should onItems throw first, it is not left unhandled.
    next?.catch(() => undefined);
    onItems(page.items);
    if (next === undefined) return;
    page = await next;
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
  const client = new LeanKubeClient({ config: access.local.config });
  try {
    return await readStatus(config, io, { access, client, fail, syncTimeoutMs: options.syncTimeoutMs });
  } finally {
    // Its kept-alive connection closed: nothing is left to hold the process.
    client.close();
  }
}

interface StatusRun {
  readonly access: LiveAccess;
  readonly client: LeanKubeClient;
  readonly fail: (message: string) => number;
  readonly syncTimeoutMs: number | undefined;
}

async function readStatus(config: StatusConfig, io: Io, { access, client, fail, syncTimeoutMs }: StatusRun): Promise<number> {
  const { scope } = config;
  const namespace = scope.kind === 'services' ? scope.namespace : undefined;
  const service = scope.kind === 'services' ? scope.service : undefined;
  const selector = `${MANAGED_BY_LABEL}=${REFLECTION_MANAGER}${service === undefined ? '' : `,${SERVICE_NAME_LABEL}=${service}`}`;
  const slices = pageReader(client, ENDPOINT_SLICES, namespace, selector);
  const shadows = pageReader(client, SHADOWS, namespace, selector);
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
    hubNamespaces: config.hubNamespaces, syncTimeoutMs,
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
  const connections = scope.kind === 'peers' ? await readConnections(client, notes) : [];

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
async function readConnections(client: LeanKubeClient, notes: string[]): Promise<ConnectionRecord[]> {
  const records: ConnectionRecord[] = [];
  try {
    await eachPage(pageReader(client, CONNECTIONS, undefined, undefined), (items) => {
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
