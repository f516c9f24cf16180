// The webhook and ops apps in-process on port 0, over real HTTPS with certificates made at test time.
import { Writable } from 'node:stream';
import { buildOpsApp, buildWebhookApp } from '../../src/app.ts';
import type { ForeignClusterConnection } from '../../src/core/fcc.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { loadTlsMaterial } from '../../src/tls.ts';
import type { AnsweredVersions } from '../../src/util/answered-versions.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { makeCerts, type TestCerts } from './certs.ts';

export interface Harness {
  readonly url: string;
  readonly opsUrl: string;
  readonly certs: TestCerts;
  readonly store: SnapshotStore;
  readonly metrics: Metrics;
  readonly logs: string[];
  close(): Promise<void>;
}

let shared: TestCerts | undefined;

export async function startHarness(options: {
  fccs?: readonly ForeignClusterConnection[]; clusterId?: string; synced?: boolean; answered?: AnsweredVersions;
} = {}): Promise<Harness> {
  const certs = shared ??= makeCerts();
  const logs: string[] = [];
  const sink = new Writable({ write(chunk, _encoding, done) { logs.push(String(chunk)); done(); } });
  const logger = createLogger('debug', sink);
  const store = new SnapshotStore();
  const metrics = new Metrics();
  metrics.trackView(store);
  if (options.synced !== false) store.publishFccs(options.fccs ?? []);
  const tls = await loadTlsMaterial({ cert: certs.certFile, key: certs.keyFile });
  const webhook = buildWebhookApp({ view: store, metrics, logger, clusterId: options.clusterId, tls, answered: options.answered });
  const ops = buildOpsApp({ view: store, metrics, logger, clusterId: options.clusterId,
    readiness: () => (store.isSynced() ? [] : ['shortcut view not synced yet']) });
  await webhook.listen({ host: '127.0.0.1', port: 0 });
  await ops.listen({ host: '127.0.0.1', port: 0 });
  const port = (app: { addresses(): (string | { port: number })[] }) => {
    const first = app.addresses()[0];
    return typeof first === 'object' ? first.port : 0;
  };
  return {
    url: `https://localhost:${port(webhook)}`,
    opsUrl: `http://127.0.0.1:${port(ops)}`,
    certs, store, metrics, logs,
    async close() {
      await webhook.close();
      await ops.close();
    },
  };
}
