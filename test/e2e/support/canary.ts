// Knowing when kube-apiserver acts on a changed MutatingWebhookConfiguration. The API server reads webhook
// configurations through an informer, so a write to one takes effect a little later, and nothing in the API says
// when. A canary tells: a second configuration, updated after the one under test, points a webhook at this test
// process under a new path each time; once a dry-run ConfigMap write reaches that path, the API server has seen
// the canary's update and, the informer delivering events in order, every configuration change before it.
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../../support/wait-for.ts';
import type { TestCerts } from '../../support/certs.ts';
import type { KubeClient } from './kube-client.ts';

const NAME = 'e2e-canary';
const NAMESPACE = 'canary';

/** How the API server called the canary: the same client code calls every webhook. */
export interface CanaryCall {
  readonly httpVersion: string;
  readonly path: string;
  readonly query: string;
  readonly contentType: string | undefined;
}

export interface Canary {
  readonly calls: readonly CanaryCall[];
  /** Resolves once the API server calls webhooks as configured by every configuration write made before this call. */
  configurationsSeen(): Promise<void>;
  close(): Promise<void>;
}

export async function startCanary(admin: KubeClient, certs: TestCerts): Promise<Canary> {
  const seen = new Set<string>();
  const calls: CanaryCall[] = [];
  // HTTP/2 and HTTP/1.1, as the webhook serves: whichever the API server picks is recorded.
  const server: Http2SecureServer = createSecureServer({ cert: certs.cert, key: certs.key, allowHTTP1: true }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'https://localhost');
      seen.add(url.pathname);
      calls.push({ httpVersion: request.httpVersion, path: url.pathname, query: url.search, contentType: request.headers['content-type'] });
      const review = JSON.parse(Buffer.concat(chunks).toString()) as { request?: { uid?: string } };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
        response: { uid: review.request?.uid ?? '', allowed: true } }));
    });
  });
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  let round = 0;
  const path = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
  const configuration = (n: number) => ({
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: NAME },
    webhooks: [{
      name: 'canary.e2e.shortcut-webhook.test', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Ignore',
      timeoutSeconds: 5, clientConfig: { url: `https://127.0.0.1:${port}/round-${n}`, caBundle: certs.ca.toString('base64') },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], scope: 'Namespaced' }],
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE } },
    }],
  });
  return {
    calls,
    async configurationsSeen() {
      const n = ++round;
      await admin.apply(`${path}/${NAME}`, configuration(n), 'e2e-canary', true);
      await waitFor(async () => {
        await admin.ok('POST', `/api/v1/namespaces/${NAMESPACE}/configmaps?dryRun=All`,
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `probe-${n}` } });
        return seen.has(`/round-${n}`);
      }, { timeoutMs: 20_000, intervalMs: 20, description: `the API server calls the canary webhook of round ${n}` });
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.destroy();
    }),
  };
}
