// A request refused before its body was read (413 too large, 415 wrong type) is answered at once, but a client that
// writes its whole body before reading (curl, most HTTP/1.1 libraries) only looks for the answer afterwards. Closing
// the connection under it then resets it, and the client sees a broken pipe instead of the 413. So the rest of the
// body is read and thrown away, up to a bound, and the connection stays open until it has all arrived; past the
// bound it is dropped.
//
// That includes a client that asked to close the connection after the answer (`Connection: close`, HTTP/1.0). Node
// closes such a connection as soon as the answer is written, body still arriving or not: the kernel answers the
// client's next bytes with a reset, which fails its write (EPIPE) and may discard the 413 before the client has read
// it (RFC 9112 §9.6). It happened to most such clients on a loaded machine, where the answer is written long before
// the body is in. So Node is told to keep the connection, and it is closed here once the body has been read.
//
// HTTP/2 needs none of this: after the answer, node ends the stream alone with RST_STREAM NO_ERROR (RFC 9113 §8.1),
// which tells the client to stop sending without an error, and the connection is untouched.
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

/** An HTTP/1.1 request whose body has not all arrived yet, with its response; undefined for anything else. */
export interface UnreadBody {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

export function unreadBody(
  request: IncomingMessage | Http2ServerRequest,
  response: ServerResponse | Http2ServerResponse,
): UnreadBody | undefined {
  if (!(request instanceof IncomingMessage) || !(response instanceof ServerResponse)) return undefined;
  return request.complete || request.destroyed ? undefined : { request, response };
}

/**
 * Reads and drops what is left of the body; past `limitBytes` more, the request and its connection are destroyed.
 * Called before the answer is sent: whether node closes the connection after it is decided when it is written.
 */
export function discardBody({ request, response }: UnreadBody, limitBytes: number): void {
  const clientCloses = !response.shouldKeepAlive;
  response.shouldKeepAlive = true;
  let discarded = 0;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limitBytes) request.destroy();
  });
  request.on('error', () => {});
  if (clientCloses) {
    // Once both the answer is written and the body is in, nothing more is owed either way: close as node would have.
    let pending = 2;
    const oneDone = () => {
      if (--pending === 0) request.socket.destroySoon();
    };
    response.once('finish', oneDone);
    request.once('end', oneDone);
  }
  request.resume();
}
