// Flags + environment → one frozen config per command. Every default lives here, and every bad value gets one
// readable error (a UsageError: exit code 2). Flags win over SHORTCUT_WEBHOOK_* variables.
import { parseArgs } from 'node:util';
import { DEFAULT_MAX_CONCURRENT_PATCHES, DEFAULT_MAX_PATCHES_PER_SECOND } from './controller/pace.ts';
import type { DebugPairsAccess } from './server/ops-routes.ts';
import { DEFAULT_MAX_REVIEW_BYTES_IN_FLIGHT, DEFAULT_MAX_REVIEWS_IN_FLIGHT, type ReviewBudgetOptions } from './server/review-budget.ts';
import { readerBinding, type ReaderBinding } from './core/hubs.ts';
import { parseDuration } from './util/duration.ts';
import { errorMessage } from './util/errors.ts';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const ENV_PREFIX = 'SHORTCUT_WEBHOOK_';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
export type OutputFormat = 'yaml' | 'json' | 'patch';
const DEBUG_PAIRS_ACCESS: readonly DebugPairsAccess[] = ['any', 'localhost', 'off'];
const OUTPUT_FORMATS: readonly OutputFormat[] = ['yaml', 'json', 'patch'];

interface FlagSpec {
  readonly type: 'string' | 'boolean';
  /** The one-letter form, as kubectl has them: -o, -f, -n, -l, -h. */
  readonly short?: string;
  readonly multiple?: boolean;
  readonly value?: string;
  readonly help: string;
  /**
   * Not read from the environment: a per-invocation choice (explain's slice, version's format) whose variable would
   * also reach every other command, where SHORTCUT_WEBHOOK_OUTPUT=patch, meant for rewrite, is no format of theirs.
   */
  readonly commandLineOnly?: boolean;
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
  hub: { type: 'string', multiple: true, value: 'PATH', help: 'the hub\'s Liqo IPs and Configurations (and any FCCs) in these files or folders, for the stock-Liqo path in file mode; ID=PATH binds them to the hub with that cluster ID (repeatable)' },
  'shortcuts-kubeconfig': { type: 'string', multiple: true, value: 'FILE', help: 'watch ForeignClusterConnections on this cluster instead (e.g. the hub), and the hub\'s Liqo IPs and Configurations there; ID=FILE binds this hub reader to the hub with that cluster ID (repeatable: one per hub)' },
  'hub-namespace': { type: 'string', multiple: true, value: 'NS', help: 'the hub readers list and watch only in these namespaces, as a namespaced Role allows (repeatable; default: all)' },
  'shortcuts-namespace': { type: 'string', value: 'NS', help: 'watch ForeignClusterConnections in this namespace only (default: all)' },
  'no-controller': { type: 'boolean', help: 'do not reconcile stored slices when the shortcuts change' },
  'restore-only': { type: 'boolean', help: 'the undo before an uninstall: read the view as usual but move nothing, so every address whose record the view vouches for goes back to its hub address' },
  'resync-interval': { type: 'string', value: 'DUR', help: 'periodic reconcile of stored slices, e.g. 30s, 10m, 1h; 0 turns it off (default 10m)' },
  'max-concurrent-patches': { type: 'string', value: 'N', help: `patches of stored slices the controller has in flight at once, 1 to 64 (default ${DEFAULT_MAX_CONCURRENT_PATCHES})` },
  'max-patches-per-second': { type: 'string', value: 'N', help: `the controller's cap on its requests to the API server per second, 1 to 10000 (default ${DEFAULT_MAX_PATCHES_PER_SECOND})` },
  'stale-view-after': { type: 'string', value: 'DUR', help: 'not ready once every read of a view source (the FCCs, the leaf\'s or the hub\'s Liqo objects, or the --shortcuts files) has failed for this long, so reviews go to replicas with a live view; 0 turns it off (default 60s)' },
  'connection-stale-after': { type: 'string', value: 'DUR', help: 'a Liqo Connection that reads Connected but whose gateway has not rewritten its status (the latency heartbeat) for this long counts as down (connection-stale); 0 turns it off (default 30s)' },
  'watch-timeout': { type: 'string', value: 'DUR', help: 'each watch of a view source is ended by the API server after this long and opened again where it stood: the bound on noticing a right revoked while it is open (default 60s, plus up to 15s at random)' },
  'max-reviews-in-flight': { type: 'string', value: 'N', help: `requests the webhook port receives, parses and reviews at once, 1 to 10000; past it a request is answered 503 at once, and the API server goes on without the webhook (default ${DEFAULT_MAX_REVIEWS_IN_FLIGHT})` },
  'max-review-bytes-in-flight': { type: 'string', value: 'SIZE', help: `the heap the requests in flight may cost at once, estimated from each body (6 bytes a byte before it is read, then 5 a byte and 64 an object or array), e.g. 84Mi; past it a request is answered 503 at once (default ${mebibytes(DEFAULT_MAX_REVIEW_BYTES_IN_FLIGHT)})` },
  'debug-pairs': { type: 'string', value: 'WHO', help: `who may read /debug/pairs on the ops port: ${DEBUG_PAIRS_ACCESS.join(', ')} (localhost: a process in the pod or kubectl port-forward; /healthz, /readyz and /metrics stay open to all) (default any)` },
  'log-level': { type: 'string', value: 'L', help: `one of ${LOG_LEVELS.join(', ')} (default info)` },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies FlagTable;

function mebibytes(bytes: number): string {
  return `${bytes / 1048576}Mi`;
}

export const REWRITE_FLAGS = {
  shortcuts: { type: 'string', multiple: true, value: 'PATH', help: 'the leaf\'s side: ForeignClusterConnections (FCC path) and/or the leaf\'s Liqo Connections and Configurations (all the stock-Liqo path needs, with --hub): a file or folder of YAML/JSON (repeatable, required)' },
  hub: { type: 'string', multiple: true, value: 'PATH', help: 'the hub\'s Liqo IPs and Configurations (and any FCCs): a file or folder of YAML/JSON, for the stock-Liqo path; ID=PATH binds them to the hub with that cluster ID (repeatable)' },
  'cluster-id': { type: 'string', value: 'ID', help: 'local cluster ID for slices without offloading.liqo.io/destination' },
  filename: { type: 'string', short: 'f', multiple: true, value: 'PATH', help: 'input: a file, a folder (its .yaml, .yml and .json files in name order) or - for standard input (repeatable, read in order; also as arguments)' },
  output: { type: 'string', short: 'o', value: 'FORMAT', help: 'yaml (default), json (one document per line) or patch (the JSON Patch, one line per document; stderr names each line\'s object); with --explain, json' },
  explain: { type: 'boolean', help: 'print, per address, input, output, the FCC or hub IP that decided it and reason, and each FCC\'s state (a table, or JSON with -o json)' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies FlagTable;

export const VERSION_FLAGS = {
  output: { type: 'string', short: 'o', value: 'FORMAT', commandLineOnly: true, help: 'text (default) or json' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies FlagTable;

/** The flags the live commands (explain, status) share with serve: where the leaf and the shortcuts are read. */
const LIVE_VIEW_FLAGS = {
  kubeconfig: { type: 'string', value: 'FILE', help: 'kubeconfig of the leaf (default: KUBECONFIG, then in-cluster)' },
  'shortcuts-kubeconfig': { type: 'string', multiple: true, value: 'FILE', help: 'read ForeignClusterConnections, and the hub\'s Liqo IPs and Configurations, on this cluster (the hub) instead of the leaf, as serve does; ID=FILE binds this hub reader to the hub with that cluster ID (repeatable: one per hub)' },
  'hub-namespace': { type: 'string', multiple: true, value: 'NS', help: 'the hub readers read only in these namespaces, as serve does (repeatable)' },
  'shortcuts-namespace': { type: 'string', value: 'NS', help: 'read ForeignClusterConnections in this namespace only (default: all)' },
  'cluster-id': { type: 'string', value: 'ID', help: 'local cluster ID for slices without offloading.liqo.io/destination' },
  'connection-stale-after': { type: 'string', value: 'DUR', help: 'a Liqo Connection that reads Connected but whose latency heartbeat is older than twice this counts as down (connection-stale), as serve judges it at start; 0 turns it off (default 30s)' },
} as const satisfies FlagTable;

export const EXPLAIN_FLAGS = {
  namespace: { type: 'string', short: 'n', value: 'NS', commandLineOnly: true, help: 'namespace of the slices (default: the kubeconfig context\'s, else default)' },
  selector: { type: 'string', short: 'l', value: 'SELECTOR', commandLineOnly: true, help: 'explain every slice matching this label selector instead of one NAME' },
  shadows: { type: 'boolean', commandLineOnly: true, help: 'explain ShadowEndpointSlices (Liqo\'s own direct connections) instead of EndpointSlices' },
  ...LIVE_VIEW_FLAGS,
  output: { type: 'string', short: 'o', value: 'FORMAT', commandLineOnly: true, help: 'text (default: the tables of rewrite --explain) or json' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies FlagTable;

export const STATUS_FLAGS = {
  namespace: { type: 'string', short: 'n', value: 'NS', commandLineOnly: true, help: 'one line per Service of this namespace (with SERVICE: that Service only)' },
  'all-namespaces': { type: 'boolean', short: 'A', commandLineOnly: true, help: 'one line per Service of every namespace' },
  addresses: { type: 'boolean', commandLineOnly: true, help: 'with -n or -A: also one line per address, as explain decides it' },
  ...LIVE_VIEW_FLAGS,
  output: { type: 'string', short: 'o', value: 'FORMAT', commandLineOnly: true, help: 'text (default: a table) or json' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
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

  /**
   * Hub readers, `[ID=]FILE` each (core/hubs.ts readerBinding): one per hub, at most one unbound. A path whose text
   * before `=` reads as a cluster ID is written `=PATH` or `./PATH`.
   */
  readers(flag: string): ReaderBinding[] {
    const readers = this.list(flag).map(readerBinding);
    const seen = new Set<string | undefined>();
    for (const { hub, value } of readers) {
      if (value.trim() === '') throw new UsageError(`${this.name(flag)} ${hub ?? ''}=: the reader of ${hub ?? 'the hub'} needs a file`);
      if (seen.has(hub)) {
        throw new UsageError(hub === undefined
          ? `${this.name(flag)} is given twice without a cluster ID: bind each hub's reader to its hub, ID=FILE`
          : `${this.name(flag)} binds two readers to ${hub}: one per hub`);
      }
      seen.add(hub);
    }
    return readers;
  }

  /** `--hub` as given, each checked: `[ID=]PATH`, several paths for one hub allowed. */
  hubFiles(flag: string): string[] {
    const given = this.list(flag);
    for (const text of given) {
      const { hub, value } = readerBinding(text);
      if (value.trim() === '') throw new UsageError(`${this.name(flag)} ${text}: the files of ${hub ?? 'the hub'} need a path`);
    }
    return given;
  }

  /** --hub-namespace: only where a hub reader reads through the API (files name their own objects). */
  hubNamespaces(readers: boolean): string[] {
    const namespaces = this.list('hub-namespace');
    if (namespaces.length > 0 && !readers) {
      throw new UsageError(`${this.name('hub-namespace')} narrows what the hub readers read through the hub's API: it goes with --shortcuts-kubeconfig`);
    }
    return namespaces;
  }

  flag(flag: string): boolean {
    return this.sources.values.get(flag) === true;
  }

  /** A whole number within [min, max]. */
  count(flag: string, fallback: number, min: number, max: number): number {
    const raw = this.text(flag);
    if (raw === undefined) return fallback;
    if (!/^\d{1,6}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new UsageError(`${this.name(flag)} ${raw}: expected a whole number from ${min} to ${max}`);
    return Number(raw);
  }

  port(flag: string, fallback: number): number {
    const raw = this.text(flag);
    if (raw === undefined) return fallback;
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) throw new UsageError(`${this.name(flag)} ${raw}: expected a port number from 0 to 65535`);
    return Number(raw);
  }

  /** Bytes, as a whole number or a Kubernetes quantity in Ki, Mi or Gi, within [min, max]. */
  bytes(flag: string, fallback: number, min: number, max: number): number {
    const raw = this.text(flag);
    if (raw === undefined) return fallback;
    const match = /^(\d{1,10})(Ki|Mi|Gi)?$/.exec(raw);
    const bytes = match === null ? NaN : Number(match[1]) * (match[2] === undefined ? 1 : 1024 ** (['Ki', 'Mi', 'Gi'].indexOf(match[2]) + 1));
    if (!(bytes >= min && bytes <= max)) throw new UsageError(`${this.name(flag)} ${raw}: expected a size from ${mebibytes(min)} to ${mebibytes(max)}, such as 84Mi`);
    return bytes;
  }

  oneOf<T extends string>(flag: string, allowed: readonly T[], fallback: T): T {
    const raw = this.text(flag);
    if (raw === undefined) return fallback;
    const found = allowed.find((candidate) => candidate === raw);
    if (found === undefined) throw new UsageError(`${this.name(flag)} ${raw}: expected one of ${allowed.join(', ')}`);
    return found;
  }
}

/** Levenshtein distance, for "did you mean": names are short, so the quadratic table is nothing. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known name closest to `name`, when it is close enough to be a likely typo. */
export function nearest(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/**
 * node:util's parseArgs errors in words of this command line: its texts (`place it at the end of the command after
 * '--'`, `Option '-o, --output <value>' argument missing`) speak of parseArgs, not of shortcut-webhook.
 */
function argumentError(error: unknown, flags: FlagTable): UsageError {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  const message = errorMessage(error);
  const option = /'(-[^' ]*)/.exec(message)?.[1] ?? '';
  const long = (spec: string): string => {
    const short = /^-([^-])$/.exec(spec)?.[1];
    const found = short === undefined ? undefined : Object.entries(flags).find(([, flag]) => flag.short === short)?.[0];
    return found === undefined ? spec : `--${found}`;
  };
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const guess = option.startsWith('--') ? nearest(option.slice(2), Object.keys(flags)) : undefined;
      return new UsageError(`unknown flag ${option}${guess === undefined ? '' : ` (did you mean --${guess}?)`}`);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      // A flag's name is always quoted first: '-o, --output <value>' or '--explain'.
      const named = /'(?:-., )?(--[^' ]+)/.exec(message)?.[1] ?? long(option);
      const spec = flags[named.replace(/^--/, '')];
      return new UsageError(spec?.type === 'boolean' ? `${named} takes no value` : `${named} needs a value${spec?.value ? ` (${spec.value})` : ''}`);
    }
    default:
      return new UsageError(message.split('. ')[0] ?? message);
  }
}

/** parseArgs, then every flag not given is read from its environment variable. --help wins over bad variables. */
function readFlags(flags: FlagTable, argv: readonly string[], env: NodeJS.ProcessEnv): FlagValues {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: flags, strict: true, allowPositionals: true });
  } catch (error) {
    throw argumentError(error, flags);
  }
  const values = new Map<string, Value>();
  for (const [flag, value] of Object.entries(parsed.values)) if (value !== undefined) values.set(flag, value);
  if (values.get('help') === true) return new FlagValues({ values, fromEnv: new Set(), positionals: parsed.positionals, help: true });
  const fromEnv = new Set<string>();
  for (const [flag, spec] of Object.entries(flags)) {
    if (values.has(flag) || flag === 'help' || spec.commandLineOnly === true) continue;
    const raw = env[envName(flag)];
    if (raw === undefined || raw === '' || isServiceLink(raw)) continue; // a service link: environmentWarnings says so
    fromEnv.add(flag);
    if (spec.type === 'boolean') {
      if (!/^(1|0|true|false|yes|no)$/i.test(raw)) throw new UsageError(`${envName(flag)}=${raw}: expected true, false, yes, no, 1 or 0`);
      values.set(flag, /^(1|true|yes)$/i.test(raw));
    } else {
      values.set(flag, spec.multiple ? raw.split(',').map((part) => part.trim()).filter((part) => part !== '') : raw);
    }
  }
  return new FlagValues({ values, fromEnv, positionals: parsed.positionals, help: false });
}

