// The controller's requests over the lean client (kube/lean-client.ts): a list page parsed once, an object read and
// parsed, a JSON Patch whose answer is drained unread (the pass needs only to know it was stored), and the healing
// watch's streams, each event parsed once. client-node stays where its machinery is worth it: the view's list-watch,
// the Lease (leader election) and discovery, none of them on a path that scales with the writes to slices.
import type { KubeConfig } from '@kubernetes/client-node';
import type { PatchOperation } from '../admission/patch.ts';
import { FIELD_MANAGER, readListPage } from '../kube/client.ts';
import { LeanKubeClient } from '../kube/lean-client.ts';
import { watchUrl } from '../view/list-watch.ts';
import type { StoredKind, StoredObjects } from './stored-objects.ts';

function kindPath({ group, version }: StoredKind): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

function objectPath(ref: StoredKind & { readonly namespace: string; readonly name: string }): string {
  return `${kindPath(ref)}/namespaces/${encodeURIComponent(ref.namespace)}/${ref.plural}/${encodeURIComponent(ref.name)}`;
}

const PATCH_QUERY = `?fieldManager=${encodeURIComponent(FIELD_MANAGER)}`;

export function leanStoredObjects(config: KubeConfig, options: { readonly userAgent?: string; readonly timeoutMs?: number } = {}): StoredObjects {
  const client = new LeanKubeClient({ config, ...options });
  return {
    listPage: async (request) => {
      const query = new URLSearchParams({ labelSelector: request.labelSelector, limit: String(request.limit) });
      if (request.continueToken !== undefined) query.set('continue', request.continueToken);
      return readListPage(await client.send({ method: 'GET', path: `${kindPath(request)}/${request.plural}?${query}`, read: 'json' }));
    },
    get: (ref) => client.send({ method: 'GET', path: objectPath(ref), read: 'json' }),
    patch: async (ref, patch: readonly PatchOperation[]) => {
      await client.send({
        method: 'PATCH', path: `${objectPath(ref)}${PATCH_QUERY}`, read: 'status',
        body: { contentType: 'application/json-patch+json', text: JSON.stringify(patch) },
      });
    },
    watch: (path, query, onEvent, done, passOver) => client.watch(watchUrl(path, query), onEvent, done, passOver),
    close: () => client.close(),
  };
}
