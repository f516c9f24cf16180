// A two-minute local demo of cluster mode, no real cluster needed:
//
//   npx tsx examples/demo.ts
//
// It starts the test API server of test/support (the real list/watch/patch wire protocol), seeds the FCC of
// LIQO.md and three reflected slices on leaf cluster2, then runs the real `shortcut-webhook serve` against it. The
// API server calls that webhook over HTTPS on every slice write, as kube-apiserver would. The demo then takes the
// shortcut down and up again and prints the stored slices after each step: the controller converges them.
import { spawn } from 'node:child_process';
import { stringify } from 'yaml';
import { fccObject, sliceObject } from '../test/support/builders.ts';
import { makeCerts } from '../test/support/certs.ts';
import { startKubeApiServer, type KubeObject } from '../test/support/kube-api-server.ts';
import { httpsWebhookHook } from '../test/support/kube-webhook.ts';
import { waitFor } from '../test/support/wait-for.ts';

const certs = makeCerts();
let webhookPort: number | undefined;
const api = await startKubeApiServer({
  mutate: httpsWebhookHook(() => (webhookPort === undefined ? undefined : { url: `https://localhost:${webhookPort}`, ca: certs.ca })),
});
const FCC = { apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' };
await api.create(fccObject());
await api.create(sliceObject({ name: 'web-1', addresses: [['10.63.0.151'], ['10.200.0.196']] }));
await api.create(sliceObject({ name: 'web-2', addresses: [['10.63.255.254']] }));
await api.create(sliceObject({ name: 'plain', managedBy: 'endpointslice-controller.k8s.io', addresses: [['10.63.0.7']] }));

function show(title: string): void {
  console.log(`\n=== ${title}`);
  for (const slice of api.list({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' })) {
    const addresses = (slice.endpoints as { addresses: string[] }[]).map((e) => e.addresses.join(',')).join(' ');
    const flag = slice.metadata?.annotations?.['liqo.io/shortcut-addresses'] ?? '-';
    console.log(`${String(slice.metadata?.name).padEnd(8)} addresses: ${addresses.padEnd(28)} flagged: ${flag}`);
  }
}

show('stored slices before the webhook runs (hub addresses)');
const child = spawn(process.execPath, [new URL('../bin/shortcut-webhook.js', import.meta.url).pathname, 'serve',
  '--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--tls-cert', certs.certFile, '--tls-key', certs.keyFile,
  '--kubeconfig', await api.kubeconfig(), '--resync-interval', '0', '--cluster-id', 'cluster2'], { stdio: ['ignore', 'pipe', 'inherit'] });
let output = '';
// The server's JSON log, shortened to what tells the story.
child.stdout.on('data', (chunk: Buffer) => {
  output += chunk.toString();
  for (const line of chunk.toString().split('\n')) {
    if (!/shortcut (usable|unusable|gone)|slice patched|stored slice patched|became the controller leader/.test(line)) continue;
    const entry = JSON.parse(line) as { msg: string; fcc?: string; reason?: string; slice?: string; changes?: string[] };
    console.log(`  webhook log: ${entry.msg}${entry.fcc ? ` ${entry.fcc}` : ''}${entry.reason ? ` (${entry.reason})` : ''}${entry.slice ? ` ${entry.slice}` : ''}${entry.changes ? ` ${entry.changes.join(' ')}` : ''}`);
  }
});
const serving = await waitFor(() => /"webhook":\[\{"address":"[^"]+","family":"\w+","port":(\d+)/.exec(output), { timeoutMs: 20_000 });
webhookPort = Number(serving[1]);
const addressesOf = (name: string) => JSON.stringify((api.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name })?.endpoints as { addresses: string[] }[]).map((e) => e.addresses));

await waitFor(() => addressesOf('web-1') === '[["10.61.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.61.255.254"]]', { timeoutMs: 15_000 });
show('after start-up: the controller moved cluster3 pods to the shortcut prefix 10.61/16');

const setConnected = async (isConnected: boolean) => {
  const fcc = api.get(FCC) as KubeObject;
  await api.updateStatus({ ...fcc, status: { ...(fcc.status as object), isConnected, phase: isConnected ? 'Connected' : 'Failed' } });
};
await setConnected(false);
await waitFor(() => addressesOf('web-1') === '[["10.63.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.63.255.254"]]', { timeoutMs: 15_000 });
show('shortcut down (isConnected: false): hub addresses restored');

await setConnected(true);
await waitFor(() => addressesOf('web-1') === '[["10.61.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.61.255.254"]]', { timeoutMs: 15_000 });
show('shortcut up again');

await api.create(sliceObject({ name: 'web-3', addresses: [['10.63.1.2']] }));
show('a new slice written by Liqo is rewritten on admission');
console.log(`\nthe stored slice web-1 now reads:\n${stringify(api.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name: 'web-1' }))}`);

child.kill('SIGTERM');
await new Promise((resolve) => child.on('exit', resolve));
await api.close();
