// Section "shadow": Liqo's own direct connections (ShadowEndpointSlices). Prints one JSON line. Two modes, each run in
// fresh processes by run.ts:
//   time: the cost of a shadow review of 100 endpoints, 50 of them pods of other leaves listed in the data
//     annotation (every one repaired: the hub remapped each leaf), against the EndpointSlice review of the same pods
//     as a hub without the Service annotation reflects them (the 50 as the hub's IPAM allocations, resolved on the
//     stock path; the other 50 the hub's own pods). Three comparisons, each round-robin, ns per endpoint, median of
//     the ratios: the pure rules (repairShadowEndpointSlice + shadowPatchFor against rewriteEndpointSlice + patchFor)
//     with the 50 pods on 5 leaves and on 50 leaves, and the whole review as the route makes it (the body parsed,
//     the review decoded, reviewed, its patch encoded; an UPDATE carrying oldObject) on 5 leaves. The view is the
//     stock section's: 50,000 hub pod IPs among 50 peers.
//   rss: the process RSS with those 50,000 hub IPs kept and the snapshot built, and 5,000 shadows of 10 endpoints (5
//     listed: each of the 50,000 pods in one shadow) held and repaired: a leaf that lists every shadow at once.
import { patchFor } from '../src/admission/patch.ts';
import { reviewEndpointSlice } from '../src/admission/review-endpoint-slice.ts';
import { reviewShadowEndpointSlice } from '../src/admission/review-shadow-endpoint-slice.ts';
import { decodeReview, type AdmissionRequest } from '../src/admission/review.ts';
import { shadowPatchFor } from '../src/admission/shadow-patch.ts';
import { repairShadowEndpointSlice } from '../src/core/direct-connections.ts';
import { isSkip } from '../src/core/endpoint-slice.ts';
import { decodeHubIp, indexHubIps, type HubIp } from '../src/core/hub-ipam.ts';
import { formatIPv4 } from '../src/core/ip.ts';
import type { JsonObject } from '../src/core/json.ts';
import { decodeConfiguration, tunnelStates } from '../src/core/leaf-views.ts';
import { isUnchanged, rewriteEndpointSlice } from '../src/core/rewrite.ts';
import { buildSnapshot, type Snapshot } from '../src/core/snapshot.ts';
import { configurationObject, connectionObject, hubIpObject, shadowObject, sliceObject } from '../test/support/builders.ts';
import { median, round } from './stats.ts';

const IPS = 50_000;
const PEERS = 50;
const ENDPOINTS = 100;
const LISTED = 50;
const SHADOWS = 5_000;
const SHADOW_ENDPOINTS = 10;
const WARMUP_MS = 300;
const ROUNDS = 9;
const REVIEW_MS = 150;

const rssMB = () => process.memoryUsage().rss / 2 ** 20;
const collect = () => { if (typeof globalThis.gc === 'function') globalThis.gc(); };
const mode = process.argv[2] === 'rss' ? 'rss' : 'time';

// Every peer declares 10.0.0.0/16; the hub (cluster1) sees peer p at 20.p.0.0/16 and allocates in its external
// 10.70.0.0/16, which the leaf cluster2 sees at 10.71.0.0/16; the leaf sees peer p at 30.p.0.0/16. Pod i runs on
// peer i % PEERS. The hub's own pods are 10.200/16.
const allocated = (i: number) => formatIPv4(((10 << 24) | (70 << 16)) + 1 + i);
const seen = (i: number) => formatIPv4(((10 << 24) | (71 << 16)) + 1 + i);
const hubView = (i: number) => formatIPv4(((20 << 24) | ((i % PEERS) << 16)) + 1 + Math.floor(i / PEERS));
const hubPod = (i: number) => formatIPv4(((10 << 24) | (200 << 16)) + 1 + i);
const peer = (i: number) => `peer${i % PEERS}`;

