// A two-minute local demo of cluster mode, no real cluster needed:
//
//   npx tsx examples/demo.ts
//   npx tsx examples/demo.ts datapath       (npm run demo -- datapath) the packets: demo-datapath.ts
//
// It starts two test API servers of test/support (the real list/watch/patch wire protocol): leaf cluster2, with
// reflected slices, its Liqo Configurations and its Connection to cluster3; and hub cluster1, with the FCC and, as a
// stock Liqo hub keeps them, the IP its IPAM allocated to a cluster3 pod and its Configuration for cluster3. Then it
// runs the real `shortcut-webhook serve` on the leaf, reading the hub with --shortcuts-kubeconfig. The leaf's API
// server calls that webhook over HTTPS on every slice write, as kube-apiserver would. The demo takes the shortcut
// down and up and the leaf's tunnel down and up, and prints the stored slices after each step: slice `web-1`
// follows the FCC path (a hub that keeps pod addresses), slice `stock` the stock-Liqo path (an IPAM-allocated
// address resolved through the hub's IP); the controller converges both.
import { spawn } from 'node:child_process';
import { stringify } from 'yaml';
import { configurationObject, connectionObject, fccObject, hubIpObject, sliceObject } from '../test/support/builders.ts';
import { makeCerts } from '../test/support/certs.ts';
import { LIQO_IPS, startKubeApiServer, type KubeObject } from '../test/support/kube-api-server.ts';
import { httpsWebhookHook } from '../test/support/kube-webhook.ts';
import { waitFor } from '../test/support/wait-for.ts';

// `npm run demo -- datapath`: the packets instead (root; see demo-datapath.ts).
if (process.argv[2] === 'datapath') {
  await import('./demo-datapath.ts');
  process.exit(process.exitCode ?? 0);
}

