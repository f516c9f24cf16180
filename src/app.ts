// The two fastify instances, built without listening: the HTTPS webhook and the plain-HTTP ops server.
import type { Server } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import fastify, { LogController, type FastifyBaseLogger, type FastifyError } from 'fastify';
import type { Logger } from './log.ts';
import { admissionRoute, resourceOfUrl, type AdmissionRouteOptions } from './server/admission-route.ts';
import type { AnyFastify } from './server/any-fastify.ts';
import { opsRoutes, type OpsRouteOptions } from './server/ops-routes.ts';
import { discardBody, unreadBody } from './server/refused-body.ts';
import {
  declaredBodyBytes, declaredHeapEstimate, DEFAULT_MAX_REVIEW_BYTES_IN_FLIGHT, DEFAULT_MAX_REVIEWS_IN_FLIGHT, MAX_BODY_BYTES, parsedHeapEstimate, ReviewBudget,
  type ReviewBudgetOptions, type Ticket,
} from './server/review-budget.ts';
import { secureContextOptions, type TlsMaterial } from './tls.ts';
import { errorMessage } from './util/errors.ts';

/**
 * How much of a refused HTTP/1.1 body is read and thrown away after the refusal, so that its client can read the
 * answer (refused-body.ts): twice the limit, counted from the refusal. Past it the connection is dropped.
 */
const DISCARD_BYTES = 2 * MAX_BODY_BYTES;

export type WebhookApp = AnyFastify<Http2SecureServer>;

/**
 * HTTP/2 receive window, per stream and per connection. kube-apiserver sends every review over one connection, and
 * with nghttp2's 64 KiB default for the whole connection only one or two 40 KB reviews fit before it must wait for
 * a WINDOW_UPDATE: 4 concurrent reviews of a 100-endpoint slice ran 15 to 20 % slower (bench/). 1 MiB each is what
 * Go's own HTTP/2 servers default to.
 */
const HTTP2_WINDOW_BYTES = 1024 * 1024;

export interface WebhookAppOptions extends Omit<AdmissionRouteOptions, 'elapsedMs'> {
  readonly tls: TlsMaterial;
  /** Milliseconds on a monotonic clock, for the `?timeout=` budget and the duration metric; a test passes its own. */
  readonly clock?: () => number;
  /** The bound on reviews in flight (review-budget.ts); default: the flags' defaults. */
  readonly budget?: ReviewBudgetOptions;
}

/**
 * Past the bound on work in flight: 503 without Retry-After. kube-apiserver's client retries a 429 or a 5xx only when
 * the answer carries Retry-After (client-go rest, checkWait), so without it the call fails at once and the webhook's
 * failurePolicy Ignore lets the write through; the healing watch then patches what it stored.
 */
class Busy extends Error {
  readonly statusCode = 503;
}

/** A shed request is one line per interval with the count, not one each: a burst is what it answers. */
const BUSY_LOG_INTERVAL_MS = 10_000;


function statusOf(error: FastifyError): number {
  const status = error.statusCode ?? 500;
  return status >= 400 && status < 600 ? status : 500;
}

