/**
 * An endpoints array as endpoints-scan.ts reads it, from JSON.parse's reading: an element whose `addresses` is an
 * array becomes `{ addresses }` with its strings and null for anything else; every other element becomes null.
 */
export function thinEndpoints(endpoints: unknown): unknown {
  if (!Array.isArray(endpoints)) return endpoints;
  return endpoints.map((endpoint: unknown) => {
    const isObject = typeof endpoint === 'object' && endpoint !== null && !Array.isArray(endpoint);
    const addresses: unknown = isObject && Object.hasOwn(endpoint, 'addresses') ? (endpoint as Record<string, unknown>).addresses : undefined;
    return Array.isArray(addresses) ? { addresses: addresses.map((address: unknown) => (typeof address === 'string' ? address : null)) } : null;
  });
}
