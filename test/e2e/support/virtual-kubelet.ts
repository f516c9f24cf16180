// The hub's virtual kubelet as it writes ShadowEndpointSlices into a leaf (Liqo v1.2.0
// pkg/virtualKubelet/reflection/exposition/endpointslice.go `Handle`, lines 286-327): for each hub slice it forges a
// shadow; an absent shadow is created, and a stored one is replaced whole (an Update: a PUT of the forged labels,
// annotations and template over the stored object's metadata, resourceVersion included, forge/meta.go
// `RemoteObjectMeta`) whenever the forged copy differs from it in labels, annotations, addressType, endpoints or ports
// (`ShouldUpdateShadowEndpointSlice`, lines 330-338). Field manager `reflection.liqo.io` (forge.ReflectionFieldManager).
// The reflector handles a slice again on every event of its shadow (its informer on the remote shadows, line 95):
// `follow()` does the same, so a write to a shadow by anyone else meets the hub's PUT, as it does on a real leaf.
// The tests hand the forged copy over (support/liqo.ts `shadowSlice`); nothing of the hub's own forging is needed.
// Liqo's own reflector (hub-reflector/, support/hub.ts, hub-reflector.test.ts) writes the shapes Liqo writes; this
// emulation stays where a test needs a shadow no Liqo code writes (a hub that reflects hub-view addresses, the fork's
// FCC path; a malformed data annotation) or one exact write at one moment. The two cannot share a namespace: Liqo's
// reflector deletes a shadow labelled as its own (origin, destination, managed-by) whose hub slice it does not have, as
// soon as it sees it (endpointslice.go lines 148, 184-189; hub-reflector.test.ts shows it).
import type { KubeClient, KubeObject, WatchEvent } from './kube-client.ts';
import { pathOf } from './objects.ts';

/** forge.ReflectionFieldManager. */
export const REFLECTION_MANAGER = 'reflection.liqo.io';

export interface ReflectorWrite {
  readonly name: string;
  readonly operation: 'create' | 'update';
  /** The stored object's resourceVersion before the write (undefined for a create) and after it. */
  readonly before: string | undefined;
  readonly after: string | undefined;
}

/** Go's reflect.DeepEqual on decoded JSON, less what `omitempty` drops: absent, null, "", [] and {} read the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(canonical);
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([key, item]) => [key, canonical(item)] as const)
      .filter(([, item]) => item !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return value === null || value === '' ? undefined : value;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function template(object: KubeObject): Record<string, unknown> {
  const spec = object.spec as { template?: Record<string, unknown> } | undefined;
  return spec?.template ?? {};
}

/** `ShouldUpdateShadowEndpointSlice`: labels and annotations as maps, then the template's three fields. */
export function shouldUpdate(stored: KubeObject, forged: KubeObject): boolean {
  const [s, f] = [template(stored), template(forged)];
  return !same(stored.metadata?.labels, forged.metadata?.labels) || !same(stored.metadata?.annotations, forged.metadata?.annotations)
    || !same(s.addressType, f.addressType) || !same(s.endpoints, f.endpoints) || !same(s.ports, f.ports);
}

export class HubReflector {
  /** The forged shadow of each hub slice, by name: what the hub would write now. */
  private readonly forged = new Map<string, KubeObject>();
  /** One Handle at a time per slice, as the reflector's work queue guarantees. */
  private readonly queue = new Map<string, Promise<unknown>>();
  private watch: { stop(): void } | undefined;
  /** Every write the reflector made, in order. */
  readonly writes: ReflectorWrite[] = [];
  /** Handles that failed for good (anything but a conflict, which is retried as the work queue retries it). */
  readonly failures: string[] = [];

  constructor(private readonly client: KubeClient, private readonly namespace: string) {}

  /** The hub's slice changed (or is first seen): `forged` is the shadow it forges now; reflects it once. */
  reflect(forged: KubeObject): Promise<ReflectorWrite | undefined> {
    const name = forged.metadata?.name;
    if (name === undefined) throw new Error('a forged shadow without a name');
    this.forged.set(name, forged);
    return this.enqueue(name);
  }

  /** Handles a slice again on every event of a shadow it reflects, until `stop()`. */
  async follow(): Promise<void> {
    const collection = pathOf({ apiVersion: 'offloading.liqo.io/v1beta1', kind: 'ShadowEndpointSlice', metadata: { namespace: this.namespace } });
    const list = await this.client.get<{ metadata: { resourceVersion: string } }>(collection);
    this.watch = await this.client.watch(collection, list.metadata.resourceVersion, (event: WatchEvent) => {
      const name = event.object.metadata?.name;
      if (event.type !== 'BOOKMARK' && name !== undefined && this.forged.has(name)) void this.enqueue(name);
    });
  }

  /** Waits for every Handle queued so far. */
  async idle(): Promise<void> {
    while (this.queue.size > 0) await Promise.all(this.queue.values());
  }

  stop(): void {
    this.watch?.stop();
  }

  private enqueue(name: string): Promise<ReflectorWrite | undefined> {
    const previous = this.queue.get(name) ?? Promise.resolve();
    const next = previous.then(() => this.handle(name));
    const settled = next.catch((error: unknown) => {
      this.failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    this.queue.set(name, settled);
    void settled.finally(() => { if (this.queue.get(name) === settled) this.queue.delete(name); });
    return settled;
  }

  private async handle(name: string, attempt = 1): Promise<ReflectorWrite | undefined> {
    const forged = this.forged.get(name);
    if (forged === undefined) return undefined;
    const self = pathOf({ ...forged, metadata: { ...forged.metadata, namespace: this.namespace } }, name);
    const query = `?fieldManager=${encodeURIComponent(REFLECTION_MANAGER)}`;
    const answer = await this.client.request<KubeObject>('GET', self);
    if (answer.status === 404) {
      const created = await this.client.request<KubeObject>('POST', `${self.slice(0, self.lastIndexOf('/'))}${query}`, forged);
      // AlreadyExists: another handle made it; the reflector returns and the next event brings it back here.
      if (created.status === 409) return undefined;
      if (created.status !== 201) throw new Error(`create ${name}: HTTP ${created.status}: ${created.text.slice(0, 500)}`);
      return this.record({ name, operation: 'create', before: undefined, after: created.body.metadata?.resourceVersion });
    }
    if (answer.status !== 200) throw new Error(`get ${name}: HTTP ${answer.status}: ${answer.text.slice(0, 500)}`);
    const stored = answer.body;
    if (!shouldUpdate(stored, forged)) return undefined;
    const metadata = { ...stored.metadata, labels: forged.metadata?.labels, annotations: forged.metadata?.annotations };
    const updated = await this.client.request<KubeObject>('PUT', `${self}${query}`, { ...stored, metadata, spec: forged.spec });
    // A conflict: the shadow moved since it was read; the work queue handles the slice again.
    if (updated.status === 409 && attempt < 10) return this.handle(name, attempt + 1);
    if (updated.status !== 200) throw new Error(`update ${name}: HTTP ${updated.status}: ${updated.text.slice(0, 500)}`);
    return this.record({ name, operation: 'update', before: stored.metadata?.resourceVersion, after: updated.body.metadata?.resourceVersion });
  }

  private record(write: ReflectorWrite): ReflectorWrite {
    this.writes.push(write);
    return write;
  }
}