export function buildWebhookApp(options: WebhookAppOptions): WebhookApp {
  const logger: FastifyBaseLogger = options.logger;
  const app = fastify({
    http2: true,
    // The API server negotiates h2 through ALPN; curl and older clients still speak HTTP/1.1.
    https: {
      allowHTTP1: true, ...secureContextOptions(options.tls),
      settings: { initialWindowSize: HTTP2_WINDOW_BYTES },
    },
    loggerInstance: logger,
    // Reviews are logged once, with their outcome, by the route; fastify's per-request lines would double them.
    logController: new LogController({ disableRequestLogging: true }),
    // No pino child per request: the route logs through its own logger, with the review's uid. Fastify's own rare
    // per-request lines (a request timeout, a 503 while closing) then carry no reqId.
    childLoggerFactory: (logger) => logger,
    bodyLimit: MAX_BODY_BYTES,
    requestTimeout: 30_000,
    return503OnClosing: true,
  });
  app.server.on('session', (session) => session.setLocalWindowSize(HTTP2_WINDOW_BYTES));
  // One arrival stamp per request, on one clock, for reviews and refusals alike: a review's budget runs from its
  // headers, body upload included, and both kinds land in the same duration histogram.
  const clock = options.clock ?? (() => performance.now());
  const arrived = new WeakMap<object, number>();
  const budget = new ReviewBudget(options.budget ?? { maxReviews: DEFAULT_MAX_REVIEWS_IN_FLIGHT, maxBytes: DEFAULT_MAX_REVIEW_BYTES_IN_FLIGHT });
  const tickets = new WeakMap<object, Ticket>();
  const busy = (): Busy => {
    const { reviews, bytes } = budget.inFlight();
    return new Busy(`busy: ${reviews} reviews in flight, estimated at ${(bytes / 1048576).toFixed(1)} MiB of heap; answered at once so that the API server goes on without this webhook`);
  };
  // The share is taken before a byte of the body is read, and refused then: a refused body is never buffered.
  app.addHook('onRequest', (request, reply, done) => {
    arrived.set(request, clock());
    const ticket = budget.admit(declaredHeapEstimate(declaredBodyBytes(request.headers, request.method)));
    if (ticket === undefined) {
      done(busy());
      return;
    }
    tickets.set(request, ticket);
    // 'close' comes once the answer is written or the client is gone, whichever way the request ends.
    reply.raw.once('close', ticket.release);
    done();
  });
  const elapsedMs = (request: object): number => {
    const now = clock();
    return now - (arrived.get(request) ?? now);
  };
  // One JSON.parse of the whole body, as the API server sent it: invalid JSON anywhere (oldObject included) is a 400.
  // Reviews are never merged into prototypes (fields are read with Object.hasOwn, and JSON.parse makes `__proto__`
  // an own property), so fastify's prototype-poisoning scan would only turn legitimate `__proto__` keys into refusals.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // The body is in, not yet parsed: what its tree would cost is known now (an object costs 20 times its text).
    // (parseAs 'buffer' hands a Buffer; fastify's type also allows the string of parseAs 'string'.)
    if (tickets.get(request)?.resize(parsedHeapEstimate(typeof body === 'string' ? Buffer.from(body) : body)) === false) {
      done(busy(), undefined);
      return;
    }
    try {
      done(null, JSON.parse(body.toString()));
    } catch (error) {
      done(Object.assign(new Error(`body is not valid JSON: ${errorMessage(error)}`), { statusCode: 400 }), undefined);
    }
  });
  let busyLoggedAt = -Infinity;
  let busySinceLogged = 0;
  const noteBusy = (error: Busy, resource: ReturnType<typeof resourceOfUrl>): void => {
    options.metrics.admissionShed.inc({ resource });
    busySinceLogged++;
    const now = clock();
    if (now - busyLoggedAt < BUSY_LOG_INTERVAL_MS) return;
    options.logger.warn({ refused: busySinceLogged, err: error.message }, 'requests refused: too much work in flight (--max-reviews-in-flight, --max-review-bytes-in-flight)');
    busyLoggedAt = now;
    busySinceLogged = 0;
  };
  // The one place a request is refused (400 bad JSON or review, 413, 415), shed (503) or fails (5xx): counted, logged, answered.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = statusOf(error);
    const message = status === 413 ? `body exceeds ${MAX_BODY_BYTES} bytes (7 MiB)`
      : status === 415 ? `Content-Type must be application/json, got ${JSON.stringify(request.headers['content-type'] ?? null)}`
        : error.message;
    if (error instanceof Busy) noteBusy(error, resourceOfUrl(request.url));
    else if (status >= 500) options.logger.error({ err: error.message }, 'webhook request failed');
    else {
      options.metrics.observeRefused(resourceOfUrl(request.url), elapsedMs(request) / 1000);
      options.logger.warn({ status, err: message }, 'request refused');
    }
    // fastify asks for the connection to be closed after a body it could not parse; closing while the client is still
    // sending resets it before it reads the answer. The connection stays open and the rest of the body is read instead.
    reply.removeHeader('connection');
    const unread = unreadBody(request.raw, reply.raw);
    if (unread !== undefined) discardBody(unread, DISCARD_BYTES);
    return reply.code(status).send({ message });
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ message: `no route ${request.method} ${request.url}` }));
  admissionRoute(app, { ...options, elapsedMs });
  return app;
}

export interface OpsAppOptions extends OpsRouteOptions {
  readonly logger: Logger;
}

export function buildOpsApp(options: OpsAppOptions): AnyFastify<Server> {
  const logger: FastifyBaseLogger = options.logger;
  const app = fastify({ loggerInstance: logger, logController: new LogController({ disableRequestLogging: true }) });
  opsRoutes(app, options);
  return app;
}
