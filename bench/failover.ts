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
import { createNamespaces, createSlices, ENDPOINTS, watchSlices, type Path } from './reflected-slices.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { progress, round, sized } from './stats.ts';

const COUNTS = (process.env.BENCH_FAILOVER_SLICES ?? (sized(0, 1) === 1 ? '20,40' : '2000,20000')).split(',').map(Number);
const IN_FLIGHT = 8;
const CONNECTION = '/apis/networking.liqo.io/v1beta1/namespaces/liqo-tenant-cluster3/connections/cluster3/status';
const TIMEOUT = { timeoutMs: 30 * 60_000, intervalMs: 20 } as const;

const bench = await startBench();
let stopWatch: (() => void) | undefined;
try {
  const product = await bench.startProduct({ keep: ['reconcile pass done'], controller: true });
  await bench.register('shortcut-webhook', `https://${bench.webhook.host}:${product.port}/mutate/endpointslices`);
  await createNamespaces(bench.admin);
  const client = rawClient(bench.cp, IN_FLIGHT);

  // Every stored version the watch sees, checked; the path of each slice as last seen.
  const slices = await watchSlices(bench.admin);
  const { counts, violations } = slices;
  stopWatch = slices.stop;

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
    await createSlices(client, created, total, IN_FLIGHT);
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
  console.log(JSON.stringify({ endpoints: ENDPOINTS, fccs: fccs.items.length, runs: rows, versionsChecked: slices.versions(), violations: violations.length }));
} finally {
  stopWatch?.();
  await bench.close();
}
