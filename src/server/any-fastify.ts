// The type every route registers on.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerBase } from 'fastify';

/** Any fastify instance: the webhook runs on HTTP/2 with HTTP/1.1 fallback, tests may use either. */
export type AnyFastify<S extends RawServerBase = RawServerBase> =
  FastifyInstance<S, RawRequestDefaultExpression<S>, RawReplyDefaultExpression<S>, FastifyBaseLogger>;
