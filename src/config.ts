// Flags + environment → one frozen config per command. Every default lives here, and every bad value gets one
// readable error (a UsageError: exit code 2). Flags win over SHORTCUT_WEBHOOK_* variables.
import { parseArgs } from 'node:util';
import { parseDuration } from './util/duration.ts';
import { errorMessage } from './util/errors.ts';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const ENV_PREFIX = 'SHORTCUT_WEBHOOK_';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
export type OutputFormat = 'yaml' | 'json' | 'patch';
const OUTPUT_FORMATS: readonly OutputFormat[] = ['yaml', 'json', 'patch'];

interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly value?: string;
  readonly help: string;
}

export type FlagTable = Readonly<Record<string, FlagSpec>>;

export const SERVE_FLAGS = {
  host: { type: 'string', value: 'ADDR', help: 'address to listen on (default: all interfaces, IPv6 and IPv4)' },
  port: { type: 'string', value: 'N', help: 'HTTPS port for admission reviews (default 9443)' },
  'ops-port': { type: 'string', value: 'N', help: 'plain HTTP port for /healthz, /readyz, /metrics, /debug/pairs (default 8080)' },
  'tls-cert': { type: 'string', value: 'FILE', help: 'serving certificate (PEM), reloaded when it changes (default: a development pair, see README)' },
  'tls-key': { type: 'string', value: 'FILE', help: 'serving key (PEM), reloaded when it changes' },
  'cluster-id': { type: 'string', value: 'ID', help: 'local cluster ID for slices without offloading.liqo.io/destination' },
  shortcuts: { type: 'string', multiple: true, value: 'PATH', help: 'watch ForeignClusterConnections (and the leaf\'s Liqo Connections and Configurations) in these files or folders instead of a cluster (repeatable)' },
  kubeconfig: { type: 'string', value: 'FILE', help: 'kubeconfig of the local cluster (default: KUBECONFIG, then in-cluster)' },
  hub: { type: 'string', multiple: true, value: 'PATH', help: 'the hub\'s Liqo IPs and Configurations (and any FCCs) in these files or folders, for the stock-Liqo path in file mode (repeatable)' },
  'shortcuts-kubeconfig': { type: 'string', value: 'FILE', help: 'watch ForeignClusterConnections on this cluster instead (e.g. the hub), and the hub\'s Liqo IPs and Configurations there' },
  'shortcuts-namespace': { type: 'string', value: 'NS', help: 'watch ForeignClusterConnections in this namespace only (default: all)' },
  'no-controller': { type: 'boolean', help: 'do not reconcile stored slices when the shortcuts change' },
  'resync-interval': { type: 'string', value: 'DUR', help: 'periodic reconcile of stored slices, e.g. 30s, 10m, 1h; 0 turns it off (default 10m)' },
  'stale-view-after': { type: 'string', value: 'DUR', help: 'not ready once every read of the FCCs has failed for this long, so reviews go to replicas with a live view; 0 turns it off (default 60s)' },
  'log-level': { type: 'string', value: 'L', help: `one of ${LOG_LEVELS.join(', ')} (default info)` },
  help: { type: 'boolean', help: 'show this help' },
} as const satisfies FlagTable;

export const REWRITE_FLAGS = {
  shortcuts: { type: 'string', multiple: true, value: 'PATH', help: 'ForeignClusterConnections, and optionally the leaf\'s Liqo Connections and Configurations: a file or folder of YAML/JSON (repeatable, required)' },
  hub: { type: 'string', multiple: true, value: 'PATH', help: 'the hub\'s Liqo IPs and Configurations (and any FCCs): a file or folder of YAML/JSON, for the stock-Liqo path (repeatable)' },
  'cluster-id': { type: 'string', value: 'ID', help: 'local cluster ID for slices without offloading.liqo.io/destination' },
  output: { type: 'string', value: 'FORMAT', help: 'yaml (default), json (one document per line) or patch (the JSON Patch)' },
  explain: { type: 'boolean', help: 'print, per address, input, output, FCC and reason, and each FCC\'s state' },
  help: { type: 'boolean', help: 'show this help' },
} as const satisfies FlagTable;

function envName(flag: string): string {
  return `${ENV_PREFIX}${flag.toUpperCase().replaceAll('-', '_')}`;
}

type Value = string | boolean | (string | boolean)[];

/** Flag values with where each came from, so a bad value is reported under the name the user actually set. */
interface FlagSources {
  readonly values: ReadonlyMap<string, Value>;
  /** Flags read from their environment variable rather than given on the command line. */
  readonly fromEnv: ReadonlySet<string>;
  readonly positionals: readonly string[];
  /** --help was given: nothing else is checked. */
  readonly help: boolean;
}

class FlagValues {
  constructor(private readonly sources: FlagSources) {}

  get positionals(): readonly string[] {
    return this.sources.positionals;
  }

