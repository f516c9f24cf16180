// The controller's ShadowEndpointSlice descriptor: the shadows Liqo's hub writes into this leaf for its direct
// connections, planned by planShadow (the webhook's shadow repair as a guarded patch). Stored shadows follow the view
// this way: a direct network that goes sends its peer's endpoints through the hub within one pass, and back when it
// returns; Liqo's own controller then rewrites the EndpointSlice from the shadow. Optional: a leaf without Liqo's
// offloading CRDs, or a replica not granted them (the chart's switch), leaves this kind idle.
import { MANAGED_BY_LABEL, REFLECTION_MANAGER } from '../core/endpoint-slice.ts';
import { namespacedName } from '../core/object-name.ts';
import { logIgnoredRecords } from '../log.ts';
import { SHADOW_GROUP, SHADOW_PLURAL, SHADOW_VERSION } from '../core/shadow-endpoint-slice.ts';
import { defineResource } from './resource.ts';
import { planShadow, type ShadowWrite } from './shadow-plan.ts';

export const SHADOW_ENDPOINT_SLICES = defineResource<ShadowWrite>({
  group: SHADOW_GROUP,
  version: SHADOW_VERSION,
  plural: SHADOW_PLURAL,
  labelSelector: `${MANAGED_BY_LABEL}=${REFLECTION_MANAGER}`,
  optional: true,
  plan: (item, { snapshot, clusterId }) => planShadow(item, snapshot, { clusterId }),
  patched: (write, { logger, metrics }) => {
    const { edits, addresses } = write;
    const shadow = namespacedName(write.namespace, write.name);
    // Its own write passes the webhook without the records, so the ignored entries are counted here, once.
    metrics.observeIgnored('shadowendpointslices', write.ignored.length);
    logIgnoredRecords(logger, 'shadowendpointslices', shadow, write.ignored);
    logger.info({
      shadow,
      changes: edits.map((edit) => `${edit.from}->${edit.to}`).join(' '),
      addresses: addresses.map((address) => `${address.cluster}:${address.input}=${address.outcome}`).join(' '),
    }, 'stored shadow patched');
  },
  counted: (result, metrics) => metrics.shadowsReconciled.inc({ result }),
});
