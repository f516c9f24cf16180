// The lean client's HTTP/2 connection: one multiplexed session to the API server, as client-go keeps (kube-apiserver
// negotiates h2 by ALPN). Over HTTP/1.1 with a keep-alive pool a request cost the controller about 270 µs of CPU, one
// on an HTTP/2 session about 100 µs (CPU per PATCH of a slice, 8 in flight, Node 24: the socket bookkeeping, the
// parser and the headers of each request); a pass of 20,000 slices spends that 20,000 times.
//
// The connection is opened with TLS offering h2 and http/1.1: a server that picks http/1.1 (a proxy, a front that
// does not speak HTTP/2, the test API server) is remembered as such for this TLS material and the client uses its
// HTTP/1.1 pool. A session is replaced when the TLS material changes (a rotated client certificate or CA): the old one
// is closed gracefully, so requests in flight on it finish. One the server sends away (GOAWAY), or that fails, is
// dropped and the next request opens another; one whose request timed out is destroyed with it, since a stream that
// gets no answer for a minute means a dead connection (client-go's health check pings for the same reason).
import { connect as http2Connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { tlsKey } from './keep-alive.ts';

/** What a session connects with; sessions are reused while it is the same. */
export interface SessionTls {
  readonly ca?: Buffer | string | undefined;
  readonly cert?: Buffer | string | undefined;
  readonly key?: Buffer | string | undefined;
  readonly servername?: string | undefined;
  readonly rejectUnauthorized?: boolean | undefined;
}

/** An answer's head and its body, to read or to drain. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
}

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2): a kubeconfig's exec plugin or a header copied from HTTP/1.1 must not break a request. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

export interface H2Request {
  readonly method: string;
  /** The path with its query, already encoded. */
  readonly path: string;
  readonly headers: OutgoingHttpHeaders;
  readonly body: string | undefined;
  readonly timeoutMs: number;
  /** The server's host and port, for the timeout's message. */
  readonly host: string;
}

/** A request the server did not process: safe to send again. */
class Unprocessed extends Error {
  constructor(override readonly cause: unknown) {
    super('not processed by the server');
  }
}

interface Negotiation {
  readonly key: string;
  readonly tls: SessionTls;
  readonly origin: string;
  /** The session once h2 is agreed; undefined when the server speaks HTTP/1.1 only. */
  readonly session: Promise<ClientHttp2Session | undefined>;
}

export class Http2Sessions {
  private current: Negotiation | undefined;
  /** Streams open on each session: a session with none lets the process exit, as an idle keep-alive socket does. */
  private readonly open = new WeakMap<ClientHttp2Session, number>();

  /**
   * The session for this server and TLS material, opened if need be; undefined when the server chose HTTP/1.1. A
   * failed connection (refused, a certificate not trusted) rejects, as the request would over HTTP/1.1.
   */
  private async session(server: URL, tls: SessionTls): Promise<ClientHttp2Session | undefined> {
    // The same material object again (the client takes it from the KubeConfig once a second) needs no comparing.
    const same = this.current !== undefined && this.current.tls === tls && this.current.origin === server.origin;
    const key = same && this.current !== undefined ? this.current.key : `${server.origin} ${tlsKey(tls)}`;
    if (this.current?.key !== key) {
      const replaced = this.current;
      this.current = { key, tls, origin: server.origin, session: this.negotiate(server, tls) };
      // Closed gracefully: its streams in flight finish, new ones go to the new session.
      void replaced?.session.then((session) => session?.close(), () => {});
    }
    const negotiation = this.current;
    let session: ClientHttp2Session | undefined;
    try {
      session = await negotiation.session;
    } catch (error) {
      if (this.current === negotiation) this.current = undefined;
      throw error;
    }
    // Sent away (a GOAWAY closes it) or failed since it was opened: the next session takes the request.
    if (session !== undefined && (session.closed || session.destroyed)) {
      if (this.current === negotiation) this.current = undefined;
      return this.session(server, tls);
    }
    return session;
  }

