// A small HTTP client for the controller's hot path. client-node's API clients cost the controller about 1.6 ms of CPU
// per slice written where the webhook's review of the same patch costs 0.5 ms (bench section scale): its request
// machinery (a RequestContext, middleware, node-fetch, a fresh agent per request) and the parse and deserialisation
// of every answer, where a successful PATCH's answer (the whole stored slice) is never read. Here an answer is read
// only as far as the caller needs: `json` parses it once, `status` drains it unread; an error's body is read for its
// Status message only. Requests go over one keep-alive HTTP/1.1 pool (keep-alive.ts), one connection per request in
// flight. Not HTTP/2: one multiplexed session to kube-apiserver measured worse on both counts in bench section
// `scale` (interleaved pairs, 5,000 and 20,000 slices, Node 24): the controller's own CPU per slice 0.85 to 1.10 ms
// against 0.60 to 0.86 over HTTP/1.1, and the pass 0.74 to 0.78 times the plain client's pace against 0.84 to 1.06;
// a local Node HTTP/2 server had suggested the opposite (100 against 270 µs a request).
//
// Credentials are the KubeConfig's (KubeConfig.applyToHTTPSOptions: its token, token files and exec plugins, client
// certificate, CA, TLS server name, basic auth), taken again once a second, at once after a ReloadingKubeConfig's
// reload, and at once after a 401, which also tells the ReloadingKubeConfig to read them again, as its own API
// clients do.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Readable } from 'node:stream';
import { PASSED_OVER, type PassedOver } from '../util/answered-versions.ts';
import { KeepAlivePool } from './keep-alive.ts';
import { ReloadingKubeConfig } from './reloading-config.ts';

/** A request still unanswered after this long fails: a connection gone silent must not stall a pass for good. */
const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * The KubeConfig's credentials are taken again once they are this old (and at once after a 401 or a reload). Taken
 * for every request they cost 16 to 34 µs of CPU each (applyToHTTPSOptions reads the CA and certificate files, builds
 * an agent, and the pool compares the TLS material); a second is nothing next to the minute client-go keeps a token
 * file.
 */
const CREDENTIALS_MAX_AGE_MS = 1000;

/** An error's body is read this far for its message; a proxy's HTML page of megabytes is not. */
const ERROR_BODY_LIMIT = 64 * 1024;

/** How much of a successful answer the caller reads. */
export type AnswerReading = 'json' | 'status';

export interface LeanRequest {
  readonly method: 'GET' | 'PATCH';
  /** The path under the server's URL, with its query, already encoded. */
  readonly path: string;
  readonly body?: { readonly contentType: string; readonly text: string };
  readonly read: AnswerReading;
}

/** An answer outside 2xx: its status, Retry-After and the message of its Status body (or the start of a body that is not one). */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';

  constructor(
    readonly statusCode: number,
    message: string,
    readonly retryAfter: string | undefined,
    /** The Status's reason (`Conflict`, `Invalid`, `NotFound`...), when the body was one. */
    readonly reason: string | undefined,
  ) {
    super(message);
  }
}

export interface LeanClientOptions {
  readonly config: KubeConfig;
  /** Sent as User-Agent on every request (identity.ts); default the ReloadingKubeConfig's, else none. */
  readonly userAgent?: string;
  readonly timeoutMs?: number;
}

function statusMessage(status: number, text: string): { message: string; reason: string | undefined } {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string' && body.message !== '') {
      const reason = 'reason' in body && typeof body.reason === 'string' ? body.reason : undefined;
      return { message: body.message, reason };
    }
  } catch {
    // Not a Status (a proxy's page, a load balancer's text): its first line says more than nothing.
  }
  const line = text.trim().split('\n', 1)[0]?.slice(0, 200) ?? '';
  return { message: line === '' ? `HTTP ${status}` : line, reason: undefined };
}

/**
 * The body as text, decoded as it arrives: a list page of 500 slices is a few MB, and Buffers kept to be joined at the
 * end would be held outside V8's heap (external memory, freed only by a full collection) and copied twice.
 */
function readBody(response: Readable, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      if (text.length < limit) text += chunk;
    });
    response.on('end', () => resolve(text));
    response.on('error', reject);
  });
}

/** One line of a watch stream: `{"type": ..., "object": ...}`; undefined for a blank line or one that is not an event. */
function parseEvent(line: string): { readonly type: string; readonly object: unknown } | undefined {
  if (line.trim() === '') return undefined;
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof event !== 'object' || event === null || !('type' in event) || typeof event.type !== 'string') return undefined;
  return { type: event.type, object: 'object' in event ? event.object : undefined };
}

