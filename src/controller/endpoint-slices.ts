// The controller's EndpointSlice descriptor: Liqo's reflected slices of every namespace, planned by planSlice (the
// webhook's rewrite as a guarded patch).
import { MANAGED_BY_LABEL, REFLECTION_MANAGER } from '../core/endpoint-slice.ts';
import { namespacedName } from '../core/object-name.ts';
import { describeEdits, logIgnoredRecords } from '../log.ts';
import { planSlice, type SliceWrite } from './plan.ts';
import { defineResource } from './resource.ts';

export const ENDPOINT_SLICES = defineResource<SliceWrite>({
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  labelSelector: `${MANAGED_BY_LABEL}=${REFLECTION_MANAGER}`,
  optional: false,
  plan: (item, { snapshot, clusterId }) => planSlice(item, snapshot, { clusterId }),
  patched: (write, { logger, metrics }) => {
    const slice = namespacedName(write.namespace, write.name);
    logger.info({ slice, changes: describeEdits(write.edits) }, 'stored slice patched');
    metrics.observeEdits(write.edits);
    // Its own write passes the webhook without the record, so the ignored entries are counted here, once.
    metrics.observeIgnored('endpointslices', write.ignored.length);
    logIgnoredRecords(logger, 'endpointslices', slice, write.ignored);
  },
  counted: (result, metrics) => metrics.slicesReconciled.inc({ result }),
});