/** `tcp://10.96.0.12:443`: what Kubernetes' service links put in <SERVICE>_PORT, never a value of ours. */
function isServiceLink(value: string): boolean {
  return /^(tcp|udp|sctp):\/\//i.test(value);
}

/**
 * Variables of our prefix that are not ours and not worth a warning: the service links Kubernetes injects for a
 * Service named shortcut-webhook (SHORTCUT_WEBHOOK_SERVICE_HOST, SHORTCUT_WEBHOOK_PORT_443_TCP_ADDR, ...), and the
 * test suite's control-plane cache folder.
 */
const FOREIGN_VARIABLES = /^SHORTCUT_WEBHOOK_(SERVICE_HOST|SERVICE_PORT(_\w+)?|PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?|CONTROLPLANE_DIR)$/;

/**
 * Warnings about the environment, given the flag tables of every command (a variable of another command is not a
 * typo): a SHORTCUT_WEBHOOK_* variable nothing reads, with the nearest known name, and a service link where a flag's
 * variable was expected, which is ignored.
 */
export function environmentWarnings(env: NodeJS.ProcessEnv, tables: readonly FlagTable[]): string[] {
  const known = new Set(tables.flatMap((table) => Object.entries(table)
    .filter(([flag, spec]) => flag !== 'help' && spec.commandLineOnly !== true).map(([flag]) => envName(flag))));
  const warnings: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || value === undefined) continue;
    if (known.has(name)) {
      if (isServiceLink(value)) {
        warnings.push(`ignored ${name}=${value}: that is a Kubernetes service link (a Service named shortcut-webhook in the pod's namespace), not a setting; set enableServiceLinks: false in the pod spec, as the shipped manifests and chart do`);
      }
      continue;
    }
    if (FOREIGN_VARIABLES.test(name)) continue;
    const guess = nearest(name, known);
    warnings.push(`ignored ${name}: no such setting${guess === undefined ? '' : ` (did you mean ${guess}?)`}`);
  }
  return warnings;
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
  /**
   * --hub as given, `[ID=]PATH`: the hubs' IPAM objects in files (file mode); in cluster mode the hubs are read
   * through --shortcuts-kubeconfig.
   */
  readonly hub: readonly string[];
  /** --kubeconfig only; cluster mode falls back to KUBECONFIG, file mode does not (see main.ts). */
  readonly kubeconfig: string | undefined;
  /** One hub reader per hub, bound to its cluster ID or unbound (at most one); empty: FCCs read on the leaf. */
  readonly shortcutsKubeconfigs: readonly ReaderBinding[];
  readonly shortcutsNamespace: string | undefined;
  /** --hub-namespace: where the hub readers list and watch; empty: every namespace. */
  readonly hubNamespaces: readonly string[];
  readonly controller: boolean;
  /** Move nothing, restore what the view vouches for: the undo (view/shortcut-view.ts, SnapshotStore). */
  readonly restoreOnly: boolean;
  readonly resyncIntervalMs: number;
  readonly maxConcurrentPatches: number;
  readonly maxPatchesPerSecond: number;
  /** 0: never; see STALE_VIEW_AFTER_MS for the default and why. */
  readonly staleViewAfterMs: number;
  /** Whole seconds; undefined: the list-watch's default, spread at random across replicas. */
  readonly watchTimeoutSeconds: number | undefined;
  /** The bound on requests in flight on the webhook port, in number and in estimated heap. */
  readonly reviewBudget: ReviewBudgetOptions;
  readonly debugPairs: DebugPairsAccess;
  /** 0: off; see CONNECTION_STALE_AFTER_MS for the default and why. */
  readonly connectionStaleAfterMs: number;
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
 * timeout plus 30 s), and the webhook's own 5 s timeout plays no part, a stale replica answers fast. In file mode the
 * same bound holds for the files: a broken edit or a path gone that is not fixed in time is a view that no longer
 * follows its source too.
 */
