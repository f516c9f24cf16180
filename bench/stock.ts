// Section "stock": the stock-Liqo path. Prints one JSON line. Two modes, each run in fresh processes by run.ts:
//   time: the hub view of 50,000 pod IPs among 50 peers: rebuildMs, the median of 21 rebuilds of what a watch event
//     makes (indexHubIps over the kept IPs + buildSnapshot + the hub's resolver); and the cost of a review on each
//     path: rewriteEndpointSlice + patchFor of one 100-endpoint slice whose addresses are all the hub's allocations
//     (stock path, each resolved through its IP) against the same slice in an FCC's hub prefix (FCC path), measured
//     round-robin, ns per address, median of the repetitions.
//   rss: the process RSS with the 50,000 IPs kept as the hub source keeps them (decoded, the objects dropped) and the
//     snapshot built: what a leaf behind a hub with 50,000 offloaded pods holds.
import { patchFor } from '../src/admission/patch.ts';
import { isSkip } from '../src/core/endpoint-slice.ts';
import { decodeFcc } from '../src/core/fcc.ts';
import { decodeHubIp, indexHubIps, type HubIp } from '../src/core/hub-ipam.ts';
import { formatIPv4 } from '../src/core/ip.ts';
import type { JsonObject } from '../src/core/json.ts';
import { decodeConfiguration, tunnelStates } from '../src/core/leaf-views.ts';
import { isUnchanged, rewriteEndpointSlice } from '../src/core/rewrite.ts';
import { buildSnapshot, type Snapshot } from '../src/core/snapshot.ts';
import { configurationObject, connectionObject, fccObject, hubIpObject, sliceObject } from '../test/support/builders.ts';
import { median, round, sized } from './stats.ts';

const IPS = sized(50_000, 500);
const PEERS = sized(50, 5);
const ENDPOINTS = 100;
const WARMUP = sized(5, 0);
const REPETITIONS = sized(21, 1);
const REVIEW_ROUNDS = sized(9, 1);
const REVIEW_MS = sized(150, 2);

const rssMB = () => process.memoryUsage().rss / 2 ** 20;
const collect = () => { if (typeof globalThis.gc === 'function') globalThis.gc(); };
const mode = process.argv[2] === 'rss' ? 'rss' : 'time';

// The hub (cluster1) sees peer p's pods 10.0.0.0/16 at 20.p.0.0/16 and allocates in its external 10.70.0.0/16,
// which the leaf cluster2 sees at 10.71.0.0/16. IP i is pod i of peer i % PEERS.
const external = (i: number) => formatIPv4(((10 << 24) | (70 << 16)) + 1 + i);
const seen = (i: number) => formatIPv4(((10 << 24) | (71 << 16)) + 1 + i);
const hubPodAddress = (i: number) => formatIPv4(((20 << 24) | ((i % PEERS) << 16)) + 1 + Math.floor(i / PEERS));
const peer = (p: number) => `peer${p}`;

function ipObjects(): JsonObject[] {
  return Array.from({ length: IPS }, (_, i) => hubIpObject({ pod: `pod-${i}`, ip: hubPodAddress(i), allocated: external(i) }));
}

const hubConfigurations = Array.from({ length: PEERS }, (_, p) =>
  decodeConfiguration(configurationObject({ peer: peer(p), remotePod: '10.0.0.0/16', remotePodView: `20.${p}.0.0/16` })));
const leafConfigurations = [
  configurationObject({ peer: 'cluster1' }),
  ...Array.from({ length: PEERS }, (_, p) => configurationObject({ peer: peer(p), remotePod: '10.0.0.0/16', remotePodView: `30.${p}.0.0/16`, remoteExternalView: `40.${p}.0.0/16` })),
].map((c) => decodeConfiguration(c));
const tunnels = tunnelStates(Array.from({ length: PEERS }, (_, p) => connectionObject(peer(p), 'Connected')));
// The FCC path's twin: one connected shortcut whose hub prefix holds the same slice's addresses.
const fcc = decodeFcc(fccObject({ aPod: '10.90.0.0/16', aRemapped: '10.91.0.0/16' }));