function snapshotOf(ips: Iterable<HubIp>): Snapshot {
  const hubConfigurations = Array.from({ length: PEERS }, (_, p) =>
    decodeConfiguration(configurationObject({ peer: `peer${p}`, remotePod: '10.0.0.0/16', remotePodView: `20.${p}.0.0/16` })));
  const leafConfigurations = [
    configurationObject({ peer: 'cluster1' }),
    ...Array.from({ length: PEERS }, (_, p) => configurationObject({ peer: `peer${p}`, remotePod: '10.0.0.0/16', remotePodView: `30.${p}.0.0/16`, remoteExternalView: `40.${p}.0.0/16` })),
  ].map((c) => decodeConfiguration(c));
  const snapshot = buildSnapshot({
    version: 1, fccs: [], configurations: leafConfigurations,
    tunnels: tunnelStates(Array.from({ length: PEERS }, (_, p) => connectionObject(`peer${p}`, 'Connected'))),
    hub: { known: true, ips: indexHubIps(ips), configurations: hubConfigurations },
  });
  snapshot.resolverFor('cluster1');
  return snapshot;
}

/** As a watch keeps them: decoded, the objects dropped. */
function keptIps(): HubIp[] {
  const ips: HubIp[] = [];
  for (let i = 0; i < IPS; i++) {
    const ip = decodeHubIp(hubIpObject({ pod: `pod-${i}`, ip: hubView(i), allocated: allocated(i) }));
    if (ip !== undefined) ips.push(ip);
  }
  return ips;
}

/** A shadow of these pods (listed, on other leaves) and as many of the hub's own, as the hub's virtual kubelet writes it. */
function shadowOf(name: string, pods: readonly number[], hubPods: readonly number[]): JsonObject {
  const lists: Record<string, string[]> = {};
  for (const i of pods) (lists[peer(i)] ??= []).push(hubView(i));
  return shadowObject({
    name,
    endpoints: [...pods.map((i) => ({ addresses: [hubView(i)], pod: `pod-${i}` })), ...hubPods.map((h) => ({ addresses: [hubPod(h)], pod: `hub-${h}` }))],
    data: { clusterAddresses: lists },
  });
}