  get help(): boolean {
    return this.sources.help;
  }

  /** `--port` when given as a flag, `SHORTCUT_WEBHOOK_PORT` when read from the environment. */
  name(flag: string): string {
    return this.sources.fromEnv.has(flag) ? envName(flag) : `--${flag}`;
  }

  isFromEnv(flag: string): boolean {
    return this.sources.fromEnv.has(flag);
  }

  text(flag: string): string | undefined {
    const value = this.sources.values.get(flag);
    if (typeof value !== 'string') return undefined;
    if (value.trim() === '') throw new UsageError(`${this.name(flag)} must not be empty`);
    return value;
  }

  list(flag: string): string[] {
    const value = this.sources.values.get(flag);
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  }

  flag(flag: string): boolean {
    return this.sources.values.get(flag) === true;
  }

  port(flag: string, fallback: number): number {
    const raw = this.text(flag);
    if (raw === undefined) return fallback;
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) throw new UsageError(`${this.name(flag)} ${raw}: expected a port number from 0 to 65535`);
    return Number(raw);
  }

  oneOf<T extends string>(flag: string, allowed: readonly T[], fallback: T): T {
    const raw = this.text(flag);
    if (raw === undefined) return fallback;
    const found = allowed.find((candidate) => candidate === raw);
    if (found === undefined) throw new UsageError(`${this.name(flag)} ${raw}: expected one of ${allowed.join(', ')}`);
    return found;
  }
}

/** parseArgs, then every flag not given is read from its environment variable. --help wins over bad variables. */
function readFlags(flags: FlagTable, argv: readonly string[], env: NodeJS.ProcessEnv): FlagValues {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: flags, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
  const values = new Map<string, Value>();
  for (const [flag, value] of Object.entries(parsed.values)) if (value !== undefined) values.set(flag, value);
  if (values.get('help') === true) return new FlagValues({ values, fromEnv: new Set(), positionals: parsed.positionals, help: true });
  const fromEnv = new Set<string>();
  for (const [flag, spec] of Object.entries(flags)) {
    if (values.has(flag) || flag === 'help') continue;
    const raw = env[envName(flag)];
    if (raw === undefined || raw === '') continue;
    fromEnv.add(flag);
    if (spec.type === 'boolean') {
      if (!/^(1|0|true|false|yes|no)$/i.test(raw)) throw new UsageError(`${envName(flag)}=${raw}: expected true or false`);
      values.set(flag, /^(1|true|yes)$/i.test(raw));
    } else {
      values.set(flag, spec.multiple ? raw.split(',').map((part) => part.trim()).filter((part) => part !== '') : raw);
    }
  }
  return new FlagValues({ values, fromEnv, positionals: parsed.positionals, help: false });
}

export interface ServeConfig {
  /** Undefined: every interface, `::` (dual stack) where the kernel has IPv6, else `0.0.0.0`. */
  readonly host: string | undefined;
  readonly port: number;
  readonly opsPort: number;
  /** Both or neither; neither means a development pair (certs/out, or made at start-up). */
  readonly tls: { readonly cert: string; readonly key: string } | undefined;
  readonly clusterId: string | undefined;
  /** `files` when --shortcuts or --hub is given, else `cluster` (the local API, or --shortcuts-kubeconfig). */
  readonly source: 'files' | 'cluster';
  readonly shortcuts: readonly string[];
  /** --hub: the hub's IPAM objects in files (file mode); in cluster mode the hub is read through --shortcuts-kubeconfig. */
  readonly hub: readonly string[];
  /** --kubeconfig only; cluster mode falls back to KUBECONFIG, file mode does not (see main.ts). */
  readonly kubeconfig: string | undefined;
  readonly shortcutsKubeconfig: string | undefined;
  readonly shortcutsNamespace: string | undefined;
  readonly controller: boolean;
  readonly resyncIntervalMs: number;
  /** 0: never; see STALE_VIEW_AFTER_MS for the default and why. */
  readonly staleViewAfterMs: number;
  readonly logLevel: LogLevel;
}

/**
 * How long every list and watch of the FCCs may fail before a replica says it is not ready (/readyz 503), so that
 * the API server's reviews go to replicas whose view still follows the source (or, with none left, fail open:
 * failurePolicy Ignore, no rewrite). 60 s is twice the watch's backoff cap (30 s): at least two retries at the cap,
 * about six attempts in all, must have failed, so an API server restart or a control-plane rollout (seconds to tens
 * of seconds) does not take every replica out at once, while a replica whose credentials were revoked leaves within
 * about a minute plus the readiness probe (5 s x 2). Failure is counted from the first failed attempt, not from the
 * last event: a quiet source is not stale; a silently dead stream counts from when the watchdog drops it (the watch
 * timeout plus 30 s), and the webhook's own 5 s timeout plays no part, a stale replica answers fast.
 */