function isHeaderRecord(headers: RequestOptions['headers']): headers is OutgoingHttpHeaders {
  return headers !== undefined && !Array.isArray(headers);
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** What a request is made with, as the KubeConfig gave it. */
interface Applied {
  readonly at: number;
  readonly server: URL;
  readonly opts: RequestOptions;
  readonly baseHeaders: OutgoingHttpHeaders;
}

export class LeanKubeClient {
  private readonly pool = new KeepAlivePool();
  private readonly userAgent: string | undefined;

  private applied: Applied | undefined;
  private readonly stopFollowing: () => void;

  constructor(private readonly options: LeanClientOptions) {
    const { config } = options;
    this.userAgent = options.userAgent ?? (config instanceof ReloadingKubeConfig ? config.userAgent : undefined);
    // New credentials are used from the next request on, not a second later.
    this.stopFollowing = config instanceof ReloadingKubeConfig ? config.onReload(() => { this.applied = undefined; }) : () => {};
  }

  /** The answer's body parsed (`json`), or undefined once it is stored (`status`); a KubeRequestError outside 2xx. */
  async send(request: LeanRequest): Promise<unknown> {
    const answer = await this.exchange(request);
    const status = answer.statusCode ?? 0;
    this.observe(status);
    if (status < 200 || status >= 300) {
      const { message, reason } = statusMessage(status, await readBody(answer, ERROR_BODY_LIMIT));
      throw new KubeRequestError(status, message, headerText(answer.headers['retry-after']), reason);
    }
    if (request.read === 'status') {
      // Drained unread: the connection is free for the next request once the answer has ended.
      await new Promise<void>((resolve, reject) => {
        answer.on('end', resolve);
        answer.on('error', reject);
        answer.resume();
      });
      return undefined;
    }
    return JSON.parse(await readBody(answer, Number.POSITIVE_INFINITY));
  }

  /**
   * A watch stream (`path` with its query, `watch=true` among it): each line parsed once and handed to `onEvent` as
   * the server sent it, `done` called once when the stream ends (null), fails, is refused (a KubeRequestError) or is
   * aborted. client-node's Watch costs the healing watch a node-fetch body, a PassThrough and a readline interface
   * per stream, and their events per chunk, on every stored version of every reflected object. A line `passOver`
   * recognises is not parsed at all: handed over as PASSED_OVER with its resourceVersion. No socket timeout:
   * the owner's watchdog (list-watch.ts) ends a stream silent past the timeout it asked of the server.
   */
  async watch(
    path: string, onEvent: (type: string, object: unknown) => void, done: (error: unknown) => void,
    passOver?: (line: string) => PassedOver | undefined,
  ): Promise<AbortController> {
    const controller = new AbortController();
    let finished = false;
    const finish = (error: unknown) => {
      if (finished) return;
      finished = true;
      controller.abort();
      done(error);
    };
    try {
      const answer = await this.exchange({ method: 'GET', path, read: 'json' }, { signal: controller.signal, timeoutMs: 0 });
      const status = answer.statusCode ?? 0;
      this.observe(status);
      if (status !== 200) {
        const { message, reason } = statusMessage(status, await readBody(answer, ERROR_BODY_LIMIT));
        throw new KubeRequestError(status, message, headerText(answer.headers['retry-after']), reason);
      }
      let pending = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        const text = pending + chunk;
        let start = 0;
        for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
          const line = text.slice(start, end);
          start = end + 1;
          if (finished) return;
          const passed = passOver?.(line);
          if (passed !== undefined) {
            onEvent(PASSED_OVER, { metadata: { resourceVersion: passed.resourceVersion } });
            continue;
          }
          const event = parseEvent(line);
          if (event !== undefined) onEvent(event.type, event.object);
        }
        pending = text.slice(start);
      });
      answer.on('end', () => finish(null));
      answer.on('error', finish);
      answer.on('close', () => finish(null));
    } catch (error) {
      finish(error);
    }
    return controller;
  }

  /** The request sent with the KubeConfig's credentials of the moment. */
  private async exchange(request: LeanRequest, stream: { readonly signal?: AbortSignal; readonly timeoutMs?: number } = {}): Promise<IncomingMessage> {
    const { server, opts, baseHeaders } = await this.credentials();
    const headers: OutgoingHttpHeaders = { ...baseHeaders };
    if (request.body !== undefined) {
      headers['Content-Type'] = request.body.contentType;
      headers['Content-Length'] = Buffer.byteLength(request.body.text);
    }
    const timeoutMs = stream.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const path = `${server.pathname.replace(/\/$/, '')}${request.path}`;
    // client-node made an agent for this request's TLS material (or a proxy's): the pool's takes its place.
    const agent = opts.agent instanceof HttpAgent ? this.pool.agentFor(opts.agent) : undefined;
    const send = server.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send({
        protocol: server.protocol, hostname: server.hostname, port: server.port, path,
        method: request.method, headers, agent, ...(opts.auth === undefined ? {} : { auth: opts.auth }),
        ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}), ...(stream.signal === undefined ? {} : { signal: stream.signal }),
      }, resolve);
      if (timeoutMs > 0) outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer from ${server.host} within ${timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end(request.body?.text);
    });
  }

  /** Closes the kept-alive connections (shutdown). */
  close(): void {
    this.stopFollowing();
    this.pool.destroy();
  }

  /** The server, TLS material and headers of the KubeConfig, taken again once CREDENTIALS_MAX_AGE_MS old. */
  private async credentials(): Promise<Applied> {
    const now = performance.now();
    if (this.applied !== undefined && now - this.applied.at < CREDENTIALS_MAX_AGE_MS) return this.applied;
    const { config } = this.options;
    const cluster = config.getCurrentCluster();
    if (cluster === null) throw new Error('no current cluster in the kubeconfig');
    const opts: RequestOptions = {};
    await config.applyToHTTPSOptions(opts);
    // client-node writes its headers as a record; the raw-array form of RequestOptions never comes from it.
    const baseHeaders: OutgoingHttpHeaders = { ...(isHeaderRecord(opts.headers) ? opts.headers : {}), Accept: 'application/json' };
    if (this.userAgent !== undefined) baseHeaders['User-Agent'] = this.userAgent;
    const applied: Applied = { at: now, server: new URL(cluster.server), opts, baseHeaders };
    this.applied = applied;
    return applied;
  }

  private observe(status: number): void {
    if (status === 401) this.applied = undefined;
    const { config } = this.options;
    if (!(config instanceof ReloadingKubeConfig)) return;
    if (status === 401) config.refused(401, 'a controller request');
    else if (status >= 200 && status < 300) config.accepted();
  }
}
