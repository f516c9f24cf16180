// The reflected slices of the sections "failover" and "heartbeat" on the real API server, and the watch that checks
// every stored version of them. Slice i has 20 endpoints: for even k an address in LIQO.md's shortcut source
// (10.63/16, which the webhook moves to 10.61/16 while the shortcut is up), for odd k a hub-only one (10.200/16).
// A stored version is on one path or the other, whole: never half-written (some of its shortcut addresses moved, some
// not), never a flag without its originals (nor originals without the flag), no flag left on a slice on the hub path,
// and the originals name each moved address's hub address. Anything else is a violation. Not product code.
import type { KubeClient } from '../test/e2e/support/kube-client.ts';
import { sliceObject } from '../test/support/builders.ts';
import type { JsonObject } from '../src/core/json.ts';
import type { rawClient } from './control-plane.ts';

export const ENDPOINTS = 20;
export const NAMESPACES = 20;
const FLAG = 'liqo.io/shortcut-addresses';
const ORIGINALS = 'liqo.io/shortcut-original-addresses';
const SELECTOR = 'endpointslice.kubernetes.io/managed-by=endpointslice.reflection.liqo.io';
const SLICES = `/apis/discovery.k8s.io/v1/endpointslices?labelSelector=${SELECTOR}`;

export type Path = 'shortcut' | 'hub';
interface Slice { metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> }; endpoints?: { addresses?: string[] }[] }
type RawClient = ReturnType<typeof rawClient>;

/** Endpoint k of slice i: an address of its own (modulo 2^16), in the shortcut's source for even k, hub-only for odd k. */
export const hubAddress = (i: number, k: number) => {
  const index = i * ENDPOINTS + k;
  return `${k % 2 === 0 ? '10.63' : '10.200'}.${(index >> 8) & 255}.${index & 255}`;
};

export const sliceName = (i: number) => `web-${i}`;
export const sliceNamespace = (i: number) => `ns-${i % NAMESPACES}`;

/**
 * Slice i as the hub's reflection writes it, in the hub's addresses. `version` moves its first hub-only address (a
 * pod replaced on the hub), so that each apply of a new version is a real write.
 */
export function reflectedSlice(i: number, version = 0): JsonObject {
  const addresses = Array.from({ length: ENDPOINTS }, (_, k) =>
    [k === 1 && version > 0 ? `10.201.${(version >> 8) & 255}.${version & 255}` : hubAddress(i, k)]);
  const slice = sliceObject({ name: sliceName(i), namespace: sliceNamespace(i), destination: 'cluster2', addresses });
  delete (slice.metadata as Record<string, unknown>).resourceVersion;
  return slice;
}

/** The namespaces the slices live in. */
export async function createNamespaces(admin: KubeClient): Promise<void> {
  for (let n = 0; n < NAMESPACES; n++) {
    await admin.ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
  }
}

/** Creates slices `from` to `to - 1`, `inFlight` at a time. */
export async function createSlices(client: RawClient, from: number, to: number, inFlight: number): Promise<void> {
  let next = from;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < to) {
      const i = next++;
      const answer = await client.send('POST', `/apis/discovery.k8s.io/v1/namespaces/${sliceNamespace(i)}/endpointslices`, JSON.stringify(reflectedSlice(i)), 'application/json');
      if (answer.status >= 300) throw new Error(`create ${sliceName(i)}: HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
    }
  }));
}

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

export interface SliceWatch {
  /** How many slices are stored on each path, as last seen. */
  readonly counts: Readonly<Record<Path, number>>;
  /** Stored versions seen (created or modified), each checked. */
  readonly versions: () => number;
  /** The first 20 violations, `namespace/name: what`. */
  readonly violations: readonly string[];
  /** Versions stored on the hub path, counted and the first 20 named, from `countHub()` on. */
  readonly onHub: { count: number; readonly first: string[] };
  countHub(): void;
  /** Resolves if the API server ends the watch: a version could then go unseen. */
  readonly ended: Promise<void>;
  stop(): void;
}

/** A watch on the reflected slices from now on, checking every stored version. */
export async function watchSlices(admin: KubeClient): Promise<SliceWatch> {
  const paths = new Map<string, Path>();
  const counts: Record<Path, number> = { shortcut: 0, hub: 0 };
  const violations: string[] = [];
  const onHub = { count: 0, first: [] as string[] };
  let counting = false;
  let versions = 0;
  const list = await admin.get<{ metadata: { resourceVersion: string } }>(SLICES);
  const watch = await admin.watch(SLICES, list.metadata.resourceVersion, (event) => {
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') return;
    const slice = event.object as Slice;
    const key = `${slice.metadata?.namespace}/${slice.metadata?.name}`;
    const before = paths.get(key);
    if (before !== undefined) counts[before]--;
    paths.delete(key);
    if (event.type === 'DELETED') return;
    versions++;
    const path = pathOf(slice);
    if (path !== 'shortcut' && path !== 'hub') {
      if (violations.length < 20) violations.push(`${key}: ${path}`);
      return;
    }
    if (path === 'hub' && counting && ++onHub.count <= 20) onHub.first.push(`${key} (resourceVersion ${(slice.metadata as { resourceVersion?: string }).resourceVersion})`);
    paths.set(key, path);
    counts[path]++;
  });
  return {
    counts, violations, onHub, ended: watch.ended, stop: watch.stop,
    versions: () => versions,
    countHub: () => { counting = true; },
  };
}
