// One keep-alive connection pool for a client's requests. client-node 1.4 gives every request an https.Agent of its
// own (KubeConfig.applySecurityAuthentication), so every request opened a TCP and TLS connection: the controller paid
// a handshake per slice written (bench section scale: 0.4 times the API server's pace), and the Lease a handshake
// every renewal, every 2 s, on both ends. Only the connections are kept: credentials are still applied to every
// request, and an agent made with other TLS material (a rotated client certificate, another CA) starts a new pool.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';

export type RequestAgent = HttpAgent | HttpsAgent;

/** What an agent connects with: the pool is reused while these are the same. */
const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** Requests in flight on a replaced pool are left to finish: its connections are closed this much later. */
const RETIRE_AFTER_MS = 60_000;

function material(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('latin1');
  if (Array.isArray(value)) return value.map(material);
  if (typeof value === 'object' && value !== null) return Object.entries(value).map(([key, inner]) => [key, material(inner)]);
  return value ?? null;
}

/** What a connection is made with, as one comparable string: the pool is kept while it is the same. */
function tlsKey(options: AgentOptions): string {
  return JSON.stringify(TLS_FIELDS.map((field) => material(options[field])));
}

export class KeepAlivePool {
  /** The pool's agent, what it was made for, and the last agent handed in for it (compared without a key while the same). */
  private kept: { readonly key: string; readonly agent: RequestAgent; fresh: RequestAgent } | undefined;

  /** The pool's agent in place of `fresh`, which is what client-node made for one request; a proxy's agent is kept as it is. */
  agentFor(fresh: RequestAgent): RequestAgent {
    // Already a kept-alive agent (a pool's, as the reloading kubeconfig hands out): pooling it again would only
    // make a second pool of the same connections.
    if ((fresh as RequestAgent & { keepAlive?: boolean }).keepAlive === true) return fresh;
    // The lean client hands in the same agent for a second of requests: its TLS material need not be serialised again.
    if (this.kept?.fresh === fresh) return this.kept.agent;
    let key: string;
    if (fresh.constructor === HttpsAgent && fresh instanceof HttpsAgent) key = `https ${tlsKey(fresh.options)}`;
    else if (fresh.constructor === HttpAgent) key = 'http';
    else return fresh;
    if (this.kept?.key === key) {
      this.kept.fresh = fresh;
      return this.kept.agent;
    }
    const retired = this.kept?.agent;
    if (retired !== undefined) setTimeout(() => retired.destroy(), RETIRE_AFTER_MS).unref();
    const agent = fresh instanceof HttpsAgent ? new HttpsAgent({ ...fresh.options, keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.kept = { key, agent, fresh };
    return agent;
  }

  /** Closes the pool's connections (shutdown). */
  destroy(): void {
    this.kept?.agent.destroy();
    this.kept = undefined;
  }
}
