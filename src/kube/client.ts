// Kubernetes API access: which kubeconfig, and what an error from client-node means.
import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import { ApiException, KubeConfig, type RequestContext } from '@kubernetes/client-node';
import { isObject, objectAt, stringField } from '../core/json.ts';
import { errorMessage } from '../util/errors.ts';
import { inCluster } from './in-cluster.ts';

/** How every write names the product in managedFields (fieldManager) and API servers' audit logs (User-Agent). */
export const FIELD_MANAGER = 'shortcut-webhook';

const WRITES: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A KubeConfig whose every request says who sends it: `User-Agent: shortcut-webhook/<version>` instead of
 * node-fetch's `node-fetch/1.0`, and `fieldManager=shortcut-webhook` on each write that does not name one (the
 * Lease, too; managedFields said `node-fetch`). client-node 1.4 calls applySecurityAuthentication with each API
 * client request's RequestContext, and applyToFetchOptions for its Watch: the two places every request passes.
 */
class ProductKubeConfig extends KubeConfig {
  constructor(private readonly userAgent: string) {
    super();
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('User-Agent', this.userAgent);
    if (WRITES.has(context.getHttpMethod()) && !new URL(context.getUrl()).searchParams.has('fieldManager')) {
      context.setQueryParam('fieldManager', FIELD_MANAGER);
    }
  }

  override async applyToFetchOptions(opts: Parameters<KubeConfig['applyToFetchOptions']>[0]): Promise<Awaited<ReturnType<KubeConfig['applyToFetchOptions']>>> {
    const init = await super.applyToFetchOptions(opts);
    const { headers } = init;
    // client-node returns node-fetch's Headers; anything else is rebuilt as a record with the header added.
    if (headers !== undefined && !Array.isArray(headers) && typeof headers.set === 'function') headers.set('User-Agent', this.userAgent);
    else init.headers = { ...Object.fromEntries(Array.isArray(headers) ? headers.map(([key = '', value = '']) => [key, value]) : Object.entries(headers ?? {})), 'User-Agent': this.userAgent };
    return init;
  }
}

export interface KubeAccess {
  readonly config: KubeConfig;
  /** Where the config came from, for logs. */
  readonly origin: string;
}

/**
 * A kubeconfig file (or a KUBECONFIG-style list of them, merged as kubectl does: the first file's context wins,
 * missing files are skipped), or the pod's service account. Undefined when neither is there.
 */
export function loadKubeAccess(file: string | undefined, env: NodeJS.ProcessEnv = process.env, userAgent = `${FIELD_MANAGER}/unknown`): KubeAccess | undefined {
  const config = new ProductKubeConfig(userAgent);
  if (file !== undefined) {
    const files = file.split(delimiter).filter((path) => path !== '');
    const present = files.length > 1 ? files.filter((path) => existsSync(path)) : files;
    const [first, ...rest] = present;
    if (first === undefined) throw new Error(`none of the kubeconfig files exists: ${file}`);
    config.loadFromFile(first);
    for (const path of rest) {
      const more = new KubeConfig();
      more.loadFromFile(path);
      config.mergeConfig(more, true);
    }
    return { config, origin: file };
  }
  if (!inCluster(env)) return undefined;
  config.loadFromCluster();
  return { config, origin: 'in-cluster service account' };
}

/** The HTTP status of a failed call, whether client-node reports it as ApiException.code or as statusCode. */
export function httpStatus(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (typeof error === 'object' && error !== null && 'statusCode' in error && typeof error.statusCode === 'number') return error.statusCode;
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