export const STALE_VIEW_AFTER_MS = 60_000;


/**
 * How long a Connected Liqo Connection with a heartbeat may go without being seen rewritten before it counts as down
 * (`connection-stale`). Liqo's gateway rewrites `status.latency` on the first answered ping (every 2 s) once the last
 * write is older than `ping-update-status-interval` (10 s), against a timestamp stored to the second: a write every
 * 10 to 12 s. 30 s leaves 18 s over the slowest regular cadence: one write lost (the next comes 2 s later, at the next
 * pong) or a watch event late by up to 18 s on a loaded API server does not flap the path, while a gateway that died
 * is left within half a minute, against the 300 s a lost node keeps its pods by default.
 */
export const CONNECTION_STALE_AFTER_MS = 30_000;

/** --connection-stale-after, read alike by serve and the live commands. */
function connectionStaleAfter(values: FlagValues): number {
  const raw = values.text('connection-stale-after');
  const ms = raw === undefined ? CONNECTION_STALE_AFTER_MS : parseDuration(raw);
  if (ms === undefined || (ms > 0 && ms < 1000)) {
    throw new UsageError(`${values.name('connection-stale-after')} ${raw}: expected a duration of at least 1s such as 30s or 1m, or 0 for off`);
  }
  return ms;
}

export type Parsed<T> = { readonly help: true } | { readonly help: false; readonly config: T };

