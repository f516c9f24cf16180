// A small client of the real API server for the end-to-end tests: raw HTTPS, so a test sees exactly what the server
// answers (status, body, Warning headers) and nothing is hidden by a library's retries or defaults.
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface KubeAnswer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
  readonly text: string;
  readonly warnings: readonly string[];
}

export interface RequestOptions {
  readonly contentType?: string;
}

export type KubeObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string>;
    labels?: Record<string, string>; managedFields?: unknown[]; [key: string]: unknown };
};

export interface WatchEvent {
  readonly type: string;
  readonly object: KubeObject;
}

export class KubeError extends Error {
  constructor(readonly method: string, readonly path: string, readonly answer: KubeAnswer<unknown>) {
    super(`${method} ${path}: HTTP ${answer.status}: ${answer.text.slice(0, 2000)}`);
  }
}

export class KubeClient {
  private readonly agent: Agent;
  /** Every Warning header the server sent on any request of this client. */
  readonly warnings: string[] = [];

  constructor(private readonly url: string, ca: Buffer, private readonly credentials: { cert: Buffer; key: Buffer } | { token: string }) {
    this.agent = new Agent({ keepAlive: true, ca, ...('cert' in credentials ? credentials : {}) });
  }

  close(): void {
    this.agent.destroy();
  }

  private headers(contentType: string | undefined, length: number | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if ('token' in this.credentials) headers.authorization = `Bearer ${this.credentials.token}`;
    if (contentType !== undefined) headers['content-type'] = contentType;
    if (length !== undefined) headers['content-length'] = String(length);
    return headers;
  }

  private send(method: string, path: string, body: unknown, options: RequestOptions): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const contentType = payload === undefined ? undefined : options.contentType ?? 'application/json';
    return new Promise((resolve, reject) => {
      const req = httpsRequest(new URL(path, this.url), { method, agent: this.agent, headers: this.headers(contentType, payload?.length) }, resolve);
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Any request; the answer whatever its status. */
  async request<T = Record<string, unknown>>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<KubeAnswer<T>> {
    const response = await this.send(method, path, body, options);
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const warning = response.headers.warning;
    const warnings = warning === undefined ? [] : Array.isArray(warning) ? warning : [warning];
    this.warnings.push(...warnings);
    let parsed: unknown = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      // Plain text (/readyz): keep `text`.
    }
    return { status: response.statusCode ?? 0, body: parsed as T, text, warnings };
  }

  /** A request that must succeed (2xx); its parsed body. */
  async ok<T = KubeObject>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const answer = await this.request<T>(method, path, body, options);
    if (answer.status < 200 || answer.status > 299) throw new KubeError(method, path, answer);
    return answer.body;
  }

  get<T = KubeObject>(path: string): Promise<T> {
    return this.ok<T>('GET', path);
  }

  /** Server-side apply: `application/apply-patch+yaml` (JSON is YAML), a field manager, `force` as asked. */
  apply(path: string, object: unknown, fieldManager: string, force: boolean, extraQuery = ''): Promise<KubeObject> {
    const query = `fieldManager=${encodeURIComponent(fieldManager)}${force ? '&force=true' : ''}${extraQuery}`;
    return this.ok('PATCH', `${path}?${query}`, object, { contentType: 'application/apply-patch+yaml' });
  }

  /**
   * A watch from `resourceVersion` on: calls `onEvent` for each event until `stop()`. The stream is the server's
   * newline-delimited JSON, read as it arrives.
   */
  async watch(path: string, resourceVersion: string, onEvent: (event: WatchEvent) => void): Promise<{ stop(): void; ended: Promise<void> }> {
    const separator = path.includes('?') ? '&' : '?';
    const response = await this.send('GET', `${path}${separator}watch=1&allowWatchBookmarks=true&resourceVersion=${resourceVersion}`, undefined, {});
    if (response.statusCode !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      throw new Error(`watch ${path}: HTTP ${response.statusCode}: ${Buffer.concat(chunks).toString()}`);
    }
    let buffered = '';
    response.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() !== '') onEvent(JSON.parse(line) as WatchEvent);
      }
    });
    const ended = new Promise<void>((resolve) => {
      response.on('end', resolve);
      response.on('close', resolve);
      response.on('error', () => resolve());
    });
    return { stop: () => response.destroy(), ended };
  }
}
