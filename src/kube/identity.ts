// How every request names the product: `User-Agent: shortcut-webhook/<version>` instead of node-fetch's
// `node-fetch/1.0` (API servers' audit logs), and `fieldManager=shortcut-webhook` on each write that does not name
// one (managedFields said `node-fetch`, next to Liqo's writer). client-node 1.4 calls applySecurityAuthentication with
// each API client request's RequestContext, and applyToFetchOptions for its Watch: the two places every request
// passes, so a KubeConfig overrides both and calls these.
import type { KubeConfig, RequestContext } from '@kubernetes/client-node';
import { PRODUCT_FIELD_MANAGER } from '../core/endpoint-slice.ts';

export const FIELD_MANAGER = PRODUCT_FIELD_MANAGER;

const WRITES: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function identifyRequest(context: RequestContext, userAgent: string): void {
  context.setHeaderParam('User-Agent', userAgent);
  if (WRITES.has(context.getHttpMethod()) && !new URL(context.getUrl()).searchParams.has('fieldManager')) {
    context.setQueryParam('fieldManager', FIELD_MANAGER);
  }
}

type FetchInit = Awaited<ReturnType<KubeConfig['applyToFetchOptions']>>;

export function identifyFetch(init: FetchInit, userAgent: string): FetchInit {
  const { headers } = init;
  // client-node returns node-fetch's Headers; anything else is rebuilt as a record with the header added.
  if (headers !== undefined && !Array.isArray(headers) && typeof headers.set === 'function') headers.set('User-Agent', userAgent);
  else init.headers = { ...Object.fromEntries(Array.isArray(headers) ? headers.map(([key = '', value = '']) => [key, value]) : Object.entries(headers ?? {})), 'User-Agent': userAgent };
  return init;
}