export function parseServeArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed<ServeConfig> {
  const values = readFlags(SERVE_FLAGS, argv, env);
  if (values.help) return { help: true };
  if (values.positionals.length > 0) throw new UsageError(`takes no arguments, got ${values.positionals.join(' ')}`);
  const tlsCert = values.text('tls-cert');
  const tlsKey = values.text('tls-key');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both, or neither for a development pair');
  }
  let shortcuts = values.list('shortcuts');
  let shortcutsKubeconfigs = values.readers('shortcuts-kubeconfig');
  if (shortcuts.length > 0 && shortcutsKubeconfigs.length > 0) {
    // Two sources of shortcuts: a flag beats a variable, and two of a kind are a mistake to say out loud.
    const shortcutsFromEnv = values.isFromEnv('shortcuts');
    if (shortcutsFromEnv === values.isFromEnv('shortcuts-kubeconfig')) {
      throw new UsageError(`${values.name('shortcuts')} and ${values.name('shortcuts-kubeconfig')} are two sources of shortcuts: give one`);
    }
    if (shortcutsFromEnv) shortcuts = [];
    else shortcutsKubeconfigs = [];
  }
  const hub = values.hubFiles('hub');
  if (hub.length > 0 && shortcutsKubeconfigs.length > 0) {
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
  const watchTimeoutRaw = values.text('watch-timeout');
  const watchTimeoutMs = watchTimeoutRaw === undefined ? undefined : parseDuration(watchTimeoutRaw);
  if (watchTimeoutRaw !== undefined && (watchTimeoutMs === undefined || watchTimeoutMs < 1000 || watchTimeoutMs % 1000 !== 0)) {
    throw new UsageError(`${values.name('watch-timeout')} ${watchTimeoutRaw}: expected whole seconds, at least 1s, such as 30s or 2m`);
  }
  const connectionStaleAfterMs = connectionStaleAfter(values);
  const port = values.port('port', 9443);
  const opsPort = values.port('ops-port', 8080);
  if (port === opsPort && port !== 0) {
    throw new UsageError(`${values.name('port')} and ${values.name('ops-port')} are both ${port}: the webhook (HTTPS) and the ops endpoints (HTTP) need a port each`);
  }
  const config: ServeConfig = {
    host: values.text('host'),
    port,
    opsPort,
    tls: tlsCert !== undefined && tlsKey !== undefined ? { cert: tlsCert, key: tlsKey } : undefined,
    clusterId: values.text('cluster-id'),
    source: shortcuts.length > 0 || hub.length > 0 ? 'files' : 'cluster',
    shortcuts,
    hub,
    kubeconfig: values.text('kubeconfig'),
    shortcutsKubeconfigs,
    shortcutsNamespace: values.text('shortcuts-namespace'),
    hubNamespaces: values.hubNamespaces(shortcutsKubeconfigs.length > 0),
    controller: !values.flag('no-controller'),
    restoreOnly: values.flag('restore-only'),
    resyncIntervalMs,
    maxConcurrentPatches: values.count('max-concurrent-patches', DEFAULT_MAX_CONCURRENT_PATCHES, 1, 64),
    maxPatchesPerSecond: values.count('max-patches-per-second', DEFAULT_MAX_PATCHES_PER_SECOND, 1, 10_000),
    staleViewAfterMs,
    watchTimeoutSeconds: watchTimeoutMs === undefined ? undefined : watchTimeoutMs / 1000,
    reviewBudget: Object.freeze({
      maxReviews: values.count('max-reviews-in-flight', DEFAULT_MAX_REVIEWS_IN_FLIGHT, 1, 10_000),
      maxBytes: values.bytes('max-review-bytes-in-flight', DEFAULT_MAX_REVIEW_BYTES_IN_FLIGHT, 1024 * 1024, 64 * 1024 ** 3),
    }),
    debugPairs: values.oneOf('debug-pairs', DEBUG_PAIRS_ACCESS, 'any'),
    connectionStaleAfterMs,
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
  /** Files, folders or `-` (standard input), in command-line order; `['-']` when none was given. */
  readonly inputs: readonly string[];
  /** No input was named: standard input is read because nothing else was asked for. */
  readonly implicitStdin: boolean;
}

/** -f/--filename values and arguments, in the order the command line gives them (parseArgs keeps them apart). */
function orderedInputs(argv: readonly string[]): string[] {
  const { tokens } = parseArgs({ args: [...argv], options: REWRITE_FLAGS, strict: false, allowPositionals: true, tokens: true });
  const inputs: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') inputs.push(token.value);
    else if (token.kind === 'option' && token.name === 'filename' && token.value !== undefined) inputs.push(token.value);
  }
  return inputs;
}

