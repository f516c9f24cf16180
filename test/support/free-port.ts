// A free TCP port on 127.0.0.1, for a process that binds it right after (a tiny race, acceptable in tests and bench).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return listenOnce(0);
}

/**
 * A free port the kernel never hands out by itself, for a port that must stay the same for minutes while nothing
 * holds it (a webhook URL registered once, its server restarted on it). A port of freePort() is one of the ephemeral
 * range that every listen on port 0 on the machine draws from; below that range only an explicit bind to the same
 * number can take it. Linux only (ip_local_port_range); elsewhere, freePort().
 */
export async function freePortOutsideEphemeralRange(): Promise<number> {
  let low: number;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return freePort();
  }
  const first = 10_000;
  if (!Number.isInteger(low) || low <= first) return freePort();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * (low - first));
    try {
      return await listenOnce(port);
    } catch {
      // Taken: try another.
    }
  }
  return freePort();
}

function listenOnce(wanted: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(wanted, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