export const STALE_VIEW_AFTER_MS = 60_000;

export type Parsed<T> = { readonly help: true } | { readonly help: false; readonly config: T };

export function parseServeArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed<ServeConfig> {
  const values = readFlags(SERVE_FLAGS, argv, env);
  if (values.help) return { help: true };
  if (values.positionals.length > 0) throw new UsageError(`serve takes no arguments, got ${values.positionals.join(' ')}`);
  const tlsCert = values.text('tls-cert');
  const tlsKey = values.text('tls-key');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both, or neither for a development pair');
  }
  let shortcuts = values.list('shortcuts');
  let shortcutsKubeconfig = values.text('shortcuts-kubeconfig');
  if (shortcuts.length > 0 && shortcutsKubeconfig !== undefined) {
    // Two sources of shortcuts: a flag beats a variable, and two of a kind are a mistake to say out loud.
    const shortcutsFromEnv = values.isFromEnv('shortcuts');
    if (shortcutsFromEnv === values.isFromEnv('shortcuts-kubeconfig')) {
      throw new UsageError(`${values.name('shortcuts')} and ${values.name('shortcuts-kubeconfig')} are two sources of shortcuts: give one`);
    }
    if (shortcutsFromEnv) shortcuts = [];
    else shortcutsKubeconfig = undefined;
  }
  const hub = values.list('hub');
  if (hub.length > 0 && shortcutsKubeconfig !== undefined) {
    throw new UsageError(`${values.name('hub')} reads the hub from files, ${values.name('shortcuts-kubeconfig')} from its API: give one`);
  }
  const resyncRaw = values.text('resync-interval');
  const resyncIntervalMs = resyncRaw === undefined ? 600_000 : parseDuration(resyncRaw);
  if (resyncIntervalMs === undefined || (resyncIntervalMs > 0 && resyncIntervalMs < 1000)) {
    throw new UsageError(`${values.name('resync-interval')} ${resyncRaw}: expected a duration of at least 1s such as 30s, 10m or 1h, or 0 for off`);
  }
  const staleRaw = values.text('stale-view-after');
  const staleViewAfterMs = staleRaw === undefined ? STALE_VIEW_AFTER_MS : parseDuration(staleRaw);
  if (staleViewAfterMs === undefined) {
    throw new UsageError(`${values.name('stale-view-after')} ${staleRaw}: expected a duration such as 30s or 2m, or 0 for never`);
  }
  const config: ServeConfig = {
    host: values.text('host'),
    port: values.port('port', 9443),
    opsPort: values.port('ops-port', 8080),
    tls: tlsCert !== undefined && tlsKey !== undefined ? { cert: tlsCert, key: tlsKey } : undefined,
    clusterId: values.text('cluster-id'),
    source: shortcuts.length > 0 || hub.length > 0 ? 'files' : 'cluster',
    shortcuts,
    hub,
    kubeconfig: values.text('kubeconfig'),
    shortcutsKubeconfig,
    shortcutsNamespace: values.text('shortcuts-namespace'),
    controller: !values.flag('no-controller'),
    resyncIntervalMs,
    staleViewAfterMs,
    logLevel: values.oneOf('log-level', LOG_LEVELS, 'info'),
  };
  return { help: false, config: Object.freeze(config) };
}

export interface RewriteConfig {
  readonly shortcuts: readonly string[];
  readonly hub: readonly string[];
  readonly clusterId: string | undefined;
  readonly output: OutputFormat;
  readonly explain: boolean;
  /** A file, or `-` for standard input (the default). */
  readonly input: string;
}

export function parseRewriteArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed<RewriteConfig> {
  const values = readFlags(REWRITE_FLAGS, argv, env);
  if (values.help) return { help: true };
  const shortcuts = values.list('shortcuts');
  if (shortcuts.length === 0) throw new UsageError('rewrite needs at least one --shortcuts PATH');
  if (values.positionals.length > 1) throw new UsageError(`rewrite takes one input (FILE or -), got ${values.positionals.length}`);
  const config: RewriteConfig = {
    shortcuts,
    hub: values.list('hub'),
    clusterId: values.text('cluster-id'),
    output: values.oneOf('output', OUTPUT_FORMATS, 'yaml'),
    explain: values.flag('explain'),
    input: values.positionals[0] ?? '-',
  };
  return { help: false, config: Object.freeze(config) };
}

export function helpText(usage: string, flags: FlagTable): string {
  const rows = Object.entries(flags).map(([flag, spec]) => {
    const left = `--${flag}${spec.value ? ` ${spec.value}` : ''}`;
    const env = flag === 'help' ? '' : ` [${envName(flag)}]`;
    return `  ${left.padEnd(28)} ${spec.help}${env}`;
  });
  return `${usage}\n\nFlags (each also read from the environment variable shown; flags win):\n${rows.join('\n')}\n`;
}