export function parseRewriteArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed<RewriteConfig> {
  const values = readFlags(REWRITE_FLAGS, argv, env);
  if (values.help) return { help: true };
  const shortcuts = values.list('shortcuts');
  if (shortcuts.length === 0) {
    throw new UsageError(values.list('hub').length > 0
      // The stock-Liqo path has no FCCs: what it needs of the leaf are its Connections and Configurations.
      ? 'needs at least one --shortcuts PATH besides --hub: the leaf\'s Liqo Connections and Configurations (kubectl --context leaf get connections.networking.liqo.io,configurations.networking.liqo.io -A -o yaml), which tell the direct networks the hub\'s addresses are moved into'
      : 'needs at least one --shortcuts PATH: the ForeignClusterConnections to rewrite against (FCC path), or the leaf\'s Liqo Connections and Configurations with the hub\'s objects in --hub (stock-Liqo path)');
  }
  const explain = values.flag('explain');
  const output = values.oneOf('output', OUTPUT_FORMATS, 'yaml');
  if (explain && values.text('output') !== undefined && output !== 'json') {
    throw new UsageError(`${values.name('output')} ${output} does not go with --explain: it prints a table, or JSON with -o json`);
  }
  const given = values.isFromEnv('filename') ? values.list('filename').concat(values.positionals) : orderedInputs(argv);
  if (given.filter((input) => input === '-').length > 1) throw new UsageError('standard input (-) can be read only once');
  const config: RewriteConfig = {
    shortcuts,
    hub: values.hubFiles('hub'),
    clusterId: values.text('cluster-id'),
    output,
    explain,
    inputs: given.length > 0 ? given : ['-'],
    implicitStdin: given.length === 0,
  };
  return { help: false, config: Object.freeze(config) };
}