function rebuild(kept: Iterable<HubIp>, version: number): Snapshot {
  const snapshot = buildSnapshot({
    version, fccs: [fcc], tunnels, configurations: leafConfigurations,
    hub: { known: true, ips: indexHubIps(kept), configurations: hubConfigurations },
  });
  snapshot.resolverFor('cluster1');
  return snapshot;
}

/** A watch keeps the decoded IPs by key and drops the objects: the same here. */
function kept(): Map<string, HubIp> {
  const map = new Map<string, HubIp>();
  for (const object of ipObjects()) {
    const ip = decodeHubIp(object);
    if (ip !== undefined) map.set(ip.ref, ip);
  }
  return map;
}

if (mode === 'rss') {
  collect();
  const baselineRssMB = rssMB();
  const ips = kept();
  const snapshot = rebuild(ips.values(), 1);
  collect();
  const out = { ips: snapshot.hub.known ? snapshot.hub.ips.size : 0, rssMB: round(rssMB(), 1), baselineRssMB: round(baselineRssMB, 1),
    heapUsedMB: round(process.memoryUsage().heapUsed / 2 ** 20, 1) };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} else {
  const ips = kept();
  const times: number[] = [];
  let snapshot = rebuild(ips.values(), 0);
  for (let i = 0; i < WARMUP + REPETITIONS; i++) {
    const start = performance.now();
    snapshot = rebuild(ips.values(), i + 1);
    if (i >= WARMUP) times.push(performance.now() - start);
  }
  // The same 100 pods, once as the stock hub reflects them (its allocations, seen at 10.71/16, with targetRefs), once
  // as a hub that keeps pod addresses reflects them into an FCC's hub prefix.
  const pods = Array.from({ length: ENDPOINTS }, (_, e) => e * 487 % IPS);
  const withRefs = (object: JsonObject): JsonObject => ({
    ...object,
    endpoints: (object.endpoints as JsonObject[]).map((endpoint, e) => ({ ...endpoint, targetRef: { kind: 'RemotePod', name: `pod-${pods[e]}`, namespace: 'demo' } })),
  });
  const stockSlice = withRefs(sliceObject({ addresses: pods.map((i) => [seen(i)]) }));
  const fccSlice = withRefs(sliceObject({ addresses: pods.map((i) => [formatIPv4(((10 << 24) | (90 << 16)) + 1 + i)]) }));
  let sink = 0;
  const review = (object: JsonObject): number => {
    const result = rewriteEndpointSlice(object, snapshot);
    if (isSkip(result) || isUnchanged(result)) throw new Error('the bench slice was not rewritten');
    return patchFor(result).length;
  };
  if (review(stockSlice) !== review(fccSlice)) throw new Error('the two paths should patch the same number of operations');
  const nsPerAddress = (object: JsonObject): number => {
    let iterations = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < REVIEW_MS) {
      sink += review(object);
      iterations++;
      elapsed = performance.now() - start;
    }
    return (elapsed * 1e6) / (iterations * ENDPOINTS);
  };
  nsPerAddress(stockSlice);
  nsPerAddress(fccSlice);
  const stock: number[] = [];
  const fccPath: number[] = [];
  for (let round = 0; round < REVIEW_ROUNDS; round++) {
    stock.push(nsPerAddress(stockSlice));
    fccPath.push(nsPerAddress(fccSlice));
  }
  const out = {
    ips: IPS, peers: PEERS, rebuildMs: round(median(times), 2),
    stockNsPerAddress: round(median(stock), 1), fccNsPerAddress: round(median(fccPath), 1),
    reviewRatio: round(median(stock.map((s, i) => s / (fccPath[i] ?? s))), 3), sink: sink > 0,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
