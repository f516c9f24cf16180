// Section "scale": memory and convergence on the real API server (bench/control-plane.ts). BENCH_SCALE_SLICES
// reflected slices (20,000 unless told) of 20 endpoints each, half of every slice's addresses inside LIQO.md's
// shortcut, are created through the product's webhook (so they are stored rewritten); then the FCC goes down (the
// controller restores every slice) and up again (it rewrites every one). Measured:
//   - the product's RSS at rest (ready, its view synced, no slice stored), after the writes and after each full pass
//     (and its peak), run as the chart runs it;
//   - each pass's rate: slices written per second, from the FCC's status write to the pass's "reconcile pass done";
//   - the floor: the same slices JSON-patched by a plain client, the webhook registered, on the same API server right
//     after, at 1, 2, 4, 8, 12 and 16 requests in flight (cycling over the slices), in two rounds of BENCH_FLOOR_SECONDS
//     each (4 unless told), the second in the reverse order so that a drift of the machine's load falls on all alike;
//     each level's rate is its two rounds' total; then the floor itself: every slice patched once at the best level,
//     the same work as a pass over as long a time (the best of twelve short rounds reads high on a machine whose pace
//     drifts by a quarter from one round to the next, and a pass is not twelve chances);
//   - the product's CPU (user + system, /proc/<pid>/stat) per slice in each pass and in the floor (webhook only), and
//     from the two the controller's own CPU per slice (the pass's less the review's), against the review's; and the
//     plain client's own CPU per patch at the floor's level (this process, process.cpuUsage), what a client that only
//     patches spends where the controller also lists, plans and watches.
// Prints one JSON line.
import { cpuSeconds, FCC_PATH, rawClient, rss, startBench } from './control-plane.ts';
import { sliceObject } from '../test/support/builders.ts';
import { waitFor } from '../test/support/wait-for.ts';
import { progress, round, sized } from './stats.ts';

const SLICES = Number(process.env.BENCH_SCALE_SLICES ?? sized(20_000, 40));
const ENDPOINTS = 20;
const NAMESPACES = 20;
const IN_FLIGHT = 8;
const FLOOR_LEVELS = [1, 2, 4, 8, 12, 16] as const;
const FLOOR_SECONDS = Number(process.env.BENCH_FLOOR_SECONDS ?? sized(4, 0.3));
const FLOOR_ROUNDS = sized(2, 1);
const PASS_TIMEOUT = { timeoutMs: 30 * 60_000, intervalMs: 100 } as const;

