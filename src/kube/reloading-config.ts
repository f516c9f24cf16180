// Credentials that follow their files. A kubeconfig in a Secret volume is replaced by a symlink swap when an operator
// rotates it, bound tokens expire (an hour by default for TokenRequest), and a recreated ServiceAccount revokes the
// old token: a KubeConfig read once at start-up ends in `401 Unauthorized` on every request, forever.
//
// A ReloadingKubeConfig is a KubeConfig (it is passed wherever one is) whose contents are replaced in place when its
// file changes (watched and polled, see watch-paths.ts) or when the API answers 401. client-node reads the current
// user and cluster on every request, so every API client made from it (makeApiClient, below, also follows a change of
// server) and every Watch opened afterwards uses the new credentials; a ListWatch restarts its open watch on a reload
// (list-watch.ts) so that a stream opened with the old ones does not carry on until the next server restart.
// A file that does not parse keeps the last good contents.
//
// Token files are re-read as client-go does: at most a minute old (its cachingTokenSource), and at once after a 401.
// client-node reads `token-file` once at load and ignores `tokenFile`, kubectl's key, so both become a user of the
// token-file authenticator here; so does the in-cluster service-account token.
import { existsSync, readFileSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import {
  createConfiguration, KubeConfig, ServerConfiguration, type ApiConstructor, type ApiType, type RequestContext, type ResponseContext, type User,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { isObject, stringField } from '../core/json.ts';
import type { Logger } from '../log.ts';
import { errorMessage } from '../util/errors.ts';
import { ProblemLatch } from '../util/problem-latch.ts';
import { SerialTask } from '../util/serial-task.ts';
import { watchPaths, type PathWatch } from '../util/watch-paths.ts';
import { KeepAlivePool } from './keep-alive.ts';
import { identifyFetch, identifyRequest } from './identity.ts';
import { IN_CLUSTER_ORIGIN, inCluster } from './in-cluster.ts';

/** The name of our token-file auth provider; client-node's own (`tokenFile` in its config) reads once a minute with no way to re-read sooner. */
export const TOKEN_FILE_PROVIDER = 'shortcut-webhook-token-file';
/** client-go's cachingTokenSource period: a token file is read again once its last read is this old. */
export const TOKEN_FILE_MAX_AGE_MS = 60_000;

type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/** Bearer tokens from files, each read again once it is a minute old or after the API refused it. */
export class TokenFiles implements Authenticator {
  private readonly cache = new Map<string, { token: string; readAt: number }>();

  constructor(private readonly now: () => number = Date.now, private readonly maxAgeMs = TOKEN_FILE_MAX_AGE_MS) {}

  isAuthProvider(user: User): boolean {
    return user.authProvider?.name === TOKEN_FILE_PROVIDER;
  }

  async applyAuthentication(user: User, opts: { headers?: Record<string, unknown> }): Promise<void> {
    const config: unknown = user.authProvider?.config;
    const path = isObject(config) ? stringField(config, 'path') : undefined;
    if (path === undefined) return;
    const token = this.token(path) ?? (isObject(config) ? stringField(config, 'token') : undefined);
    if (token === undefined) return;
    opts.headers ??= {};
    opts.headers.Authorization = `Bearer ${token}`;
  }

  /** The file's token; on a failed read the last one read (client-go keeps it too), else undefined. */
  token(path: string): string | undefined {
    const cached = this.cache.get(path);
    if (cached !== undefined && this.now() - cached.readAt < this.maxAgeMs) return cached.token;
    try {
      const token = readFileSync(path, 'utf8').trim();
      this.cache.set(path, { token, readAt: this.now() });
      return token;
    } catch {
      return cached?.token;
    }
  }

  /** The API refused a token: the next request reads every file again. */
  invalidate(): void {
    for (const entry of this.cache.values()) entry.readAt = Number.NEGATIVE_INFINITY;
  }
}

/** A user whose token lives in a file, as our token-file provider reads it; the inline token is the fallback. */
function tokenFileUser(user: User, path: string): User {
  const { token, ...rest } = user;
  return { ...rest, authProvider: { name: TOKEN_FILE_PROVIDER, config: { path, ...(token ? { token } : {}) } } };
}

/** `tokenFile` (kubectl) or `token-file` of each user of a kubeconfig file, by user name, made absolute. */
function tokenFilesOf(file: string, text: string): Map<string, string> {
  const paths = new Map<string, string>();
  const document: unknown = parse(text);
  const users = isObject(document) && Array.isArray(document.users) ? document.users : [];
  for (const entry of users) {
    if (!isObject(entry) || !isObject(entry.user)) continue;
    const name = stringField(entry, 'name');
    const path = stringField(entry.user, 'tokenFile') ?? stringField(entry.user, 'token-file');
    if (name && path) paths.set(name, isAbsolute(path) ? path : join(dirname(file), path));
  }
  return paths;
}

function loadFile(file: string): KubeConfig {
  const text = readFileSync(file, 'utf8');
  const config = new KubeConfig();
  config.loadFromString(text);
  config.makePathsAbsolute(dirname(file));
  const tokenFiles = tokenFilesOf(file, text);
  if (tokenFiles.size > 0) {
    config.users = config.users.map((user) => {
      const path = tokenFiles.get(user.name);
      return path === undefined ? user : tokenFileUser(user, path);
    });
  }
  return config;
}

/**
 * Reads a kubeconfig file (or a KUBECONFIG-style list of them, merged as kubectl does: the first file's context wins,
 * missing files are skipped), or the pod's service account; undefined when neither is there. Throws when a file does
 * not parse.
 */
export function readKubeConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): KubeConfig | undefined {
  if (file !== undefined) {
    const files = kubeconfigFiles(file);
    const present = files.length > 1 ? files.filter((path) => existsSync(path)) : files;
    const [first, ...rest] = present;
    if (first === undefined) throw new Error(`none of the kubeconfig files exists: ${file}`);
    const config = loadFile(first);
    for (const path of rest) config.mergeConfig(loadFile(path), true);
    return config;
  }
  if (!inCluster(env)) return undefined;
  const config = new KubeConfig();
  config.loadFromCluster();
  // client-node's in-cluster user reads the token through its own tokenFile provider: ours instead, re-read on a 401.
  config.users = config.users.map((user) => {
    const config: unknown = user.authProvider?.config;
    const path = isObject(config) ? stringField(config, 'tokenFile') : undefined;
    return path === undefined ? user : tokenFileUser(user, path);
  });
  return config;
}

/** The files a `--kubeconfig` value names (a KUBECONFIG-style list). */
export function kubeconfigFiles(file: string): string[] {
  return file.split(delimiter).filter((path) => path !== '');
}

/** Everything a request is made from (exportConfig leaves some fields out): equal means nothing to reload. */
function fingerprintOf(config: KubeConfig): string {
  return JSON.stringify([config.clusters, config.contexts, config.users, config.currentContext]);
}

/** What an operator reads in /debug/pairs about one set of credentials. */
export interface CredentialStatus {
  readonly origin: string;
  /** What `origin` is, for a page that must not show where the credentials are. */
  readonly kind: 'kubeconfig' | 'in-cluster';
  /** When the credentials in use were read (the start, or the last reload that changed them). */
  readonly loadedAt: string;
  readonly reloads: number;
  /** The last refusal (401: not authenticated; 403: not allowed) since the last accepted request, if any. */
  readonly refused: { readonly status: number; readonly at: string; readonly during: string } | null;
  /** The last re-read that failed (a file that does not parse), kept until one succeeds. */
  readonly reloadProblem: string | null;
}

export interface ReloadingKubeConfigOptions {
  /** Reads the current contents; throws when they cannot be read or parsed (the last good ones are kept). */
  readonly load: () => KubeConfig;
  /** Where the config comes from, for logs: a file, or `in-cluster service account`. */
  readonly origin: string;
  /** Files whose change means a re-read (their folders are watched: Secret volumes swap a symlink); none in a pod without a kubeconfig. */
  readonly files: readonly string[];
  readonly logger: Logger;
  /** How often the files are read even without a watch event (default 10 s). */
  readonly pollIntervalMs?: number;
  readonly now?: () => number;
  /** `shortcut-webhook/<version>`: sent on every request, with fieldManager on writes (identity.ts). */
  readonly userAgent?: string;
}

/** Called after new credentials were adopted; `reason` says what made us look. */
export type ReloadListener = (reason: string) => void;

export class ReloadingKubeConfig extends KubeConfig {
  private fingerprint: string;
  private loadedAt: number;
  private reloads = 0;
  private refusal: { status: number; at: number; during: string } | undefined;
  private reloadProblem: string | undefined;
  private watching: PathWatch | undefined;
  private reason = '';
  private readonly listeners = new Set<ReloadListener>();
  private readonly tokens: TokenFiles;
  private readonly now: () => number;
  private readonly reloadProblems = new ProblemLatch();
  private readonly refusals = new ProblemLatch();
  private readonly rereads = new SerialTask(() => this.reread());
  /** The API clients' connections, kept alive across requests (not the watches': each holds its own). */
  private readonly pool = new KeepAlivePool();

  /** Throws when the first read fails: without credentials there is nothing to start. */
  constructor(private readonly options: ReloadingKubeConfigOptions) {
    super();
    this.now = options.now ?? Date.now;
    this.tokens = new TokenFiles(this.now);
    this.addAuthenticator(this.tokens);
    const first = options.load();
    this.adopt(first);
    this.fingerprint = fingerprintOf(first);
    this.loadedAt = this.now();
  }

  get origin(): string {
    return this.options.origin;
  }

  /** What every request made with this config sends as User-Agent, for clients that do not go through client-node. */
  get userAgent(): string | undefined {
    return this.options.userAgent;
  }

  /** Watches the files (and polls them) until close(). */
  watch(): void {
    if (this.watching !== undefined || this.options.files.length === 0) return;
    this.watching = watchPaths(this.options.files.map((file) => dirname(file)), () => void this.reload('kubeconfig file changed'),
      this.options.pollIntervalMs ?? 10_000, { names: this.options.files.map((file) => basename(file)) });
  }

  close(): void {
    this.watching?.close();
    this.watching = undefined;
    this.pool.destroy();
  }

  onReload(listener: ReloadListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads the config again; resolves once a read that started after this call is done. Bursts become one read. */
  reload(reason: string): Promise<void> {
    this.reason = reason;
    return this.rereads.run();
  }

  /**
   * The API answered `status` to a request made with these credentials. 401: they are not (or no longer) valid, so
   * token files and the kubeconfig are read again at once. 403 is recorded for operators, nothing to re-read.
   */
  refused(status: 401 | 403, during: string): void {
    this.refusal = { status, at: this.now(), during };
    // By status alone: a list and the API client under it both report one refusal, said once for the whole outage.
    if (this.refusals.isNew(String(status))) {
      this.options.logger.warn({ origin: this.options.origin, status, during },
        status === 401 ? 'the API server refuses these credentials (401): reading them again' : 'the API server refuses this request (403): missing RBAC rights?');
    }
    if (status !== 401) return;
    this.tokens.invalidate();
    void this.reload('the API server answered 401');
  }

  /** A request with these credentials succeeded, so the refusal, if there was one, is over. */
  accepted(): void {
    if (this.refusal === undefined) return;
    this.refusal = undefined;
    if (this.refusals.clear()) this.options.logger.info({ origin: this.options.origin }, 'the API server accepts the credentials again');
  }

  status(): CredentialStatus {
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      origin: this.options.origin,
      kind: this.options.origin === IN_CLUSTER_ORIGIN ? 'in-cluster' : 'kubeconfig',
      loadedAt: iso(this.loadedAt),
      reloads: this.reloads,
      refused: this.refusal === undefined ? null : { status: this.refusal.status, at: iso(this.refusal.at), during: this.refusal.during },
      reloadProblem: this.reloadProblem ?? null,
    };
  }

  /**
   * An API client whose server is read from the current cluster at each request (a reload may move it), and which
   * tells this config whether its credentials were accepted.
   */
  /** Every request names the product (identity.ts): API clients through here, watches through applyToFetchOptions. */
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getAgent();
    if (fresh !== undefined) context.setAgent(this.pool.agentFor(fresh));
    if (this.options.userAgent !== undefined) identifyRequest(context, this.options.userAgent);
  }

  override async applyToFetchOptions(opts: Parameters<KubeConfig['applyToFetchOptions']>[0]): Promise<Awaited<ReturnType<KubeConfig['applyToFetchOptions']>>> {
    const init = await super.applyToFetchOptions(opts);
    return this.options.userAgent === undefined ? init : identifyFetch(init, this.options.userAgent);
  }

  override makeApiClient<T extends ApiType>(apiClientType: ApiConstructor<T>): T {
    const baseServer = {
      makeRequestContext: (endpoint: string, method: Parameters<ServerConfiguration<{}>['makeRequestContext']>[1]): RequestContext => {
        const cluster = this.getCurrentCluster();
        if (cluster === null) throw new Error(`no current cluster in the kubeconfig from ${this.options.origin}`);
        return new ServerConfiguration(cluster.server, {}).makeRequestContext(endpoint, method);
      },
    };
    const observe = {
      pre: async (context: RequestContext) => context,
      post: async (context: ResponseContext) => {
        const status = context.httpStatusCode;
        if (status === 401) this.refused(401, 'an API call');
        else if (status >= 200 && status < 300) this.accepted();
        return context;
      },
    };
    return new apiClientType(createConfiguration({ baseServer, authMethods: { default: this }, promiseMiddleware: [observe] }));
  }

  private async reread(): Promise<void> {
    const reason = this.reason;
    let next: KubeConfig;
    try {
      next = this.options.load();
    } catch (error) {
      const message = errorMessage(error);
      this.reloadProblem = message;
      if (this.reloadProblems.isNew(message)) {
        this.options.logger.warn({ origin: this.options.origin, err: message }, 'kubeconfig not reloaded, keeping the last good one');
      }
      return;
    }
    this.reloadProblem = undefined;
    this.reloadProblems.clear();
    const fingerprint = fingerprintOf(next);
    if (fingerprint === this.fingerprint) return;
    this.fingerprint = fingerprint;
    this.adopt(next);
    this.tokens.invalidate();
    this.reloads++;
    this.loadedAt = this.now();
    this.options.logger.info({ origin: this.options.origin, reason, user: this.getCurrentUser()?.name ?? null, server: this.getCurrentCluster()?.server ?? null },
      'credentials reloaded');
    for (const listener of this.listeners) listener(reason);
  }

  private adopt(source: KubeConfig): void {
    this.loadFromOptions({ clusters: source.clusters, contexts: source.contexts, users: source.users, currentContext: source.currentContext });
  }
}

/** The config of `--kubeconfig`/`--shortcuts-kubeconfig` (or the pod's service account), reloading; undefined when neither is there. */
export function reloadingKubeConfig(file: string | undefined, logger: Logger, env: NodeJS.ProcessEnv = process.env, userAgent?: string): ReloadingKubeConfig | undefined {
  const load = () => {
    const config = readKubeConfig(file, env);
    if (config === undefined) throw new Error('no kubeconfig and not in a pod');
    return config;
  };
  if (file === undefined && !inCluster(env)) return undefined;
  return new ReloadingKubeConfig({
    load, logger, origin: file ?? IN_CLUSTER_ORIGIN, files: file === undefined ? [] : kubeconfigFiles(file),
    ...(userAgent === undefined ? {} : { userAgent }),
  });
}
