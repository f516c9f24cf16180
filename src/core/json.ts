// JSON values as they arrive from the wire: narrowed from `unknown`, never cast.
export type Json = null | boolean | number | string | readonly Json[] | JsonObject;
export interface JsonObject { readonly [key: string]: Json }

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isArray(value: unknown): value is readonly Json[] {
  return Array.isArray(value);
}

/** Own property only: keys such as `constructor` or `__proto__` must never reach the prototype. */
export function field(object: JsonObject, key: string): Json | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

export function stringField(object: JsonObject, key: string): string | undefined {
  const value = field(object, key);
  return typeof value === 'string' ? value : undefined;
}

export function objectField(object: JsonObject, key: string): JsonObject | undefined {
  const value = field(object, key);
  return isObject(value) ? value : undefined;
}

/** Follows a path of object keys; undefined as soon as a step is missing or not an object. */
export function objectAt(object: JsonObject, ...path: readonly string[]): JsonObject | undefined {
  let current: JsonObject | undefined = object;
  for (const key of path) {
    if (current === undefined) return undefined;
    current = objectField(current, key);
  }
  return current;
}

/** An annotation's JSON object, or undefined for anything else (absent, not JSON, another shape): never a throw. */
export function parseJsonObject(text: Json | undefined): JsonObject | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isObject(parsed) ? parsed : undefined;
}

/** A member of a JSON object as its writer writes it: its name, and its value's JSON text (undefined: not written). */
export interface JsonMember {
  readonly name: string;
  readonly text: string | undefined;
}
