// /debug/pairs is on the ops port, which any pod of the leaf reaches: it names no file and no credentials'
// location, and with --debug-pairs localhost it answers only a client in the pod (kubectl port-forward), while
// probes and Prometheus keep /healthz, /readyz and /metrics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOpsApp } from '../../src/app.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import type { DebugPairsAccess } from '../../src/server/ops-routes.ts';
import type { SourceReport } from '../../src/server/debug-pairs.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { fcc } from '../support/builders.ts';

const SECRET_PLACES = ['/etc/shortcut-webhook/hub/kubeconfig', '/srv/shortcuts/fcc.yaml', '/srv/hub'];

const CLUSTER_SOURCES: readonly SourceReport[] = [
  {
    cluster: 'shortcuts',
    credentials: { origin: '/etc/shortcut-webhook/hub/kubeconfig', kind: 'kubeconfig', loadedAt: '2026-11-28T12:00:00.000Z', reloads: 1, refused: null,
      reloadProblem: 'cannot read /etc/shortcut-webhook/hub/kubeconfig: EACCES' },
    failing: { since: '2026-11-28T12:00:00.000Z', problem: 'GET https://10.0.0.1:6443/apis/networking.liqo.io/v1beta1/foreignclusterconnections: 403' },
  },
  { cluster: 'local', credentials: { origin: 'in-cluster service account', kind: 'in-cluster', loadedAt: '2026-11-28T12:00:00.000Z', reloads: 0, refused: null, reloadProblem: null }, failing: null },
];
const FILE_SOURCES: readonly SourceReport[] = [
  { files: { shortcuts: ['/srv/shortcuts/fcc.yaml'], hub: ['/srv/hub'] }, failing: { since: '2026-11-28T12:00:00.000Z', problem: 'invalid shortcuts /srv/shortcuts/fcc.yaml#1, line 2, column 1: bad' } },
];

function opsApp(sources: readonly SourceReport[], debugPairs?: DebugPairsAccess) {
  const view = new SnapshotStore();
  view.publishFccs([fcc()]);
  return buildOpsApp({
    view, metrics: new Metrics(), logger: createLogger('silent'), clusterId: 'cluster2', readiness: () => [], sources: () => sources,
    ...(debugPairs === undefined ? {} : { debugPairs }),
  });
}

for (const [mode, sources] of [['cluster', CLUSTER_SOURCES], ['file', FILE_SOURCES]] as const) {
  test(`in ${mode} mode /debug/pairs says what the sources are and how they fare, never where they are`, async () => {
    const app = opsApp(sources);
    try {
      const answer = await app.inject({ url: '/debug/pairs', remoteAddress: '10.60.3.7' });
      assert.equal(answer.statusCode, 200);
      for (const place of SECRET_PLACES) assert.ok(!answer.body.includes(place), `${place} in ${answer.body}`);
      const shown = answer.json().sources;
      if (mode === 'cluster') {
        assert.deepEqual(shown.map((s: { credentials: { kind: string; reloadProblem: string | null } }) => [s.credentials.kind, s.credentials.reloadProblem]),
          [['kubeconfig', 'cannot read kubeconfig: EACCES'], ['in-cluster', null]]);
        assert.equal(shown[0].failing.problem, CLUSTER_SOURCES[0]?.failing?.problem, 'a URL is no file path');
        assert.equal('origin' in shown[0].credentials, false);
      } else {
        assert.deepEqual(shown, [{ files: { shortcuts: 1, hub: 1 }, failing: { since: '2026-11-28T12:00:00.000Z', problem: 'invalid shortcuts fcc.yaml#1, line 2, column 1: bad' } }]);
      }
    } finally {
      await app.close();
    }
  });
}

test('--debug-pairs localhost: a pod gets 403, a client in the pod the page; the probes and /metrics answer everyone', async () => {
  const app = opsApp(CLUSTER_SOURCES, 'localhost');
  try {
    assert.equal((await app.inject({ url: '/debug/pairs', remoteAddress: '10.60.3.7' })).statusCode, 403);
    assert.equal((await app.inject({ url: '/debug/pairs', remoteAddress: '::ffff:10.60.3.7' })).statusCode, 403);
    for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) assert.equal((await app.inject({ url: '/debug/pairs', remoteAddress: local })).statusCode, 200, local);
    for (const url of ['/healthz', '/readyz', '/metrics']) assert.equal((await app.inject({ url, remoteAddress: '10.60.3.7' })).statusCode, 200, url);
  } finally {
    await app.close();
  }
});

test('--debug-pairs off: no such page for anyone, the rest as before', async () => {
  const app = opsApp(CLUSTER_SOURCES, 'off');
  try {
    assert.equal((await app.inject({ url: '/debug/pairs', remoteAddress: '127.0.0.1' })).statusCode, 404);
    assert.equal((await app.inject({ url: '/readyz', remoteAddress: '10.60.3.7' })).statusCode, 200);
  } finally {
    await app.close();
  }
});
