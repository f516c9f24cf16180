// End to end, the running `shortcut-webhook serve` process rotates its serving certificate when the kubelet swaps a
// Secret volume (SPEC §4: "reloaded without restart ... including Kubernetes' symlink swap of Secret volumes"), stays
// ready while doing so, and keeps answering reviews. test/serve/tls.test.ts checks the CertificateWatcher alone; this
// checks that `serve` wires it to the listening server.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { fccObject, reviewObject, sliceObject } from '../support/builders.ts';
import { makeCerts, type TestCerts } from '../support/certs.ts';
import { post1 } from '../support/https-client.ts';
import { startServer, type RunningServer } from '../support/process.ts';
import { killServer, logRecords, opsGet } from '../support/serve-cluster.ts';
import { secretVolume, servedFingerprint } from '../support/secret-volume.ts';
import { waitFor } from '../support/wait-for.ts';

const fingerprint = (certs: TestCerts) => new X509Certificate(certs.cert).fingerprint256;

test('serve rotates its certificate on a Secret volume symlink swap, twice, staying ready and answering reviews', async () => {
  // Three CAs, and a subject of its own for each pair, so that neither a fingerprint nor a log line can be confused.
  const pairs = [makeCerts(undefined, 'first'), makeCerts(undefined, 'second'), makeCerts(undefined, 'third')] as const;
  const [first, second, third] = pairs;
  const cas = pairs.map((p) => p.ca);
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-serve-tls-'));
  const volume = join(dir, 'tls');
  mkdirSync(volume);
  secretVolume(volume, first, 'v1');
  symlinkSync('..data/tls.crt', join(volume, 'tls.crt'));
  symlinkSync('..data/tls.key', join(volume, 'tls.key'));
  const shortcuts = join(dir, 'fcc.yaml');
  writeFileSync(shortcuts, stringify(fccObject()));

  let server: RunningServer | undefined;
  try {
    server = await startServer(['--tls-cert', join(volume, 'tls.crt'), '--tls-key', join(volume, 'tls.key'),
      '--shortcuts', shortcuts, '--cluster-id', 'cluster2']);
    const running = server;
    const webhook = `https://localhost:${running.webhookPort}`;
    const readyz: number[] = [];
    const review = async (ca: Buffer, uid: string) => {
      const answer = await post1(webhook, ca, JSON.stringify(reviewObject(sliceObject(), { uid })));
      assert.equal(answer.status, 200);
      const response = JSON.parse(answer.body).response as { uid: string; patchType?: string };
      assert.equal(response.uid, uid);
      assert.equal(response.patchType, 'JSONPatch', 'the review is answered with the rewrite');
    };
    /** Polls new connections until `expected` is served, checking /readyz on every round. */
    const rotatedTo = (expected: TestCerts, what: string) => waitFor(async () => {
      readyz.push((await opsGet(running, '/readyz')).status);
      return (await servedFingerprint(running.webhookPort, cas)) === fingerprint(expected);
    }, { timeoutMs: 20_000, intervalMs: 50, description: what });

    assert.equal(await servedFingerprint(running.webhookPort, cas), fingerprint(first));
    await review(first.ca, 'before');

    secretVolume(volume, second, 'v2', 'v1');
    await rotatedTo(second, 'the second certificate is served after the first swap');
    // Only the new CA is trusted now: the whole chain is the new one, not just the leaf.
    await review(second.ca, 'after-first-swap');
    await assert.rejects(post1(webhook, first.ca, '{}'), /certificate|self.signed|verify/i);

    // The watch must survive its first swap: the folder it watched through ..data is gone now.
    secretVolume(volume, third, 'v3', 'v2');
    await rotatedTo(third, 'the third certificate is served after the second swap');
    await review(third.ca, 'after-second-swap');

    readyz.push((await opsGet(running, '/readyz')).status);
    assert.ok(readyz.length >= 3 && readyz.every((status) => status === 200), `readyz during rotation: ${readyz.join(',')}`);
    const reloads = logRecords(running).filter((r) => r.msg === 'serving certificate reloaded').map((r) => String(r['subject']));
    assert.deepEqual(reloads, ['CN=shortcut-webhook.second.svc', 'CN=shortcut-webhook.third.svc'], running.lines.join('\n'));
    assert.equal(running.child.exitCode, null, 'the same process throughout: no restart');
  } finally {
    await killServer(server);
    for (const path of [dir, ...pairs.map((p) => p.dir)]) rmSync(path, { recursive: true, force: true });
  }
});