  /**
   * One request over HTTP/2: the answer's head once it comes; undefined when the server speaks HTTP/1.1 only. A
   * request the server provably did not process (a session closing under it, a refused stream: RFC 9113 §8.7) is
   * sent once more on a new session.
   */
  async send(server: URL, tls: SessionTls, request: H2Request): Promise<Answer | undefined> {
    for (let attempt = 1; ; attempt++) {
      const session = await this.session(server, tls);
      if (session === undefined) return undefined;
      try {
        return await this.request(session, request);
      } catch (error) {
        if (!(error instanceof Unprocessed) || attempt >= 2) throw error instanceof Unprocessed ? error.cause : error;
        this.drop(session);
      }
    }
  }

  /** A timeout destroys the session with the stream: a minute without an answer on a multiplexed connection means the connection is gone. */
  private request(session: ClientHttp2Session, request: H2Request): Promise<Answer> {
    const headers: OutgoingHttpHeaders = { ':method': request.method, ':path': request.path };
    for (const [name, value] of Object.entries(request.headers)) {
      const lower = name.toLowerCase();
      if (value !== undefined && !CONNECTION_HEADERS.has(lower)) headers[lower] = value;
    }
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(headers, { endStream: request.body === undefined });
    } catch (error) {
      // The session closed (a GOAWAY) between its check and this request: nothing was sent.
      return Promise.reject(new Unprocessed(error));
    }
    this.opened(session, +1);
    stream.once('close', () => this.opened(session, -1));
    return new Promise<Answer>((resolve, reject) => {
      stream.setTimeout(request.timeoutMs, () => {
        const error = new Error(`no answer from ${request.host} within ${request.timeoutMs} ms`);
        stream.destroy(error);
        this.drop(session);
        session.destroy();
        reject(error);
      });
      // The timeout stays on while the body is read: a body that stalls is a dead connection too.
      stream.once('response', (head) => {
        resolve({ status: Number(head[':status'] ?? 0), headers: head, body: stream });
      });
      stream.once('error', (error: NodeJS.ErrnoException) => {
        reject(error.code === 'ERR_HTTP2_GOAWAY_SESSION' || stream.rstCode === constants.NGHTTP2_REFUSED_STREAM ? new Unprocessed(error) : error);
      });
      stream.once('close', () => {
        const error = new Error(`the stream closed before its answer (HTTP/2 code ${stream.rstCode ?? 'none'})`);
        reject(stream.rstCode === constants.NGHTTP2_REFUSED_STREAM ? new Unprocessed(error) : error);
      });
      if (request.body !== undefined) stream.end(request.body);
    });
  }

  /** Closes the session (shutdown): streams in flight finish. */
  close(): void {
    const closing = this.current;
    this.current = undefined;
    void closing?.session.then((session) => session?.close(), () => {});
  }

  private opened(session: ClientHttp2Session, change: number): void {
    const count = (this.open.get(session) ?? 0) + change;
    this.open.set(session, count);
    if (session.destroyed) return;
    if (count === 1 && change > 0) session.ref();
    else if (count === 0) session.unref();
  }

  private drop(session: ClientHttp2Session): void {
    const current = this.current;
    void current?.session.then((found) => { if (found === session && this.current === current) this.current = undefined; }, () => {});
  }

  private negotiate(server: URL, tls: SessionTls): Promise<ClientHttp2Session | undefined> {
    const host = server.hostname.replace(/^\[(.*)\]$/, '$1');
    const servername = tls.servername ?? (isIP(host) === 0 ? host : undefined);
    const options: ConnectionOptions = {
      host, port: Number(server.port || 443), ALPNProtocols: ['h2', 'http/1.1'],
      ...(servername === undefined ? {} : { servername }),
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert }),
      ...(tls.key === undefined ? {} : { key: tls.key }),
      ...(tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: tls.rejectUnauthorized }),
    };
    return new Promise((resolve, reject) => {
      const socket: TLSSocket = tlsConnect(options, () => {
        socket.off('error', reject);
        if (socket.alpnProtocol !== 'h2') {
          socket.destroy();
          resolve(undefined);
          return;
        }
        const session = http2Connect(server.origin, { createConnection: () => socket });
        const forget = () => this.drop(session);
        session.once('goaway', forget);
        session.once('close', forget);
        // A session's error ends its streams, each of which rejects its request: nothing more to do here.
        session.on('error', forget);
        session.unref();
        resolve(session);
      });
      socket.once('error', reject);
    });
  }
}
