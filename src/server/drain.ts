// What a graceful stop needs to know: how many reviews are still being answered, and which HTTP/2 sessions are
// open. The API server keeps HTTP/2 connections open between reviews, and server.close() alone waits for them to
// end (fastify's own session tracking never sees server sessions), so they are sent a GOAWAY instead.
import type { Http2SecureServer, ServerHttp2Session } from 'node:http2';
import type { AnyFastify } from './any-fastify.ts';

export interface Drain {
  /** Sends every open HTTP/2 session a GOAWAY: streams in progress finish, no new ones start. */
  closeSessions(): void;
  /** Resolves once no review is being answered. */
  idle(): Promise<void>;
}

export function trackDrain(app: AnyFastify<Http2SecureServer>): Drain {
  const sessions = new Set<ServerHttp2Session>();
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  app.server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  app.addHook('onRequest', (request, _reply, done) => {
    inFlight++;
    // 'close' fires once the answer is fully written or the client went away: either way the review is over.
    request.raw.once('close', () => {
      inFlight--;
      if (inFlight === 0) {
        for (const resolve of waiters) resolve();
        waiters = [];
      }
    });
    done();
  });
  return {
    closeSessions() {
      for (const session of sessions) session.close();
    },
    idle() {
      return inFlight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
  };
}
