// What the end-to-end tests install and write on the real API server: the shipped manifests as a user applies them,
// and REST paths for objects. Liqo's own CRDs come from the Liqo module (support/liqo.ts).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from './kube-client.ts';

const manifestsDir = new URL('../../../manifests/', import.meta.url).pathname;

/** Every object of manifests/*.yaml (or a folder of it), file by file in name order, as `kubectl apply -f` reads them. */
export function shippedManifests(folder = ''): KubeObject[] {
  const dir = join(manifestsDir, folder);
  return readdirSync(dir).filter((file) => file.endsWith('.yaml')).sort()
    .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
      .map((document) => document.toJS() as KubeObject | null)
      .filter((object): object is KubeObject => object !== null));
}

interface Resource { readonly plural: string; readonly namespaced: boolean }

const resources: Record<string, Resource> = {
  'apiextensions.k8s.io/v1/CustomResourceDefinition': { plural: 'customresourcedefinitions', namespaced: false },
  'v1/Namespace': { plural: 'namespaces', namespaced: false },
  'v1/Node': { plural: 'nodes', namespaced: false },
  'v1/ServiceAccount': { plural: 'serviceaccounts', namespaced: true },
  'v1/Service': { plural: 'services', namespaced: true },
  'v1/Secret': { plural: 'secrets', namespaced: true },
  'v1/ConfigMap': { plural: 'configmaps', namespaced: true },
  'rbac.authorization.k8s.io/v1/ClusterRole': { plural: 'clusterroles', namespaced: false },
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': { plural: 'clusterrolebindings', namespaced: false },
  'rbac.authorization.k8s.io/v1/Role': { plural: 'roles', namespaced: true },
  'rbac.authorization.k8s.io/v1/RoleBinding': { plural: 'rolebindings', namespaced: true },
  'apps/v1/Deployment': { plural: 'deployments', namespaced: true },
  'policy/v1/PodDisruptionBudget': { plural: 'poddisruptionbudgets', namespaced: true },
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': { plural: 'mutatingwebhookconfigurations', namespaced: false },
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': { plural: 'validatingadmissionpolicies', namespaced: false },
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': { plural: 'validatingadmissionpolicybindings', namespaced: false },
  'coordination.k8s.io/v1/Lease': { plural: 'leases', namespaced: true },
  'discovery.k8s.io/v1/EndpointSlice': { plural: 'endpointslices', namespaced: true },
  'networking.liqo.io/v1beta1/ForeignClusterConnection': { plural: 'foreignclusterconnections', namespaced: true },
  'networking.liqo.io/v1beta1/Connection': { plural: 'connections', namespaced: true },
  'networking.liqo.io/v1beta1/Configuration': { plural: 'configurations', namespaced: true },
  'ipam.liqo.io/v1alpha1/IP': { plural: 'ips', namespaced: true },
  'core.liqo.io/v1beta1/ForeignCluster': { plural: 'foreignclusters', namespaced: false },
  'offloading.liqo.io/v1beta1/ShadowEndpointSlice': { plural: 'shadowendpointslices', namespaced: true },
  'offloading.liqo.io/v1beta1/NamespaceMap': { plural: 'namespacemaps', namespaced: true },
};

/** The collection path of an object's kind (in its namespace), or with `name` the object's own path. */
export function pathOf(object: { apiVersion?: unknown; kind?: unknown; metadata?: { namespace?: string; name?: string } }, name?: string): string {
  const key = `${String(object.apiVersion)}/${String(object.kind)}`;
  const resource = resources[key];
  if (resource === undefined) throw new Error(`no REST path known for ${key}`);
  const apiVersion = String(object.apiVersion);
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const namespace = object.metadata?.namespace;
  if (resource.namespaced && namespace === undefined) throw new Error(`${key} needs a namespace`);
  const collection = resource.namespaced ? `${base}/namespaces/${namespace}/${resource.plural}` : `${base}/${resource.plural}`;
  return name === undefined ? collection : `${collection}/${name}`;
}

/** The object's own path. */
export function selfPath(object: KubeObject): string {
  const name = object.metadata?.name;
  if (name === undefined) throw new Error('object without a name');
  return pathOf(object, name);
}
