// The list-watch of ForeignClusterConnections on one cluster (the leaf, or a hub), in every namespace or in the named
// ones, decoded once per object. A cluster without the FCC CRD holds none: a state of the view, not a failing source.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { decodeFcc, FCC_GROUP, FCC_PLURAL, FCC_VERSION, type ForeignClusterConnection } from '../core/fcc.ts';
import { isObject } from '../core/json.ts';
import { readListPage } from '../kube/client.ts';
import type { Logger } from '../log.ts';
import type { BackoffOptions } from '../util/backoff.ts';
import { keepObject, ListWatch } from './list-watch.ts';

export interface FccWatchOptions {
  readonly config: KubeConfig;
  readonly logger: Logger;
  /** Undefined: every namespace. */
  readonly namespace: string | undefined;
  /** What the log names the watch. */
  readonly name: string;
  /** Every FCC the watch holds, after each list and each burst of events. */
  readonly publish: (fccs: readonly ForeignClusterConnection[]) => void;
  readonly onFresh: () => void;
  readonly onRestart?: () => void;
  readonly backoff?: BackoffOptions;
  readonly watchTimeoutSeconds?: number;
}

export function fccWatch(options: FccWatchOptions): ListWatch<unknown> {
  const { namespace, logger, config } = options;
  const api = config.makeApiClient(CustomObjectsApi);
  const decodedFccs = new WeakMap<object, ForeignClusterConnection>();
  // By object: a watch event replaces one object, so only that one is decoded again, not all 10,000.
  const decoded = (objects: ReadonlyMap<string, unknown>): ForeignClusterConnection[] => {
    const fccs: ForeignClusterConnection[] = [];
    for (const [key, object] of objects) {
      if (!isObject(object)) continue;
      let fcc = decodedFccs.get(object);
      if (fcc === undefined) {
        fcc = decodeFcc(object, key);
        decodedFccs.set(object, fcc);
      }
      fccs.push(fcc);
    }
    return fccs;
  };
  let noFccCrd = false;
  return new ListWatch({
    logger,
    ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
    ...(options.onRestart === undefined ? {} : { onRestart: options.onRestart }),
    name: options.name,
    config,
    watchPath: namespace === undefined
      ? `/apis/${FCC_GROUP}/${FCC_VERSION}/${FCC_PLURAL}`
      : `/apis/${FCC_GROUP}/${FCC_VERSION}/namespaces/${encodeURIComponent(namespace)}/${FCC_PLURAL}`,
    list: async () => readListPage(namespace === undefined
      ? await api.listClusterCustomObject({ group: FCC_GROUP, version: FCC_VERSION, plural: FCC_PLURAL })
      : await api.listNamespacedCustomObject({ group: FCC_GROUP, version: FCC_VERSION, namespace, plural: FCC_PLURAL })),
    keep: keepObject,
    onChange: (objects) => {
      noFccCrd = false;
      options.publish(decoded(objects));
    },
    onFresh: options.onFresh,
    // A stock Liqo hub has no FCC CRD until a shortcut operator is installed: no FCCs, which is a state of the view
    // (the stock path needs none), not a failing source. Looked for again at the backoff's pace. A 403 stays a
    // failure: the hub reader's rules grant FCCs, so a refusal is a deployment to fix.
    onListError: (status) => {
      if (status !== 404) return 'unexpected';
      if (!noFccCrd) {
        noFccCrd = true;
        logger.info({ status, resource: FCC_PLURAL }, 'no ForeignClusterConnections to read on this cluster (their CRD is not installed): only the stock-Liqo path can rewrite');
        options.publish([]);
      }
      return 'expected';
    },
  });
}
