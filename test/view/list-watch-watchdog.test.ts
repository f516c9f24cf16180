// The watch's time limits in their units: timeoutSeconds asked of the server in seconds, and a silent stream dropped
// after that many seconds plus a 30 s grace, in milliseconds. The watchdog's timer is read by a spy, and the test
// runs its callback itself instead of waiting.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { createLogger } from '../../src/log.ts';
import { keepObject, ListWatch } from '../../src/view/list-watch.ts';
import { localKubeConfig } from '../support/local-kubeconfig.ts';
import { waitFor } from '../support/wait-for.ts';

async function silentServer() {
  const watches: URL[] = [];
  const open: ServerResponse[] = [];
  const server = createServer((request, response) => {
    watches.push(new URL(request.url ?? '/', 'http://localhost'));
    // One bookmark, then nothing: a connection that died without a FIN looks the same from the client.
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write(`${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '8' } } })}\n`);
    open.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const config = localKubeConfig(server);
  const close = () => {
    for (const response of open) response.destroy();
    server.close();
  };
  return { config, watches, close };
}

test('a watch asks for timeoutSeconds and is dropped after that many seconds plus 30 s of silence, then restarted', async (t) => {
  const watchdogs: { ms: number; fire: () => void }[] = [];
  const real = globalThis.setTimeout;
  t.mock.method(globalThis, 'setTimeout', (callback: () => void, ms?: number) => {
    // The loop's timers of a second or more: its watchdog (the backoff here is far shorter). Still set for real:
    // the loop clears each when it re-arms, and 72 s is past the end of the test.
    if ((new Error().stack?.includes('list-watch.ts') ?? false) && ms !== undefined && ms >= 1000) watchdogs.push({ ms, fire: callback });
    return real(callback, ms);
  });
  const { config, watches, close } = await silentServer();
  let restarts = 0;
  const loop = new ListWatch({
    name: 'things', config, list: async () => ({ items: [], resourceVersion: '7' }), keep: keepObject, watchPath: '/api/v1/things',
    onChange: () => {}, onRestart: () => restarts++, logger: createLogger('silent'), backoff: { initialMs: 2, maxMs: 4 }, watchTimeoutSeconds: 42,
  });
  loop.start();
  try {
    // Armed when the watch opens and again by the bookmark, which shows the stream is being read.
    await waitFor(() => watchdogs.length >= 2, { description: 'the watchdog re-armed by the bookmark' });
    assert.deepEqual(watchdogs.map((w) => w.ms), [72_000, 72_000], '42 s plus the 30 s grace, in ms');
    watchdogs[1]?.fire();
    await waitFor(() => watches.length >= 2 && restarts >= 1, { description: 'the silent watch dropped and restarted' });
    assert.equal(watches[0]?.searchParams.get('timeoutSeconds'), '42');
    assert.equal(watches[0]?.searchParams.get('resourceVersion'), '7');
    assert.equal(watches[1]?.searchParams.get('resourceVersion'), '8', 'resumed from the bookmark');
  } finally {
    await loop.stop();
    close();
  }
});

test('without a configured timeout a watch asks for 60 to 75 s, spread so that replicas do not renew together: the bound on noticing a revoked right', async () => {
  const { config, watches, close } = await silentServer();
  const loop = new ListWatch({
    name: 'things', config, list: async () => ({ items: [], resourceVersion: '1' }), keep: keepObject, watchPath: '/api/v1/things',
    onChange: () => {}, logger: createLogger('silent'),
  });
  loop.start();
  try {
    await waitFor(() => watches.length >= 1, { description: 'the watch' });
    const seconds = Number(watches[0]?.searchParams.get('timeoutSeconds'));
    assert.ok(Number.isInteger(seconds) && seconds >= 60 && seconds <= 75, `${seconds}`);
  } finally {
    await loop.stop();
    close();
  }
});