const certs = makeCerts();
let webhookPort: number | undefined;
const api = await startKubeApiServer({
  mutate: httpsWebhookHook(() => (webhookPort === undefined ? undefined : { url: `https://localhost:${webhookPort}`, ca: certs.ca })),
});
const FCC = { apiVersion: 'networking.liqo.io/v1beta1', kind: 'ForeignClusterConnection', namespace: 'liqo', name: 'cluster2-cluster3' };
const hub = await startKubeApiServer();
hub.registerResource(LIQO_IPS);
await hub.create(fccObject());
await hub.create(configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.63.0.0/16' }));
await hub.create(hubIpObject({ pod: 'web-0', ip: '10.63.0.151', allocated: '10.70.0.12' }));
await api.create(configurationObject({ peer: 'cluster1' }));
await api.create(configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16', remoteExternalView: '10.72.0.0/16' }));
await api.create(connectionObject('cluster3', 'Connected'));
await api.create(sliceObject({ name: 'web-1', addresses: [['10.63.0.151'], ['10.200.0.196']] }));
await api.create(sliceObject({ name: 'stock', addresses: [['10.71.0.12']] }));
await api.create(sliceObject({ name: 'web-2', addresses: [['10.63.255.254']] }));
await api.create(sliceObject({ name: 'plain', managedBy: 'endpointslice-controller.k8s.io', addresses: [['10.63.0.7']] }));

/** The server's log lines since the last table: they describe the change that table shows, so they go under it. */
const logSinceLastTable: string[] = [];

function show(title: string): void {
  console.log(`\n=== ${title}`);
  for (const slice of api.list({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' })) {
    const addresses = (slice.endpoints as { addresses: string[] }[]).map((e) => e.addresses.join(',')).join(' ');
    const flag = slice.metadata?.annotations?.['liqo.io/shortcut-addresses'] ?? '-';
    console.log(`${String(slice.metadata?.name).padEnd(8)} addresses: ${addresses.padEnd(28)} flagged: ${flag}`);
  }
  for (const line of logSinceLastTable.splice(0)) console.log(line);
}

show('stored slices before the webhook runs (hub addresses)');
const child = spawn(process.execPath, [new URL('../bin/shortcut-webhook.js', import.meta.url).pathname, 'serve',
  '--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--tls-cert', certs.certFile, '--tls-key', certs.keyFile,
  '--kubeconfig', await api.kubeconfig(), '--shortcuts-kubeconfig', await hub.kubeconfig(), '--resync-interval', '0', '--cluster-id', 'cluster2'],
{ stdio: ['ignore', 'pipe', 'inherit'] });
let output = '';
// The server's JSON log, shortened to what tells the story.
child.stdout.on('data', (chunk: Buffer) => {
  output += chunk.toString();
  for (const line of chunk.toString().split('\n')) {
    if (!/shortcut (usable|unusable|gone)|direct network|slice patched|stored slice patched|became the controller leader/.test(line)) continue;
    const entry = JSON.parse(line) as { msg: string; fcc?: string; peer?: string; reason?: string; slice?: string; changes?: string[] };
    logSinceLastTable.push(`  webhook log: ${entry.msg}${entry.fcc ? ` ${entry.fcc}` : ''}${entry.peer ? ` ${entry.peer}` : ''}${entry.reason ? ` (${entry.reason})` : ''}${entry.slice ? ` ${entry.slice}` : ''}${entry.changes ? ` ${entry.changes.join(' ')}` : ''}`);
  }
});
const serving = await waitFor(() => /"webhook":\[\{"address":"[^"]+","family":"\w+","port":(\d+)/.exec(output), { timeoutMs: 20_000 });
webhookPort = Number(serving[1]);
// A step is over once the controller logged each patch it made, so no line of it turns up under the next table.
const patched = (...names: string[]) => names.every((name) => logSinceLastTable.some((line) => line.includes(`stored slice patched demo/${name}`)));
const addressesOf = (name: string) => JSON.stringify((api.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name })?.endpoints as { addresses: string[] }[]).map((e) => e.addresses));

await waitFor(() => addressesOf('web-1') === '[["10.61.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.61.255.254"]]'
  && addressesOf('stock') === '[["10.61.0.151"]]' && patched('web-1', 'web-2', 'stock'), { timeoutMs: 15_000 });
show('after start-up: the controller moved cluster3 pods to the shortcut prefix 10.61/16 (stock: resolved through the hub\'s IP demo/web-0)');

const setConnected = async (isConnected: boolean) => {
  const fcc = hub.get(FCC) as KubeObject;
  await hub.updateStatus({ ...fcc, status: { ...(fcc.status as object), isConnected, phase: isConnected ? 'Connected' : 'Failed' } });
};
await setConnected(false);
await waitFor(() => addressesOf('web-1') === '[["10.63.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.63.255.254"]]'
  && patched('web-1', 'web-2'), { timeoutMs: 15_000 });
show('shortcut down (isConnected: false): hub addresses restored');

await setConnected(true);
await waitFor(() => addressesOf('web-1') === '[["10.61.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.61.255.254"]]'
  && patched('web-1', 'web-2'), { timeoutMs: 15_000 });
show('shortcut up again');

await api.updateStatus(connectionObject('cluster3', 'Error'));
await waitFor(() => addressesOf('web-1') === '[["10.63.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.63.255.254"]]'
  && addressesOf('stock') === '[["10.71.0.12"]]' && patched('web-1', 'web-2', 'stock'), { timeoutMs: 15_000 });
show('the leaf\'s tunnel to cluster3 down (Connection Error): both paths restore the hub addresses');
await api.updateStatus(connectionObject('cluster3', 'Connected'));
await waitFor(() => addressesOf('web-1') === '[["10.61.0.151"],["10.200.0.196"]]' && addressesOf('web-2') === '[["10.61.255.254"]]'
  && addressesOf('stock') === '[["10.61.0.151"]]' && patched('web-1', 'web-2', 'stock'), { timeoutMs: 15_000 });
show('tunnel up again');

await api.create(sliceObject({ name: 'web-3', addresses: [['10.63.1.2']] }));
show('a new slice written by Liqo is rewritten on admission');
console.log(`\nthe stored slice web-1 now reads:\n${stringify(api.get({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', namespace: 'demo', name: 'web-1' }))}`);

child.kill('SIGTERM');
await new Promise((resolve) => child.on('exit', resolve));
await api.close();
await hub.close();