export type VersionFormat = 'text' | 'json';

export function parseVersionArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed<{ readonly output: VersionFormat }> {
  const values = readFlags(VERSION_FLAGS, argv, env);
  if (values.help) return { help: true };
  if (values.positionals.length > 0) throw new UsageError(`takes no arguments, got ${values.positionals.join(' ')}`);
  return { help: false, config: Object.freeze({ output: values.oneOf('output', ['text', 'json'] as const, 'text') }) };
}

/** What the live commands (explain, status) read the cluster with: serve's kubeconfigs and view, and their output. */
export interface LiveViewConfig {
  readonly kubeconfig: string | undefined;
  readonly shortcutsKubeconfigs: readonly ReaderBinding[];
  readonly shortcutsNamespace: string | undefined;
  readonly hubNamespaces: readonly string[];
  readonly clusterId: string | undefined;
  readonly connectionStaleAfterMs: number;
  readonly output: VersionFormat;
}

function liveViewConfig(values: FlagValues): LiveViewConfig {
  const shortcutsKubeconfigs = values.readers('shortcuts-kubeconfig');
  return {
    kubeconfig: values.text('kubeconfig'),
    shortcutsKubeconfigs,
    shortcutsNamespace: values.text('shortcuts-namespace'),
    hubNamespaces: values.hubNamespaces(shortcutsKubeconfigs.length > 0),
    clusterId: values.text('cluster-id'),
    connectionStaleAfterMs: connectionStaleAfter(values),
    output: values.oneOf('output', ['text', 'json'] as const, 'text'),
  };
}

