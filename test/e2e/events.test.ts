// The Events the leader writes, on a real kube-apiserver: an events.k8s.io/v1 Event is created as the server
// validates it, and its repeats are counted in its series, the one field the server lets an update change (its note
// is immutable: a patch of it is refused 422, which the test API server does not know).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { EventRecorder } from '../../src/kube/events.ts';
import { createLogger } from '../../src/log.ts';
import { waitFor } from '../support/wait-for.ts';
import { kubernetesVersion } from './controlplane/build.ts';
import { startControlPlane, type ControlPlane } from './support/control-plane.ts';
import { skipReason } from './support/skip.ts';

interface StoredEvent { reason: string; type: string; note: string; reportingController: string; series?: { count: number } }

describe(`Events on a real kube-apiserver ${kubernetesVersion()}`, { skip: skipReason() }, () => {
  let cp: ControlPlane;
  before(async () => { cp = await startControlPlane(); });
  after(async () => { await cp?.stop(); });

  test('an Event is created, and its repeats counted in its series on the stored Event', async () => {
    const config = new KubeConfig();
    config.loadFromFile(cp.adminKubeconfig);
    const recorder = new EventRecorder({ config, logger: createLogger('silent'), instance: 'webhook-0', minWriteIntervalMs: 50 });
    const regarding = { apiVersion: 'v1', kind: 'Namespace', namespace: 'default', name: 'default' };
    const events = async () => (await cp.admin.get<{ items: StoredEvent[] }>('/apis/events.k8s.io/v1/namespaces/default/events')).items
      .filter((event) => event.reportingController === 'shortcut-webhook');
    try {
      recorder.record({ regarding, type: 'Warning', reason: 'DirectNetworkLost', action: 'Failover', note: 'traffic to cluster3 goes through the hub (first)' });
      await waitFor(async () => (await events()).length === 1, { description: 'the Event created' });
      recorder.record({ regarding, type: 'Warning', reason: 'DirectNetworkLost', action: 'Failover', note: 'traffic to cluster3 goes through the hub (second)' });
      recorder.record({ regarding, type: 'Warning', reason: 'DirectNetworkLost', action: 'Failover', note: 'traffic to cluster3 goes through the hub (third)' });
      const [counted] = await waitFor(async () => {
        const stored = await events();
        return stored[0]?.series?.count === 3 ? stored : undefined;
      }, { description: 'the repeats counted on the one Event', timeoutMs: 20_000 });
      assert.equal(counted?.note, 'traffic to cluster3 goes through the hub (first)', 'the note stays the first occurrence\'s');
      assert.equal((await events()).length, 1);
    } finally {
      await recorder.flush();
    }
  });
});
