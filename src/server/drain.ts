// What a graceful stop needs to know: how many reviews are still being answered, and which HTTP/2 sessions are
// open. The API server keeps HTTP/2 connections open between reviews, and server.close() alone waits for them to
// end (fastify's own session tracking never sees server sessions), so they are sent a GOAWAY instead.
//
// A review is over once its answer is written, not once its body is read: a refused body (413) is answered before
// the rest of it arrives, and the rest may never come. Such a body is still read and thrown away after the answer
// (refused-body.ts), so that the client can read the 413; at shutdown that reading is cut short.
import type { IncomingMessage } from 'node:http';
import type { Http2SecureServer, Http2ServerRequest, ServerHttp2Session } from 'node:http2';
import type { AnyFastify } from './any-fastify.ts';

export interface Drain {
  /**
   * Shutdown begins: every open HTTP/2 session is sent a GOAWAY (streams in progress finish, no new ones start), and
   * requests already answered whose bodies are still arriving are dropped, now or as soon as they are answered.
   */
  closeSessions(): void;
  /**
   * Every open HTTP/2 session is sent a GOAWAY, and serving goes on: the API server opens a new connection for its
   * next review, which the Service sends to a ready replica. For a replica that turns not ready: an established
   * connection outlives the endpoint's removal (conntrack), so it would otherwise keep receiving reviews.
   */
  goAway(): void;
  /** Resolves once no review is being answered. */
  idle(): Promise<void>;
}

type RawRequest = IncomingMessage | Http2ServerRequest;

export function trackDrain(app: AnyFastify<Http2SecureServer>): Drain {
  const sessions = new Set<ServerHttp2Session>();
  /** Answered requests whose body is still being read and discarded. */
  const discarding = new Set<RawRequest>();
  let stopping = false;
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  app.server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  app.addHook('onRequest', (request, reply, done) => {
    inFlight++;
    const raw = request.raw;
    let over = false;
    // 'finish': the answer is written. 'close': written, or the client went away before it was. Either ends the review.
    const answered = () => {
      if (over) return;
      over = true;
      if (!raw.complete && !raw.destroyed) {
        if (stopping) raw.destroy();
        else {
          discarding.add(raw);
          const forget = () => discarding.delete(raw);
          raw.once('end', forget);
          raw.once('close', forget);
        }
      }
      inFlight--;
      if (inFlight === 0) {
        for (const resolve of waiters) resolve();
        waiters = [];
      }
    };
    reply.raw.once('finish', answered);
    reply.raw.once('close', answered);
    done();
  });
  return {
    closeSessions() {
      stopping = true;
      for (const raw of discarding) raw.destroy();
      discarding.clear();
      for (const session of sessions) session.close();
    },
    goAway() {
      for (const session of sessions) session.close();
    },
    idle() {
      return inFlight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
}
