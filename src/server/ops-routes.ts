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

export interface OpsRouteOptions {
  readonly view: ShortcutView;
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  readonly clusterId: string | undefined;
  /** The clusters or files read, for /debug/pairs. */
  readonly sources?: () => readonly SourceReport[];
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
  app.get('/debug/pairs', async () => {
    const { view } = options;
    return debugPairs({
      snapshot: view.current(), clusterId: options.clusterId, synced: view.isSynced(), lastSync: view.lastSync(),
      ...(options.sources === undefined ? {} : { sources: options.sources() }),
    });
  });
}