const bench = await startBench();
try {
  const product = await bench.startProduct({ keep: ['reconcile pass done'], controller: true });
  const pid = product.child.pid;
  await bench.register('shortcut-webhook', `https://${bench.webhook.host}:${product.port}/mutate/endpointslices`);
  for (let n = 0; n < NAMESPACES; n++) {
    await bench.admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
  }
  const atRest = rss(pid);
  const client = rawClient(bench.cp, Math.max(IN_FLIGHT, ...FLOOR_LEVELS));
  const sliceOf = (i: number) => {
    // Endpoint k of slice i: an address of its own (modulo 2^16) in the shortcut's source (even k) or outside it.
    const addresses = Array.from({ length: ENDPOINTS }, (_, k) => {
      const index = i * ENDPOINTS + k;
      return [`${k % 2 === 0 ? '10.63' : '10.200'}.${(index >> 8) & 255}.${index & 255}`];
    });
    const slice = sliceObject({ name: `web-${i}`, namespace: `ns-${i % NAMESPACES}`, destination: 'cluster2', addresses });
    delete (slice.metadata as Record<string, unknown>).resourceVersion;
    return slice;
  };
  const pathOf = (i: number, name = true) => `/apis/discovery.k8s.io/v1/namespaces/ns-${i % NAMESPACES}/endpointslices${name ? `/web-${i}` : ''}`;
  /** Runs `write(i)` for every slice, `inFlight` at a time; the seconds it took. */
  const each = async (what: string, write: (i: number) => Promise<{ status: number; text: string }>, inFlight = IN_FLIGHT) => {
    const started = performance.now();
    let next = 0;
    let done = 0;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next < SLICES) {
        const i = next++;
        const answer = await write(i);
        if (answer.status >= 300) throw new Error(`${what} web-${i}: HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
        if (++done % 2000 === 0) progress(`scale: ${what} ${done}/${SLICES}`);
      }
    }));
    return (performance.now() - started) / 1000;
  };

  progress(`scale: creating ${SLICES} slices of ${ENDPOINTS} endpoints through the webhook`);
  const createSeconds = await each('created', (i) => client.send('POST', pathOf(i, false), JSON.stringify(sliceOf(i)), 'application/json'));
  const afterWrites = rss(pid);

  /** The FCC flips; the time until a pass that began after it reports, and that pass. */
  const pass = async (connected: boolean) => {
    const seen = product.records.length;
    const cpu = cpuSeconds(pid);
    const flipped = Date.now();
    await bench.setConnected(connected);
    const record = await waitFor(() => product.records.slice(seen).find((r) => Date.parse(String(r.time)) >= flipped && Number(r.patched) > 0),
      { ...PASS_TIMEOUT, description: `a pass after the FCC went ${connected ? 'up' : 'down'}` });
    return { seconds: (Date.parse(String(record.time)) - flipped) / 1000, record, rss: rss(pid), cpuMsPerSlice: round((cpuSeconds(pid) - cpu) * 1000 / SLICES, 3) };
  };
  // The first pass (the view's first sync) found every slice in step: nothing to compare.
  progress('scale: the FCC goes down, the controller restores every slice');
  const down = await pass(false);
  progress('scale: the FCC comes up, the controller rewrites every slice');
  const up = await pass(true);

  // The floor: a plain client patching the stored slices through the webhook, as fast as the API server goes at each
  // number of requests in flight. Each patch sets a label to a value of its own, so each one is a real write.
  const touch = (value: string) => JSON.stringify([{ op: 'add', path: '/metadata/labels/bench.liqo.io~1touched', value }]);
  let cursor = 0;
  /** Patches the slices in turn, `inFlight` at a time, for `seconds`; how many it patched. */
  const patchFor = async (tag: string, inFlight: number, seconds: number) => {
    const until = performance.now() + seconds * 1000;
    let patched = 0;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (performance.now() < until) {
        const i = cursor++ % SLICES;
        const answer = await client.send('PATCH', pathOf(i), touch(`${tag}-${cursor}`), 'application/json-patch+json');
        if (answer.status >= 300) throw new Error(`floor (${tag}) web-${i}: HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
        patched++;
      }
    }));
    return patched;
  };
  /** `work`'s result, its seconds, and the CPU seconds the product and this process (the plain client) spent meanwhile. */
  const measured = async <T>(work: () => Promise<T>) => {
    const productCpu = cpuSeconds(pid);
    const clientCpu = process.cpuUsage();
    const started = performance.now();
    const result = await work();
    const { user, system } = process.cpuUsage(clientCpu);
    return { result, seconds: (performance.now() - started) / 1000, productCpu: cpuSeconds(pid) - productCpu, clientCpu: (user + system) / 1e6 };
  };
  const levels = new Map(FLOOR_LEVELS.map((inFlight) => [inFlight, { patched: 0, seconds: 0, cpu: 0, clientCpu: 0 }]));
  for (let r = 0; r < FLOOR_ROUNDS; r++) {
    for (const inFlight of r % 2 === 0 ? FLOOR_LEVELS : [...FLOOR_LEVELS].reverse()) {
      const measuredRound = await measured(() => patchFor(String(inFlight), inFlight, FLOOR_SECONDS));
      const level = levels.get(inFlight);
      if (level !== undefined) {
        Object.assign(level, { patched: level.patched + measuredRound.result, seconds: level.seconds + measuredRound.seconds, cpu: level.cpu + measuredRound.productCpu,
          clientCpu: level.clientCpu + measuredRound.clientCpu });
      }
      progress(`scale: floor round ${r + 1}, ${inFlight} in flight: ${round(measuredRound.result / measuredRound.seconds, 1)} patches/s`);
    }
  }
  const floor = [...levels].map(([inFlight, { patched, seconds, cpu, clientCpu }]) =>
    ({ inFlight, perSecond: round(patched / seconds, 1), cpuMsPerSlice: round(cpu * 1000 / patched, 3), clientCpuMsPerPatch: round(clientCpu * 1000 / patched, 3) }));
  const best = floor.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  progress(`scale: the floor, every slice patched once at ${best.inFlight} in flight`);
  const swept = await measured(() => each('floor patched', (i) => client.send('PATCH', pathOf(i), touch(`sweep-${i}`), 'application/json-patch+json'), best.inFlight));
  const sweep = {
    inFlight: best.inFlight, seconds: round(swept.seconds, 2), perSecond: round(SLICES / swept.seconds, 1),
    cpuMsPerSlice: round(swept.productCpu * 1000 / SLICES, 3), clientCpuMsPerPatch: round(swept.clientCpu * 1000 / SLICES, 3),
  };
  // What skipping admission for the controller's own patches (matchConditions on its ServiceAccount) could give at
  // most: the same patches at the best level with no webhook registered.
  await bench.unregister('shortcut-webhook');
  const unhooked = await measured(() => patchFor('none', best.inFlight, FLOOR_SECONDS * FLOOR_ROUNDS));
  const noWebhookPerSecond = round(unhooked.result / unhooked.seconds, 1);
  client.close();
  const fccs = await bench.admin.get<{ items: unknown[] }>(FCC_PATH);
  const rate = (seconds: number) => round(SLICES / seconds, 1);
  // The pass's CPU is the controller's and the webhook's: each of its patches is reviewed by the same process. The
  // floor's CPU per patch is the review alone, so what is left is the controller's own cost of a slice.
  const controllerCpu = (cpuMsPerSlice: number) => round(Math.max(0, cpuMsPerSlice - sweep.cpuMsPerSlice), 3);
  const slowerPass = Math.min(rate(down.seconds), rate(up.seconds));
  console.log(JSON.stringify({
    slices: SLICES, endpoints: ENDPOINTS, fccs: fccs.items.length,
    nodeFlags: product.nodeFlags, nodeOptions: product.nodeOptions,
    createSeconds: round(createSeconds, 1), createPerSecond: rate(createSeconds),
    rssAtRestMB: round(atRest.rssMB, 1), rssAfterWritesMB: round(afterWrites.rssMB, 1),
    rssAfterDownMB: round(down.rss.rssMB, 1), rssAfterUpMB: round(up.rss.rssMB, 1), peakRssMB: round(up.rss.peakMB, 1),
    down: { seconds: round(down.seconds, 2), perSecond: rate(down.seconds), cpuMsPerSlice: down.cpuMsPerSlice, pass: down.record },
    up: { seconds: round(up.seconds, 2), perSecond: rate(up.seconds), cpuMsPerSlice: up.cpuMsPerSlice, pass: up.record },
    floor, floorInFlight: best.inFlight, bestRoundPerSecond: best.perSecond,
    floorSeconds: sweep.seconds, floorPerSecond: sweep.perSecond, floorCpuMsPerSlice: sweep.cpuMsPerSlice, floorClientCpuMsPerPatch: sweep.clientCpuMsPerPatch,
    noWebhookPerSecond,
    controllerCpuMsPerSlice: Math.max(controllerCpu(down.cpuMsPerSlice), controllerCpu(up.cpuMsPerSlice)),
    controllerCpuToReview: sweep.cpuMsPerSlice > 0 ? round(Math.max(controllerCpu(down.cpuMsPerSlice), controllerCpu(up.cpuMsPerSlice)) / sweep.cpuMsPerSlice, 3) : 0,
    passToFloor: round(slowerPass / sweep.perSecond, 3), passToBestRound: round(slowerPass / best.perSecond, 3),
  }));
} finally {
  await bench.close();
}
