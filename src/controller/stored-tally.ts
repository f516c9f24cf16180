// shortcut_webhook_stored_objects{peer,path,resource} (docs/reference.md, "Metrics"), folded from a pass: each object the pass lists is
// decided by status's own code (offline/status.ts, the decisions `explain` makes), and counted once for each peer and
// path its addresses take, as the view leaves it once the pass has written it. Only counters are kept, never objects;
// bounded cardinality: peers, not Services.
import type { Snapshot } from '../core/snapshot.ts';
import type { Metrics } from '../metrics.ts';
import { objectStatus, type StoredResource } from '../offline/status.ts';
import type { Resource } from './resource.ts';

const KINDS: Readonly<Record<string, StoredResource>> = { endpointslices: 'EndpointSlice', shadowendpointslices: 'ShadowEndpointSlice' };

export class StoredObjectsTally {
  private readonly counts = new Map<string, { peer: string; path: string; resource: string; objects: number }>();

  add(resource: Resource, item: unknown, snapshot: Snapshot, clusterId: string | undefined): void {
    const kind = KINDS[resource.plural];
    if (kind === undefined) return;
    const status = objectStatus(kind, item, snapshot, { clusterId });
    if (status === undefined) return;
    // An object counts once for each peer and path its addresses take; most take one or two.
    const taken = new Map<string, Set<string>>();
    for (const { peer, path } of status.addresses) {
      let paths = taken.get(peer);
      if (paths === undefined) taken.set(peer, paths = new Set());
      paths.add(path);
    }
    for (const [peer, paths] of taken) {
      for (const path of paths) {
        const key = `${peer}\0${path}\0${resource.plural}`;
        const entry = this.counts.get(key) ?? { peer, path, resource: resource.plural, objects: 0 };
        entry.objects++;
        this.counts.set(key, entry);
      }
    }
  }

  /** Replaces the gauge's series: a peer or path no longer taken has none. */
  publish(metrics: Metrics): void {
    metrics.storedObjects.reset();
    for (const { peer, path, resource, objects } of this.counts.values()) metrics.storedObjects.set({ peer, path, resource }, objects);
  }
}
