// Every kind of stored object `serve`'s controller keeps in step, in the order a pass visits them: the reflected
// EndpointSlices first (the data path most Services take), then Liqo's ShadowEndpointSlices (its direct connections).
import { ENDPOINT_SLICES } from './endpoint-slices.ts';
import type { Resource } from './resource.ts';
import { SHADOW_ENDPOINT_SLICES } from './shadow-endpoint-slices.ts';

export const STORED_KINDS: readonly Resource[] = [ENDPOINT_SLICES, SHADOW_ENDPOINT_SLICES];
