// A KubeConfig for a hand-written HTTP server on the loopback: the list-watch tests that script the API server's
// answers byte by byte (a watch that stays silent, a list that fails a given way) instead of using the test API server.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export function localKubeConfig(server: Server): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'test' }], contexts: [{ name: 'test', cluster: 'test', user: 'test' }], currentContext: 'test',
  });
  return config;
}
