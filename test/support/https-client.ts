// Minimal HTTPS clients that speak exactly what an API server would: HTTP/1.1 keep-alive or HTTP/2 through ALPN.
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'node:https';

export interface HttpAnswer { readonly status: number; readonly headers: Record<string, unknown>; readonly body: string; readonly httpVersion: string }

export interface PostOptions {
  /** application/json unless given; null sends no Content-Type at all. */
  readonly contentType?: string | null | undefined;
  readonly agent?: Agent;
  readonly path?: string;
  readonly method?: string;
}

export function post1(url: string, ca: Buffer, body: string | Buffer, options: PostOptions = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/json';
    const target = new URL(options.path ?? '/mutate/endpointslices', url);
    const req = request(target, { method: options.method ?? 'POST', ca, headers, agent: options.agent ?? false, servername: 'localhost' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString(), httpVersion: res.httpVersion }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function connect2(url: string, ca: Buffer): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(url, { ca, servername: 'localhost' });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

export function post2(session: ClientHttp2Session, body: string, path = '/mutate/endpointslices?timeout=10s'): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    // The length declared, as kube-apiserver's Go client does for a request body it holds whole.
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    const chunks: Buffer[] = [];
    let status = 0;
    let headers: Record<string, unknown> = {};
    stream.on('response', (h) => { status = Number(h[':status']); headers = h; });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status, headers, body: Buffer.concat(chunks).toString(), httpVersion: '2.0' }));
    stream.on('error', reject);
    stream.end(body);
  });
}
