// A small TCP balancer on loopback, for what a Service and kube-proxy do in a cluster: each new connection goes to the
// next backend in turn, among those that are ready (as endpoints are); none ready, the connection is refused. TLS
// passes through untouched. It also stands in for an API server that restarts (drop(): every open connection cut).
import { connect, createServer, type Socket } from 'node:net';

export interface Backend {
  readonly port: number;
  /** Asked before each new connection; default: always ready. */
  readonly ready?: () => boolean;
}

export interface TcpBalancerOptions {
  readonly backends: () => readonly Backend[];
  /**
   * Cut every connection this long after it was opened, so that a client holding one HTTP/2 connection (as
   * kube-apiserver does towards a webhook) reconnects, and reaches every backend in turn: several API servers, or
   * connections re-established. Undefined: connections live as long as their ends keep them.
   */
  readonly maxConnectionMs?: number;
}

export interface TcpBalancer {
  readonly port: number;
  /** Connections opened to each backend port so far. */
  readonly opened: ReadonlyMap<number, number>;
  /** Connections to a backend port open now. */
  openTo(port: number): number;
  /** Cuts every open connection (an API server restart, as clients see it). */
  drop(): void;
  close(): Promise<void>;
}

export async function startTcpBalancer(options: TcpBalancerOptions): Promise<TcpBalancer> {
  let next = 0;
  const opened = new Map<number, number>();
  const open = new Map<number, Set<Socket>>();
  const pairs = new Set<readonly [Socket, Socket]>();
  const server = createServer((client) => {
    const ready = options.backends().filter((backend) => backend.ready?.() ?? true);
    const backend = ready[next++ % Math.max(ready.length, 1)];
    if (backend === undefined) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: backend.port });
    const pair = [client, upstream] as const;
    pairs.add(pair);
    opened.set(backend.port, (opened.get(backend.port) ?? 0) + 1);
    const sockets = open.get(backend.port) ?? new Set<Socket>();
    open.set(backend.port, sockets);
    sockets.add(upstream);
    const timer = options.maxConnectionMs === undefined ? undefined : setTimeout(() => cut(), options.maxConnectionMs);
    const cut = () => {
      if (timer !== undefined) clearTimeout(timer);
      pairs.delete(pair);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', cut);
    upstream.on('error', cut);
    client.on('close', cut);
    upstream.on('close', cut);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the balancer has no port');
  const drop = () => {
    for (const [client, upstream] of [...pairs]) {
      client.destroy();
      upstream.destroy();
    }
  };
  return {
    port: address.port,
    opened,
    openTo: (port) => open.get(port)?.size ?? 0,
    drop,
    close: async () => {
      drop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