export interface ExplainConfig extends LiveViewConfig {
  readonly namespace: string | undefined;
  /** One slice by name, or every slice a label selector matches. */
  readonly target: { readonly kind: 'name'; readonly name: string } | { readonly kind: 'selector'; readonly selector: string };
  /** Which stored objects: reflected EndpointSlices, or the ShadowEndpointSlices the hub writes (`--shadows`). */
  readonly resource: 'endpointslices' | 'shadowendpointslices';
}

export function parseExplainArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed<ExplainConfig> {
  const values = readFlags(EXPLAIN_FLAGS, argv, env);
  if (values.help) return { help: true };
  const selector = values.text('selector');
  const [name, ...more] = values.positionals;
  if (more.length > 0) throw new UsageError(`takes one slice NAME, got ${values.positionals.join(' ')}`);
  if ((name === undefined) === (selector === undefined)) throw new UsageError('give one slice NAME or a label selector with -l, not both or neither');
  const config: ExplainConfig = {
    namespace: values.text('namespace'),
    target: name !== undefined ? { kind: 'name', name } : { kind: 'selector', selector: selector ?? '' },
    resource: values.flag('shadows') ? 'shadowendpointslices' : 'endpointslices',
    ...liveViewConfig(values),
  };
  return { help: false, config: Object.freeze(config) };
}

