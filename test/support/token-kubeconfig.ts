// A kubeconfig for a bearer token against a test API server, written by rename as a Secret volume swaps its files,
// so a reader polling the path never sees half a file.
import { renameSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { KubeApiServer } from './kube-api-server.ts';

export function writeTokenKubeconfig(path: string, server: KubeApiServer, token: string): string {
  writeFileSync(`${path}.tmp`, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: server.url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  renameSync(`${path}.tmp`, path);
  return path;
}
