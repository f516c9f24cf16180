// Kubernetes API access: which kubeconfig, and what an error from client-node means.
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { isObject, objectAt, stringField } from '../core/json.ts';
import { errorMessage } from '../util/errors.ts';
import { createLogger } from '../log.ts';
import { inCluster } from './in-cluster.ts';
import { KubeRequestError } from './lean-client.ts';
import { readKubeConfig, ReloadingKubeConfig } from './reloading-config.ts';

export { FIELD_MANAGER } from './identity.ts';

export interface KubeAccess {
  readonly config: KubeConfig;
  /** Where the config came from, for logs. */
  readonly origin: string;
}

/**
 * A kubeconfig file (or a KUBECONFIG-style list of them, merged as kubectl does: the first file's context wins,
 * missing files are skipped), or the pod's service account. Undefined when neither is there. Read once: serve uses
 * a ReloadingKubeConfig (reloading-config.ts), which reads the same way and follows the files.
 */
export function loadKubeAccess(file: string | undefined, env: NodeJS.ProcessEnv = process.env, userAgent?: string): KubeAccess | undefined {
  if (file === undefined && !inCluster(env)) return undefined;
  const origin = file ?? 'in-cluster service account';
  const config = new ReloadingKubeConfig({
    load: () => {
      const read = readKubeConfig(file, env);
      if (read === undefined) throw new Error('no kubeconfig and not in a pod');
      return read;
    },
    logger: createLogger('silent'), origin, files: [], ...(userAgent === undefined ? {} : { userAgent }),
  });
  return { config, origin };
}

/** The HTTP status of a failed call, whether client-node reports it as ApiException.code or as statusCode. */
export function httpStatus(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (typeof error === 'object' && error !== null && 'statusCode' in error && typeof error.statusCode === 'number') return error.statusCode;
  return undefined;
}

/** The Retry-After header of a failed call (client-node keeps a response's headers on its ApiException, the lean client its value), if any. */
export function retryAfterHeader(error: unknown): string | undefined {
  if (error instanceof KubeRequestError) return error.retryAfter;
  if (!(error instanceof ApiException) || typeof error.headers !== 'object' || error.headers === null) return undefined;
  for (const [name, value] of Object.entries(error.headers)) {
    if (name.toLowerCase() === 'retry-after' && typeof value === 'string') return value;
  }
  return undefined;
}

export function describeError(error: unknown): string {
  const status = httpStatus(error);
  if (error instanceof ApiException) {
    let message = '';
    try {
      const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
      if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') message = body.message;
    } catch {
      // A body that is not a Status: the code alone says enough.
    }
    return `HTTP ${status}${message ? `: ${message}` : ''}`;
  }
  const text = errorMessage(error);
  return status === undefined ? text : `HTTP ${status}: ${text}`;
}

/** A list response as client-node hands it over (untyped): its items and where it stands. */
export interface ListPage {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  /** The token for the next page; undefined on the last one. */
  readonly continueToken: string | undefined;
}

export function readListPage(body: unknown): ListPage {
  const items = isObject(body) && Array.isArray(body.items) ? body.items : [];
  const metadata = isObject(body) ? objectAt(body, 'metadata') : undefined;
  return {
    items,
    resourceVersion: (metadata && stringField(metadata, 'resourceVersion')) ?? '',
    continueToken: (metadata && stringField(metadata, 'continue')) || undefined,
  };
}
