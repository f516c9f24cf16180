// Section "failover": the time a user feels when a direct network goes down, end to end on the real API server
// (bench/control-plane.ts). N reflected slices of 20 endpoints (half of each one's addresses in LIQO.md's shortcut)
// are stored through the product's webhook, so rewritten onto the shortcut. Then the leaf's Liqo Connection for the
// shortcut's peer gets status.value Error (what Liqo's gateway writes about 10 s after the last ping): measured is the
// time from that status write until the last of the N slices is stored back on the hub path, and again from
// status.value Connected until the last one is back on the shortcut. N is 2,000, then 20,000 (the same slices and
// 18,000 more; BENCH_FAILOVER_SLICES=a,b,... for others).
// A watch on the slices checks every version stored in between: never a half-written slice (the shortcut's
// addresses of one slice all on the shortcut or all on the hub path), never a flag without its originals (nor
// originals without the flag), no flag left on a slice on the hub path. Any of these fails the section. Prints one
// JSON line.
import { FCC_PATH, rawClient, startBench } from './control-plane.ts';
import { sliceObject } from '../test/support/builders.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { progress, round, sized } from './stats.ts';

const COUNTS = (process.env.BENCH_FAILOVER_SLICES ?? (sized(0, 1) === 1 ? '20,40' : '2000,20000')).split(',').map(Number);
const ENDPOINTS = 20;
const NAMESPACES = 20;
const IN_FLIGHT = 8;
const FLAG = 'liqo.io/shortcut-addresses';
const ORIGINALS = 'liqo.io/shortcut-original-addresses';
const CONNECTION = '/apis/networking.liqo.io/v1beta1/namespaces/liqo-tenant-cluster3/connections/cluster3/status';
const SELECTOR = 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io';
const TIMEOUT = { timeoutMs: 30 * 60_000, intervalMs: 20 } as const;

type Path = 'shortcut' | 'hub';
interface Slice { metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> }; endpoints?: { addresses?: string[] }[] }

/** Endpoint k of slice i: an address of its own (modulo 2^16), in the shortcut's source for even k, hub-only for odd k. */
const hubAddress = (i: number, k: number) => {
  const index = i * ENDPOINTS + k;
  return `${k % 2 === 0 ? '10.63' : '10.200'}.${(index >> 8) & 255}.${index & 255}`;
};

/** Which path a stored slice is on, or what is wrong with it. */
function pathOf(slice: Slice): Path | string {
  const addresses = (slice.endpoints ?? []).map((endpoint) => endpoint.addresses?.[0] ?? '');
  const inShortcut = addresses.filter((address, k) => k % 2 === 0 && address.startsWith('10.61.')).length;
  const onHub = addresses.filter((address, k) => k % 2 === 0 && address.startsWith('10.63.')).length;
  const annotations = slice.metadata?.annotations ?? {};
  const flag = annotations[FLAG];
  const originals = annotations[ORIGINALS];
  if (inShortcut + onHub !== ENDPOINTS / 2) return `an address in neither space: ${addresses.join(',')}`;
  if (inShortcut > 0 && onHub > 0) return `half-written: ${inShortcut} addresses on the shortcut, ${onHub} on the hub path`;
  if ((flag === undefined) !== (originals === undefined)) return `flag ${flag === undefined ? 'absent' : 'present'}, originals ${originals === undefined ? 'absent' : 'present'}`;
  if (onHub > 0) return flag === undefined ? 'hub' : `a flag left on a slice on the hub path: ${flag}`;
  const map = JSON.parse(originals ?? '{}') as Record<string, string>;
  const unmapped = addresses.filter((address, k) => k % 2 === 0 && map[address] !== address.replace(/^10\.61\./, '10.63.'));
  if (unmapped.length > 0) return `originals do not name the hub address of ${unmapped.join(',')}`;
  return 'shortcut';
}

