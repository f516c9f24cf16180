// Plain-HTTP operations endpoints: liveness, readiness, Prometheus metrics and the pair view.
import type { Metrics } from '../metrics.ts';
import type { ShortcutView } from '../view/shortcut-view.ts';
import type { RawServerBase } from 'fastify';
import type { AnyFastify } from './any-fastify.ts';
import { viewNotes } from '../core/local-clusters.ts';
import { debugPairs, type SourceReport } from './debug-pairs.ts';

export interface Readiness {
  /** Empty when ready; otherwise why not, in words an operator can act on. */
  (): readonly string[];
}

/**
 * Who may read /debug/pairs: `any` client of the ops port, `localhost` only (a process in the pod, or `kubectl
 * port-forward`, which connects from inside the pod's network namespace), or nobody (`off`: no such route).
 */
export type DebugPairsAccess = 'any' | 'localhost' | 'off';

/** A loopback peer: no other pod can send from these (the kernel drops such packets arriving from outside). */
function isLoopback(address: string | undefined): boolean {
  return address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));
}

export interface OpsRouteOptions {
  readonly view: ShortcutView;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  readonly clusterId: string | undefined;
  /** The clusters or files read, for /debug/pairs. */
  readonly sources?: () => readonly SourceReport[];
  /** Default `any`. */
  readonly debugPairs?: DebugPairsAccess;
}

export function opsRoutes<S extends RawServerBase>(app: AnyFastify<S>, options: OpsRouteOptions): void {
  app.get('/healthz', async () => 'ok\n');
  app.get('/readyz', async (_request, reply) => {
    const reasons = options.readiness();
    if (reasons.length === 0) {
      // Ready either way (an empty source is a state, not a fault), but whoever looks is told why nothing changes.
      const { view } = options;
      return ['ok', ...viewNotes(view.current(), options.clusterId, view.isSynced()).map((note) => `note: ${note}`)].join('\n') + '\n';
    }
    return reply.code(503).send({ ready: false, reasons });
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.registry.metrics();
    return reply.type(options.metrics.registry.contentType).send(text);
  });
  const access = options.debugPairs ?? 'any';
  if (access === 'off') return;
  app.get('/debug/pairs', async (request, reply) => {
    if (access === 'localhost' && !isLoopback(request.socket.remoteAddress)) {
      return reply.code(403).send({ message: '/debug/pairs is served to localhost only (--debug-pairs localhost): read it with kubectl port-forward' });
    }
    const { view } = options;
    return debugPairs({
      snapshot: view.current(), clusterId: options.clusterId, synced: view.isSynced(), lastSync: view.lastSync(),
      ...(options.sources === undefined ? {} : { sources: options.sources() }),
    });
  });
}
