// The one shape of "a value, or why not" that crosses module boundaries: decoders, file loaders, the offline run.
export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string };

export function success<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function failure<T = never>(message: string): Result<T> {
  return { ok: false, message };
}
