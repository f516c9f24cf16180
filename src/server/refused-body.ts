// A request refused before its body was read (413 too large, 415 wrong type) is answered at once, but a client that
// writes its whole body before reading (curl, most HTTP/1.1 libraries) only looks for the answer afterwards. Closing
// the connection under it then resets it, and the client sees a broken pipe instead of the 413. So the rest of the
// body is read and thrown away, up to a bound, and the connection stays usable; past the bound it is dropped.
// HTTP/2 needs none of this: after the answer, node ends the stream alone with RST_STREAM NO_ERROR (RFC 9113 §8.1),
// which tells the client to stop sending without an error, and the connection is untouched.
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

/** Whether this is an HTTP/1.1 request whose body has not all arrived yet. */
export function bodyUnread(raw: IncomingMessage | Http2ServerRequest): raw is IncomingMessage {
  return raw.httpVersionMajor === 1 && !raw.complete && !raw.destroyed;
}

/** Reads and drops what is left of the body; past `limitBytes` more, the request (and an HTTP/1.1 connection) is destroyed. */
export function discardBody(raw: IncomingMessage, limitBytes: number): void {
  let discarded = 0;
  raw.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limitBytes) raw.destroy();
  });
  raw.on('error', () => {});
  raw.resume();
}