const bench = await startBench();
let stopWatch: (() => void) | undefined;
try {
  const product = await bench.startProduct({ keep: ['reconcile pass done'], controller: true });
  await bench.register('shortcut-webhook', `https://${bench.webhook.host}:${product.port}/mutate/endpointslices`);
  for (let n = 0; n < NAMESPACES; n++) {
    await bench.admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
  }
  const client = rawClient(bench.cp, IN_FLIGHT);

  // Every stored version the watch sees, checked; the path of each slice as last seen.
  const paths = new Map<string, Path>();
  const counts: Record<Path, number> = { shortcut: 0, hub: 0 };
  const violations: string[] = [];
  let events = 0;
  const list = await bench.admin.get<{ metadata: { resourceVersion: string } }>(`/apis/discovery.k8s.io/v1/endpointslices?labelSelector=${SELECTOR}`);
  const watch = await bench.admin.watch(`/apis/discovery.k8s.io/v1/endpointslices?labelSelector=${SELECTOR}`, list.metadata.resourceVersion, (event) => {
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return;
    events++;
    const slice = event.object as Slice;
    const key = `${slice.metadata?.namespace}/${slice.metadata?.name}`;
    const path = pathOf(slice);
    if (path !== 'shortcut' && path !== 'hub') {
      if (violations.length < 20) violations.push(`${key}: ${path}`);
      return;
    }
    const before = paths.get(key);
    if (before !== undefined) counts[before]--;
    paths.set(key, path);
    counts[path]++;
  });
  stopWatch = watch.stop;

  const setConnection = (value: 'Connected' | 'Error') =>
    bench.admin.ok('PATCH', CONNECTION, { status: { value } }, { contentType: 'application/merge-patch+json' });
  /** Seconds from the Connection's status write until all `total` slices are on `path`. */
  const flip = async (value: 'Connected' | 'Error', path: Path, total: number) => {
    const started = performance.now();
    await setConnection(value);
    await waitFor(() => {
      if (violations.length > 0) throw new Error(`failover: ${violations.join('\n')}`);
      return counts[path] === total;
    }, { ...TIMEOUT, description: `all ${total} slices on the ${path} path` });
    return (performance.now() - started) / 1000;
  };

  const rows: Record<string, unknown>[] = [];
  let created = 0;
  for (const total of COUNTS) {
    progress(`failover: storing slices ${created} to ${total - 1} through the webhook`);
    let next = created;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < total) {
        const i = next++;
        const addresses = Array.from({ length: ENDPOINTS }, (_, k) => [hubAddress(i, k)]);
        const slice = sliceObject({ name: `web-${i}`, namespace: `ns-${i % NAMESPACES}`, destination: 'cluster2', addresses });
        delete (slice.metadata as Record<string, unknown>).resourceVersion;
        const answer = await client.send('POST', `/apis/discovery.k8s.io/v1/namespaces/ns-${i % NAMESPACES}/endpointslices`, JSON.stringify(slice), 'application/json');
        if (answer.status >= 300) throw new Error(`create web-${i}: HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
      }
    }));
    created = total;
    await waitFor(() => counts.shortcut === total, { ...TIMEOUT, description: `all ${total} slices stored on the shortcut` });
    progress(`failover: ${total} slices, the Connection goes Error`);
    const downSeconds = await flip('Error', 'hub', total);
    progress(`failover: ${total} slices on the hub path after ${round(downSeconds, 2)} s; the Connection goes Connected`);
    const upSeconds = await flip('Connected', 'shortcut', total);
    progress(`failover: ${total} slices back on the shortcut after ${round(upSeconds, 2)} s`);
    rows.push({ slices: total, downSeconds: round(downSeconds, 2), downPerSecond: round(total / downSeconds, 1),
      upSeconds: round(upSeconds, 2), upPerSecond: round(total / upSeconds, 1) });
  }
  client.close();
  const fccs = await bench.admin.get<{ items: unknown[] }>(FCC_PATH);
  console.log(JSON.stringify({ endpoints: ENDPOINTS, fccs: fccs.items.length, runs: rows, versionsChecked: events, violations: violations.length }));
} finally {
  stopWatch?.();
  await bench.close();
}
