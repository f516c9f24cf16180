// A port that is taken stops serve with exit 1 and a log line that names the flag to change.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject } from '../support/builders.ts';
import { makeCerts } from '../support/certs.ts';
import { scratchDir } from '../support/scratch.ts';

const bin = new URL('../../bin/shortcut-webhook.js', import.meta.url).pathname;
const certs = makeCerts();
const shortcuts = join(scratchDir('shortcut-busy-'), 'fcc.yaml');
writeFileSync(shortcuts, stringify(fccObject()));

async function occupied(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return { server, port: address.port };
}

for (const flag of ['--ops-port', '--port'] as const) {
  test(`a busy ${flag} is exit 1 and the log names ${flag}`, async () => {
    const { server, port } = await occupied();
    try {
      const ports = flag === '--port' ? ['--port', String(port), '--ops-port', '0'] : ['--port', '0', '--ops-port', String(port)];
      // spawnSync blocks this process, but the occupying socket needs no event loop to refuse the bind.
      const result = spawnSync(process.execPath, [bin, 'serve', '--host', '127.0.0.1', ...ports, '--tls-cert', certs.certFile,
        '--tls-key', certs.keyFile, '--shortcuts', shortcuts], { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '' } });
      assert.equal(result.status, 1, result.stdout + result.stderr);
      const line = result.stdout.split('\n').find((l) => l.includes('"msg":"cannot listen"'));
      assert.ok(line, result.stdout);
      assert.equal((JSON.parse(line) as { hint?: string }).hint, `the port is in use: choose another with ${flag}`);
    } finally {
      server.close();
    }
  });
}
