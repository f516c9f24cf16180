// A small closed-loop load generator: a fixed number of workers, each sending the next request as soon as the
// previous answer has arrived, over keep-alive HTTP/1.1 connections or multiplexed on one HTTP/2 session, the way
// kube-apiserver calls a webhook. Latency is measured per request, from write to the end of the answer.
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'node:https';

export interface LoadResult {
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  /** Milliseconds, one per answered request. */
  readonly latencies: Float64Array;
  readonly errors: number;
}

export interface Target {
  readonly url: string;
  readonly ca: Buffer;
  readonly body: Buffer;
}

/** One POST over HTTP/1.1; resolves with the status and, when asked, the body. */
function post1(target: Target, agent: Agent, keepBody: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(target.url, {
      method: 'POST', agent, ca: target.ca,
      headers: { 'content-type': 'application/json', 'content-length': target.body.length },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => { if (keepBody) chunks.push(chunk); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: keepBody ? Buffer.concat(chunks).toString() : '' }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(target.body);
  });
}

function post2(target: Target, session: ClientHttp2Session, keepBody: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const path = new URL(target.url);
    const stream = session.request({
      ':method': 'POST', ':path': `${path.pathname}${path.search}`, 'content-type': 'application/json', 'content-length': target.body.length,
    });
    const chunks: Buffer[] = [];
    let status = 0;
    stream.on('response', (headers) => { status = Number(headers[':status']); });
    stream.on('data', (chunk: Buffer) => { if (keepBody) chunks.push(chunk); });
    stream.on('end', () => resolve({ status, body: keepBody ? Buffer.concat(chunks).toString() : '' }));
    stream.on('error', reject);
    stream.end(target.body);
  });
}

export type Protocol = 'https1' | 'http2';

/** A client of one protocol: `send` posts the body once; `close` ends its connections. */
export interface Client {
  send(keepBody?: boolean): Promise<{ status: number; body: string }>;
  close(): void;
}

export async function client(target: Target, protocol: Protocol, connections: number): Promise<Client> {
  if (protocol === 'https1') {
    const agent = new Agent({ keepAlive: true, maxSockets: connections });
    return { send: (keepBody = false) => post1(target, agent, keepBody), close: () => agent.destroy() };
  }
  const session = await new Promise<ClientHttp2Session>((resolve, reject) => {
    const opened = http2Connect(new URL(target.url).origin, { ca: target.ca });
    opened.once('connect', () => resolve(opened));
    opened.once('error', reject);
  });
  return { send: (keepBody = false) => post2(target, session, keepBody), close: () => session.close() };
}

/** `workers` loops for `seconds`; a non-200 answer or a transport error counts as an error. */
export async function load(send: Client['send'], workers: number, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const sent = performance.now();
      try {
        const { status } = await send();
        if (status === 200) latencies.push(performance.now() - sent); else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  const elapsed = (performance.now() - start) / 1000;
  return { requests: latencies.length, seconds: elapsed, rps: latencies.length / elapsed, latencies: Float64Array.from(latencies), errors };
}
