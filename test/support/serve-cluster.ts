// Small helpers for end-to-end tests of a running `shortcut-webhook serve`: a test API server that calls that
// process's webhook on every slice write, and readers for its logs and ops endpoints.
import type { RunningServer } from './process.ts';
import { startKubeApiServer, type KubeApiServer } from './kube-api-server.ts';
import { httpsWebhookHook } from './kube-webhook.ts';

export interface WebhookedApi {
  readonly api: KubeApiServer;
  /** From now on every slice write goes through this process's webhook over HTTPS (before: unchanged). */
  callWebhookOf(server: RunningServer | undefined): void;
}

export async function apiCallingWebhook(ca: Buffer): Promise<WebhookedApi> {
  let target: RunningServer | undefined;
  const api = await startKubeApiServer({
    mutate: httpsWebhookHook(() => (target === undefined ? undefined : { url: `https://localhost:${target.webhookPort}`, ca })),
  });
  return { api, callWebhookOf: (server) => { target = server; } };
}

/** The addresses of a stored slice in namespace `demo`, endpoint by endpoint, as one comparable string. */
export function storedAddresses(api: KubeApiServer, name: string): string {
  const slice = api.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name });
  return JSON.stringify(((slice?.endpoints ?? []) as { addresses: string[] }[]).map((endpoint) => endpoint.addresses));
}

export interface LogRecord {
  readonly msg?: string;
  readonly [field: string]: unknown;
}

/** The process's JSON log lines so far (stderr and anything not JSON left out). */
export function logRecords(server: RunningServer): LogRecord[] {
  return server.lines.flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return typeof parsed === 'object' && parsed !== null ? [parsed as LogRecord] : [];
    } catch {
      return [];
    }
  });
}

export async function opsGet(server: RunningServer, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${server.opsPort}${path}`);
  return { status: response.status, text: await response.text() };
}

/** One sample of the ops port's Prometheus text, e.g. metric('shortcut_webhook_pairs{state="usable"}'); NaN if absent. */
export async function metricValue(server: RunningServer, series: string): Promise<number> {
  const { text } = await opsGet(server, '/metrics');
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

export interface DebugPairsBody {
  readonly version: number;
  readonly synced: boolean;
  readonly fccs: number;
  readonly hub: { readonly known: true; readonly ips: number } | { readonly known: false; readonly why: string };
  readonly clusters: readonly {
    readonly clusterId: string;
    readonly pairs: readonly { fcc: string; hubPrefix: string; shortcutPrefix: string }[];
    readonly unusable: readonly { fcc: string; reason: string }[];
  }[];
}

export async function debugPairs(server: RunningServer): Promise<DebugPairsBody> {
  return JSON.parse((await opsGet(server, '/debug/pairs')).text) as DebugPairsBody;
}

/** Usable pairs of every local cluster, as `ns/name:hub->shortcut`, sorted. */
export async function usablePairs(server: RunningServer): Promise<string[]> {
  const body = await debugPairs(server);
  return body.clusters.flatMap((c) => c.pairs.map((p) => `${p.fcc}:${p.hubPrefix}->${p.shortcutPrefix}`)).sort();
}

/** SIGKILL if still running, and wait for the exit: no child outlives its test. */
export async function killServer(server: RunningServer | undefined): Promise<void> {
  if (server === undefined) return;
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await server.exited;
}
