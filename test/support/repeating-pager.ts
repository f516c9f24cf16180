// An API server that answers every list of one collection with one more page to come, always under the same continue
// token, and 404 to everything else: what a paging loop must end on instead of reading for ever.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { scratchDir } from './scratch.ts';

export interface RepeatingPager {
  readonly kubeconfig: string;
  /** How many lists it answered. */
  lists(): number;
  close(): Promise<void>;
}

/** `collection`: the list's path, e.g. `/apis/discovery.k8s.io/v1/endpointslices`; its items are always none. */
export async function startRepeatingPager(collection: string, token = 'page-2'): Promise<RepeatingPager> {
  let lists = 0;
  const server = createServer((request, response) => {
    const listed = new URL(request.url ?? '/', 'http://127.0.0.1').pathname === collection;
    if (listed) lists++;
    const body = listed
      ? { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: '1', continue: token }, items: [] }
      : { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 };
    response.writeHead(listed ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = join(scratchDir('repeating-pager-'), 'kubeconfig');
  writeFileSync(kubeconfig, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  return {
    kubeconfig,
    lists: () => lists,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
