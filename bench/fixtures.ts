// The objects the benchmark feeds the product: slices as Liqo reflects them and FCCs as the hub writes them, built
// with the test builders so that the shapes are the ones the tests already check.
import { decodeFcc, type ForeignClusterConnection } from '../src/core/fcc.ts';
import { formatIPv4 } from '../src/core/ip.ts';
import type { JsonObject } from '../src/core/json.ts';
import { fccObject, reviewObject, sliceObject } from '../test/support/builders.ts';

export const LOCAL = 'cluster2';

/** Deterministic pseudo-random numbers (LCG), so every run feeds the same addresses. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// Pair i maps 10.X.Y.0/24 to 11.X.Y.0/24, X and Y from 100 to 254: sources and targets never overlap, so no pair
// chains. Every octet of every address has three digits (hosts too), so 1 pair and 10,000 pairs parse and print
// texts of one length: the scaling measures the lookup, not the digit count.
const THREE_DIGITS = 155; // 100..254
const pairNetwork = (first: number, i: number): number =>
  ((first << 24) | ((100 + Math.floor(i / THREE_DIGITS)) << 16) | ((100 + (i % THREE_DIGITS)) << 8)) >>> 0;
const OUTSIDE_BASE = ((172 << 24) | (16 << 16) | (100 << 8)) >>> 0; // 172.16.1xx.0: in no source and no target

/** `count` connected FCCs that each give `LOCAL` one distinct, non-overlapping, non-chaining /24 pair. */
export function scalingFccs(count: number): ForeignClusterConnection[] {
  return Array.from({ length: count }, (_, i) => decodeFcc(fccObject({
    name: `${LOCAL}-peer${i}`, a: LOCAL, b: `peer${i}`,
    aPod: `${formatIPv4(pairNetwork(10, i))}/24`, aRemapped: `${formatIPv4(pairNetwork(11, i))}/24`,
    bPod: '10.250.0.0/16', bRemapped: '10.251.0.0/16',
  })));
}

/**
 * A reflected IPv4 slice of `endpoints` endpoints, one address each, no address twice (pods have their own IPs):
 * even ones inside a pair's source (spread over `pairs` pairs at random), odd ones outside every pair. Fresh from
 * the hub: nothing rewritten yet.
 */
export function scalingSlice(pairs: number, endpoints: number, seed: number): JsonObject {
  const next = random(seed);
  const used = new Set<string>();
  const addresses: string[] = [];
  while (addresses.length < endpoints) {
    const host = 100 + Math.floor(next() * THREE_DIGITS);
    const address = addresses.length % 2 === 0
      ? formatIPv4(pairNetwork(10, Math.floor(next() * pairs)) + host)
      : formatIPv4(OUTSIDE_BASE + Math.floor(next() * 100) * 256 + host);
    if (used.has(address)) continue;
    used.add(address);
    addresses.push(address);
  }
  return sliceObject({ name: `web-${seed}`, destination: LOCAL, addresses: addresses.map((address) => [address]) });
}

/**
 * The admission body: an UPDATE of a 100-endpoint slice against LIQO.md's shortcut (10.63.0.0/16 → 10.61.0.0/16),
 * half the addresses in its source. `oldObject` is the slice before Liqo's update (one endpoint fewer), as the API
 * server sends it.
 */
export function admissionReview(): JsonObject {
  const addresses = Array.from({ length: 100 }, (_, k) => [k % 2 === 0 ? `10.63.${k}.${10 + k}` : `10.200.${k}.${10 + k}`]);
  const object = sliceObject({ name: 'web-abcde', destination: LOCAL, addresses });
  const oldObject = sliceObject({ name: 'web-abcde', destination: LOCAL, addresses: addresses.slice(0, 99) });
  return reviewObject(object, { operation: 'UPDATE', oldObject });
}

/** LIQO.md's shortcut for cluster2, as the `--shortcuts` file of the served webhook. */
export function exampleFccObject(): JsonObject {
  return fccObject();
}

/**
 * `count` FCCs among `leaves` leaf clusters as the hub stores them: `leaf000` (the local cluster) is connected to
 * every other leaf, the rest are distinct random pairs of the others. The local cluster sees leaf j's pods at
 * 10.0.j.0/24 through the hub and at 10.1.j.0/24 through the shortcut; one FCC in ten is still connecting.
 */
export function meshFccObjects(count: number, leaves: number, seed = 7): JsonObject[] {
  const name = (i: number) => `leaf${String(i).padStart(3, '0')}`;
  const next = random(seed);
  const seen = new Set<string>();
  const pairs: [number, number][] = [];
  // Distinct pairs only: more FCCs than pairs of leaves would never be found.
  if (count > (leaves - 1) * leaves / 2) throw new Error(`${count} FCCs need more than ${leaves} leaves`);
  for (let j = 1; j < leaves && pairs.length < count; j++) pairs.push([0, j]);
  while (pairs.length < count) {
    const a = 1 + Math.floor(next() * (leaves - 1));
    const b = 1 + Math.floor(next() * (leaves - 1));
    const key = `${Math.min(a, b)}-${Math.max(a, b)}`;
    if (a === b || seen.has(key)) continue;
    seen.add(key);
    pairs.push([Math.min(a, b), Math.max(a, b)]);
  }
  return pairs.map(([a, b], i) => fccObject({
    name: `${name(a)}-${name(b)}`, a: name(a), b: name(b), connected: i % 10 !== 9,
    aPod: `10.0.${b}.0/24`, aRemapped: `10.1.${b}.0/24`, bPod: `10.0.${a}.0/24`, bRemapped: `10.1.${a}.0/24`,
  }));
}

export const MESH_LOCAL = 'leaf000';
