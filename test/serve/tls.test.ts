// Certificate rotation without restart, including the symlink swap of Kubernetes Secret volumes.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { buildWebhookApp } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { CertificateWatcher, loadTlsMaterial } from '../../src/tls.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { makeCerts } from '../support/certs.ts';
import { scratchDir } from '../support/scratch.ts';
import { secretVolume, servedFingerprint } from '../support/secret-volume.ts';
import { waitFor } from '../support/wait-for.ts';

test('a Secret volume symlink swap rotates the served certificate without restart', async () => {
  const first = makeCerts();
  const second = makeCerts();
  const dir = scratchDir('shortcut-secret-');
  secretVolume(dir, first, 'v1');
  symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
  symlinkSync('..data/tls.key', join(dir, 'tls.key'));
  const logger = createLogger('silent');
  const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
  let app: ReturnType<typeof buildWebhookApp> | undefined;
  const watcher = new CertificateWatcher({ files, logger, pollIntervalMs: 50,
    onReload: (material) => app?.server.setSecureContext({ cert: material.cert, key: material.key }) });
  const tls = await watcher.start();
  app = buildWebhookApp({ view: new SnapshotStore(), metrics: new Metrics(), logger, clusterId: undefined, tls });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.addresses()[0];
  const port = typeof address === 'object' ? address.port : 0;
  try {
    const before = await servedFingerprint(port, first.ca);
    assert.equal(before, new X509Certificate(first.cert).fingerprint256);
    secretVolume(dir, second, 'v2');
    const expected = new X509Certificate(second.cert).fingerprint256;
    await waitFor(async () => (await servedFingerprint(port, second.ca)) === expected, { description: 'the new certificate is served' });
  } finally {
    watcher.stop();
    await app.close();
  }
});

test('a half-written pair is never loaded: the old pair stays until the key matches', async () => {
  const first = makeCerts();
  const second = makeCerts();
  const dir = scratchDir('shortcut-pair-');
  const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
  copyFileSync(first.certFile, files.cert);
  copyFileSync(first.keyFile, files.key);
  const logs: string[] = [];
  const logger = createLogger('info', new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done(); } }));
  const reloads: string[] = [];
  const watcher = new CertificateWatcher({ files, logger, pollIntervalMs: 60_000, onReload: (m) => reloads.push(m.subject) });
  await watcher.start();
  try {
    copyFileSync(second.certFile, files.cert);
    await watcher.check();
    assert.deepEqual(reloads, []);
    assert.ok(watcher.current()?.cert.equals(first.cert));
    assert.ok(logs.some((line) => line.includes('does not match')));
    copyFileSync(second.keyFile, files.key);
    await watcher.check();
    assert.equal(reloads.length, 1);
    assert.ok(watcher.current()?.cert.equals(second.cert));
  } finally {
    watcher.stop();
  }
});

test('unreadable or garbage certificate files fail the first load with a message naming the file', async () => {
  const dir = scratchDir('shortcut-bad-');
  const certs = makeCerts();
  writeFileSync(join(dir, 'tls.crt'), 'not a certificate');
  await assert.rejects(loadTlsMaterial({ cert: join(dir, 'tls.crt'), key: certs.keyFile }), /tls\.crt is not a PEM certificate/);
  await assert.rejects(loadTlsMaterial({ cert: join(dir, 'missing.crt'), key: certs.keyFile }), /missing\.crt/);
  await assert.rejects(loadTlsMaterial({ cert: certs.certFile, key: certs.certFile }), /not a PEM private key/);
});
