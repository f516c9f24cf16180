// What an EndpointSlice the webhook answered for will be stored as, in the members the rule reads (labels,
// annotations, addressType, endpoints), as the API server's JSON writes them: for the healing watch to pass over its
// stored copy (util/answered-versions.ts). Pure.
import { field, isArray, isObject, objectField, type Json, type JsonMember, type JsonObject } from '../core/json.ts';
import { applyRewrite, type SliceRewrite } from '../core/rewrite.ts';

/** A map as Go's encoding/json writes it: keys sorted; undefined where it is written not at all (empty, omitempty). */
function sortedMap(map: JsonObject | undefined): string | undefined {
  if (map === undefined) return undefined;
  const keys = Object.keys(map).sort();
  if (keys.length === 0) return undefined;
  const sorted: Record<string, Json> = {};
  for (const key of keys) sorted[key] = map[key] ?? null;
  return JSON.stringify(sorted);
}

/** Undefined where the object's members cannot be told (no metadata, endpoints that are no list): never passed over. */
export function answeredSliceMembers(rewrite: SliceRewrite): readonly JsonMember[] | undefined {
  const object = applyRewrite(rewrite);
  const metadata = objectField(object, 'metadata');
  const endpoints = field(object, 'endpoints');
  const addressType = field(object, 'addressType');
  if (metadata === undefined || !isArray(endpoints) || typeof addressType !== 'string') return undefined;
  const labels = field(metadata, 'labels');
  const annotations = field(metadata, 'annotations');
  return [
    { name: 'labels', text: sortedMap(isObject(labels) ? labels : undefined) },
    { name: 'annotations', text: sortedMap(isObject(annotations) ? annotations : undefined) },
    { name: 'addressType', text: JSON.stringify(addressType) },
    { name: 'endpoints', text: JSON.stringify(endpoints) },
  ];
}
