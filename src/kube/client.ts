// Kubernetes API access: which kubeconfig, and what an error from client-node means.
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { isObject, objectAt, stringField } from '../core/json.ts';
import { errorMessage } from '../util/errors.ts';
import { createLogger } from '../log.ts';
import { inCluster } from './in-cluster.ts';
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

/**
 * A 429's Retry-After in milliseconds, else undefined. kube-apiserver sends one while it builds its cache of a
 * resource (a first list after start, "storage is (re)initializing") and when priority and fairness sheds a request;
 * client-go waits it out and asks again.
 */
export function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof ApiException) || error.code !== 429) return undefined;
  const headers: Readonly<Record<string, string>> = error.headers ?? {};
  const text = headers['retry-after'] ?? headers['Retry-After'];
  const seconds = text === undefined || text.trim() === '' ? Number.NaN : Number(text);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 10) * 1000 : undefined;
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
