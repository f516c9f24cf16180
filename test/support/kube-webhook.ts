// Routes the test API server's writes through the real review code, as kube-apiserver calls the webhook.
import jsonpatch from 'fast-json-patch';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview } from '../../src/admission/review.ts';
import type { ShortcutView } from '../../src/view/shortcut-view.ts';
import type { MutateHook } from './kube-api-server.ts';

export function webhookHook(view: ShortcutView, clusterId?: string): MutateHook {
  return (object, context) => {
    if (context.resource.plural !== 'endpointslices') return object;
    const decoded = decodeReview({
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: { uid: 'test', kind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' }, operation: context.operation, object },
    });
    if (!decoded.ok) throw new Error(decoded.message);
    const outcome = reviewEndpointSlice(decoded.request, view.current(), { clusterId });
    if (outcome.kind !== 'patched') return object;
    return jsonpatch.applyPatch(structuredClone(object), outcome.patch.map((op) => ({ ...op })), true, false).newDocument;
  };
}