if (mode === 'rss') {
  collect();
  const baselineRssMB = rssMB();
  const snapshot = snapshotOf(keptIps());
  const listed = SHADOW_ENDPOINTS / 2;
  const shadows: JsonObject[] = [];
  let repaired = 0;
  for (let s = 0; s < SHADOWS; s++) {
    // Shadow s holds 5 pods whose host parts differ (pod j*51 runs on peer j % 50 with host part about j), so every
    // one is repaired; together the 5,000 shadows hold each of the 50,000 pods once.
    const pods = Array.from({ length: listed }, (_, k) => ((s * listed + k) * 51) % IPS);
    const shadow = shadowOf(`svc-${s}`, pods, Array.from({ length: listed }, (_, k) => (s * listed + k) % 60_000));
    shadows.push(shadow);
    const repair = repairShadowEndpointSlice(shadow, snapshot, {});
    if (repair.kind === 'changed') {
      shadows[s] = repair.object;
      repaired += repair.addresses.filter((a) => a.outcome === 'repaired').length;
    }
  }
  collect();
  const out = {
    ips: snapshot.hub.known ? snapshot.hub.ips.size : 0, shadows: shadows.length, repaired,
    rssMB: round(rssMB(), 1), baselineRssMB: round(baselineRssMB, 1), heapUsedMB: round(process.memoryUsage().heapUsed / 2 ** 20, 1),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} else {
  const snapshot = snapshotOf(keptIps());
  const hubPods = Array.from({ length: ENDPOINTS - LISTED }, (_, h) => h);
  /** The shadow and the EndpointSlice of the same 100 pods: 50 on `leaves` other leaves (pod e on peer e % leaves, host part e + 1: no two repairs alike), 50 the hub's. */
  const world = (leaves: number) => {
    const pods = Array.from({ length: LISTED }, (_, e) => e * PEERS + (e % leaves));
    const slice = sliceObject({ addresses: [...pods.map((i) => [seen(i)]), ...hubPods.map((h) => [hubPod(h)])] });
    const sliceWithRefs: JsonObject = {
      ...slice,
      endpoints: (slice.endpoints as JsonObject[]).map((endpoint, e) => ({
        ...endpoint, targetRef: { kind: 'RemotePod', name: e < LISTED ? `pod-${pods[e]}` : `hub-${e - LISTED}`, namespace: 'demo' },
      })),
    };
    return { shadow: shadowOf('web-abcde', pods, hubPods), slice: sliceWithRefs };
  };
  let sink = 0;
  const shadowRule = (shadow: JsonObject) => (): number => {
    const repair = repairShadowEndpointSlice(shadow, snapshot, {});
    if (repair.kind !== 'changed') throw new Error('the bench shadow was not repaired');
    return shadowPatchFor(repair).length;
  };
  const sliceRule = (slice: JsonObject) => (): number => {
    const result = rewriteEndpointSlice(slice, snapshot);
    if (isSkip(result) || isUnchanged(result)) throw new Error('the bench slice was not rewritten');
    return patchFor(result).length;
  };
  // What the route does with a body: parse it whole, decode the review, review it, encode the patch.
  const review = (body: string, reviewer: (request: AdmissionRequest) => { kind: string }) => (): number => {
    const decoded = decodeReview(JSON.parse(body));
    if (!decoded.ok) throw new Error(decoded.message);
    const outcome = reviewer(decoded.value);
    if (outcome.kind !== 'patched') throw new Error(`the bench review was ${outcome.kind}`);
    return 1;
  };
  const nsPerEndpoint = (work: () => number, ms = REVIEW_MS): number => {
    let iterations = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < ms) {
      sink += work();
      iterations++;
      elapsed = performance.now() - start;
    }
    return (elapsed * 1e6) / (iterations * ENDPOINTS);
  };
  /** Round-robin, median of the ratios. */
  const compare = (shadowWork: () => number, sliceWork: () => number) => {
    nsPerEndpoint(shadowWork, WARMUP_MS);
    nsPerEndpoint(sliceWork, WARMUP_MS);
    const shadows: number[] = [];
    const slices: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      shadows.push(nsPerEndpoint(shadowWork));
      slices.push(nsPerEndpoint(sliceWork));
    }
    return {
      shadowNsPerEndpoint: round(median(shadows), 1), sliceNsPerEndpoint: round(median(slices), 1),
      ratio: round(median(shadows.map((x, i) => x / (slices[i] ?? x))), 3),
    };
  };
  for (const leaves of [5, 50]) {
    const check = repairShadowEndpointSlice(world(leaves).shadow, snapshot, {});
    if (check.kind !== 'changed' || check.addresses.some((a) => a.outcome !== 'repaired') || check.addresses.length !== LISTED) {
      throw new Error('every listed address of the bench shadow should be repaired');
    }
  }
  const five = world(5);
  const fifty = world(50);
  const rule5 = compare(shadowRule(five.shadow), sliceRule(five.slice));
  const rule50 = compare(shadowRule(fifty.shadow), sliceRule(fifty.slice));
  const shadowBody = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {
    uid: 'u', operation: 'UPDATE', kind: { group: 'offloading.liqo.io', version: 'v1beta1', kind: 'ShadowEndpointSlice' }, object: five.shadow, oldObject: five.shadow } });
  const sliceBody = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {
    uid: 'u', operation: 'UPDATE', kind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' }, object: five.slice, oldObject: five.slice } });
  const review5 = compare(
    review(shadowBody, (request) => reviewShadowEndpointSlice(request, snapshot)),
    review(sliceBody, (request) => reviewEndpointSlice(request, snapshot)),
  );
  const out = { ips: IPS, peers: PEERS, endpoints: ENDPOINTS, listed: LISTED, rule5, rule50, review5, sink: sink > 0 };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
