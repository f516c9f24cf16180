// Routes the test API server's writes through the real review code, as kube-apiserver calls the webhook.
import jsonpatch from 'fast-json-patch';
import { patchFor } from '../../src/admission/patch.ts';
import { reviewEndpointSlice } from '../../src/admission/review-endpoint-slice.ts';
import { decodeReview } from '../../src/admission/review.ts';
import type { ShortcutView } from '../../src/view/shortcut-view.ts';
import { post1 } from './https-client.ts';
import type { MutateHook } from './kube-api-server.ts';

export function webhookHook(view: ShortcutView, clusterId?: string): MutateHook {
  return (object, context) => {
    // As the admission route: before the first sync the answer is no patch, never a rewrite against an empty view.
    if (context.resource.plural !== 'endpointslices' || !view.isSynced()) return object;
    const decoded = decodeReview({
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: {
        uid: 'test', kind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' }, operation: context.operation, object,
        oldObject: context.old ?? null, options: { fieldManager: context.fieldManager },
      },
    });
    if (!decoded.ok) throw new Error(decoded.message);
    const outcome = reviewEndpointSlice(decoded.value, view.current(), { clusterId });
    if (outcome.kind !== 'patched') return object;
    return jsonpatch.applyPatch(structuredClone(object), patchFor(outcome.rewrite).map((op) => ({ ...op })), true, false).newDocument;
  };
}

/**
 * What kube-apiserver really does: POST an AdmissionReview to the webhook over HTTPS and apply the returned JSON
 * Patch. Until `target()` names a server, or when the call fails, the write goes through unchanged
 * (failurePolicy: Ignore).
 */
export function httpsWebhookHook(target: () => { url: string; ca: Buffer } | undefined): MutateHook {
  let uid = 0;
  return async (object, context) => {
    const webhook = target();
    if (context.resource.plural !== 'endpointslices' || webhook === undefined) return object;
    const review = {
      apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
      request: { uid: `apiserver-${++uid}`, kind: { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' },
        resource: { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
        operation: context.operation, object, oldObject: context.old ?? null, dryRun: context.dryRun,
        // The write's options as kube-apiserver passes them: the field manager says whose write it is.
        ...(context.fieldManager === undefined ? {} : { options: { fieldManager: context.fieldManager } }) },
    };
    try {
      const answer = await post1(`${webhook.url}/mutate/endpointslices?timeout=5s`, webhook.ca, JSON.stringify(review));
      const patch: unknown = JSON.parse(answer.body)?.response?.patch;
      if (typeof patch !== 'string') return object;
      const operations = JSON.parse(Buffer.from(patch, 'base64').toString());
      return jsonpatch.applyPatch(structuredClone(object), operations, true, false).newDocument;
    } catch {
      return object;
    }
  };
}