export interface StatusConfig extends LiveViewConfig {
  /** One line per peer; or per Service of one namespace (one Service by name), or of every namespace. */
  readonly scope:
    | { readonly kind: 'peers' }
    | { readonly kind: 'services'; readonly namespace: string | undefined; readonly service: string | undefined };
  readonly addresses: boolean;
}

export function parseStatusArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Parsed<StatusConfig> {
  const values = readFlags(STATUS_FLAGS, argv, env);
  if (values.help) return { help: true };
  const namespace = values.text('namespace');
  const all = values.flag('all-namespaces');
  const [service, ...more] = values.positionals;
  if (more.length > 0) throw new UsageError(`takes at most one SERVICE, got ${values.positionals.join(' ')}`);
  if (all && namespace !== undefined) throw new UsageError('give -n NS or -A, not both');
  if (service !== undefined && namespace === undefined) throw new UsageError(`a SERVICE needs its namespace: -n NS ${service}`);
  const services = all || namespace !== undefined;
  if (values.flag('addresses') && !services) throw new UsageError('--addresses goes with -n NS [SERVICE] or -A: one line per address of those Services');
  const config: StatusConfig = {
    scope: services ? { kind: 'services', namespace, service } : { kind: 'peers' },
    addresses: values.flag('addresses'),
    ...liveViewConfig(values),
  };
  return { help: false, config: Object.freeze(config) };
}

export function helpText(usage: string, flags: FlagTable): string {
  const rows = Object.entries(flags).map(([flag, spec]: [string, FlagSpec]) => {
    const left = `${spec.short ? `-${spec.short}, ` : '    '}--${flag}${spec.value ? ` ${spec.value}` : ''}`;
    const env = flag === 'help' || spec.commandLineOnly === true ? '' : ` [${envName(flag)}]`;
    return `  ${left.padEnd(32)} ${spec.help}${env}`;
  });
  return `${usage}\n\nFlags (those with a variable shown also read it from the environment; flags win):\n${rows.join('\n')}\n`;
}
