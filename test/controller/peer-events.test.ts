// What an operator sees of a peer's path (SPEC §10): one Event per transition per peer on the leaf's Connection to it,
// with the objects moved and the time taken, repeats counted on the same Event, the failover time in the histogram,
// and the view's path per peer as a gauge. Against the test API server, events.k8s.io/v1 served.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { PeerEvents } from '../../src/controller/peer-events.ts';
import { EventRecorder, peerObject } from '../../src/kube/events.ts';
import { createLogger } from '../../src/log.ts';
import { Metrics } from '../../src/metrics.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { configurationObject, fcc, tunnelValues } from '../support/builders.ts';
import { directWorldParts } from '../support/direct-world.ts';
import { startKubeApiServer, type KubeApiServer, type ResourceDefinition } from '../support/kube-api-server.ts';
import { waitFor, within } from '../support/wait-for.ts';

const EVENTS: ResourceDefinition = { group: 'events.k8s.io', version: 'v1', plural: 'events', singular: 'event', kind: 'Event', namespaced: true, builtin: true };

interface StoredEvent { reason: string; type: string; note: string; reportingController: string; reportingInstance: string; regarding: { kind: string; name: string; namespace: string; uid?: string }; series?: { count: number } }

async function world(options: { leader?: () => boolean } = {}) {
  const server = await startKubeApiServer();
  server.registerResource(EVENTS);
  const connection = await server.create({ apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection',
    metadata: { name: 'cluster3', namespace: 'liqo-tenant-cluster3', labels: { 'liqo.io/remote-cluster-id': 'cluster3' } }, status: { value: 'Connected' } });
  // A leaf keeps a Configuration for every peer it has a Connection to: the Event regards the Connection all the same.
  await server.create(configurationObject({ peer: 'cluster3', remotePod: '10.60.0.0/16', remotePodView: '10.61.0.0/16' }));
  const config = new KubeConfig();
  config.loadFromFile(await server.kubeconfig());
  const metrics = new Metrics();
  const recorder = new EventRecorder({ config, logger: createLogger('silent'), instance: 'webhook-a', minWriteIntervalMs: 50 });
  let recorded = 0;
  const sink = { record: (event: Parameters<EventRecorder['record']>[0]) => { recorded++; recorder.record(event); } };
  let clock = 1_000_000;
  const peers = new PeerEvents({ clusterId: 'cluster2', events: sink, metrics, logger: createLogger('silent'),
    isLeader: options.leader ?? (() => true), regarding: (peer) => peerObject(config, peer, undefined), now: () => clock });
  const store = new SnapshotStore();
  store.subscribe((snapshot) => peers.observe(snapshot));
  const tunnel = (state: string) => store.publishTunnels(tunnelValues([['cluster3', state]]));
  tunnel('Connected');
  store.publishFccs([fcc({ a: 'cluster2', b: 'cluster3' })]);
  const events = () => server.list({ apiVersion: 'events.k8s.io/v1', kind: 'Event' }) as unknown as StoredEvent[];
  return { server, metrics, recorder, peers, tunnel, events, connection, store, recorded: () => recorded, advance: (ms: number) => { clock += ms; return clock; }, now: () => clock };
}

async function close(w: { server: KubeApiServer; recorder: EventRecorder }): Promise<void> {
  await w.recorder.flush();
  await w.server.close();
}

test('a direct network lost is one Warning Event on the peer\'s Connection, with the objects moved and the time, once the pass is done', async () => {
  const w = await world();
  try {
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_peer_path\{peer="cluster3",path="direct",reason="direct",connection="Connected"\} 1/);
    const observedAt = w.now();
    w.tunnel('Error');
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_peer_path\{peer="cluster3",path="hub",reason="tunnel-down",connection="Error"\} 1/);
    assert.deepEqual(w.events(), [], 'no Event before the pass that moved the objects');
    w.peers.passDone({ startedAt: observedAt, endedAt: w.advance(2500), patched: 412 });
    const [event] = await waitFor(() => (w.events().length === 1 ? w.events() : undefined), { description: 'the Event' });
    assert.equal(event?.type, 'Warning');
    assert.equal(event?.reason, 'DirectNetworkLost');
    assert.equal(event?.reportingController, 'shortcut-webhook');
    assert.equal(event?.reportingInstance, 'webhook-a', 'the replica that wrote it (POD_NAME)');
    assert.deepEqual(event?.regarding, { apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection', namespace: 'liqo-tenant-cluster3', name: 'cluster3', uid: w.connection.metadata?.uid });
    assert.match(event?.note ?? '', /412 stored objects patched in 2\.5 s/);
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_failover_seconds_count\{direction="to-hub"\} 1/);
    // And back: a Normal Event, the other direction's histogram.
    const back = w.now();
    w.tunnel('Connected');
    w.peers.passDone({ startedAt: back, endedAt: w.advance(1000), patched: 412 });
    await waitFor(() => w.events().some((e) => e.reason === 'DirectNetworkRestored' && e.type === 'Normal'), { description: 'restored' });
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_failover_seconds_count\{direction="to-direct"\} 1/);
  } finally {
    await close(w);
  }
});

test('a gateway that stopped reporting is a direct network lost: the Event says so and since when, and peer_path carries connection-stale', async () => {
  const w = await world();
  try {
    const observedAt = w.now();
    const lastHeartbeat = '2026-11-28T12:00:00.000Z';
    w.store.publishTunnels(new Map([['cluster3', { up: false, reason: 'connection-stale', value: 'Connected', connection: 'liqo-tenant-cluster3/cluster3', lastHeartbeat }]]));
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_peer_path\{peer="cluster3",path="hub",reason="connection-stale",connection="connection-stale"\} 1/);
    w.peers.passDone({ startedAt: observedAt, endedAt: w.advance(1200), patched: 7 });
    const [event] = await waitFor(() => (w.events().length === 1 ? w.events() : undefined), { description: 'the Event' });
    assert.equal(event?.reason, 'DirectNetworkLost');
    assert.match(event?.note ?? '', /^traffic to cluster3 goes through the hub \(connection-stale: FCC liqo\/cluster2-cluster3: the leaf's Liqo Connection liqo-tenant-cluster3\/cluster3 to cluster3 reads Connected, but its gateway stopped reporting: no heartbeat since 2026-11-28T12:00:00\.000Z\); 7 stored objects patched in 1\.2 s$/);
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_failover_seconds_count\{direction="to-hub"\} 1/);
  } finally {
    await close(w);
  }
});

test('a flapping tunnel makes one Event per direction whose count grows, not one Event per flap', async () => {
  const w = await world();
  try {
    for (let flap = 0; flap < 5; flap++) {
      for (const state of ['Error', 'Connected']) {
        const at = w.now();
        w.tunnel(state);
        w.peers.passDone({ startedAt: at, endedAt: w.advance(100), patched: 3 });
      }
    }
    await waitFor(() => {
      const lost = w.events().find((e) => e.reason === 'DirectNetworkLost');
      return lost?.series?.count === 5 ? lost : undefined;
    }, { description: 'the lost Event counts five' });
    assert.equal(w.events().length, 2, 'one Event per reason');
    const writes = w.server.requests.filter((r) => r.path.includes('/events'));
    assert.ok(writes.length < 10, `${writes.length} writes for 10 transitions: repeats are merged`);
  } finally {
    await close(w);
  }
});

test('a failover whose pass never came (the replica was not leading) is no Event, and a follower writes none', async () => {
  const w = await world({ leader: () => false });
  try {
    const at = w.now();
    w.tunnel('Error');
    w.peers.passDone({ startedAt: at - 1, endedAt: w.advance(10), patched: 0 });
    assert.deepEqual(w.events(), [], 'a pass that started before the change does not end it');
    w.peers.passDone({ startedAt: at, endedAt: w.advance(10), patched: 1 });
    // The histogram is each replica's; the Event is the leader's only.
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_failover_seconds_count\{direction="to-hub"\} 1/);
    await w.recorder.flush();
    assert.equal(w.server.requests.filter((r) => r.path.includes('/events')).length, 0);
  } finally {
    await close(w);
  }
});

test('where Events may not be created, the product goes on and says so once', async () => {
  const w = await world();
  try {
    w.server.failNext({ pathIncludes: '/events', count: 100 }, 403);
    for (const state of ['Error', 'Connected', 'Error']) {
      const at = w.now();
      w.tunnel(state);
      w.peers.passDone({ startedAt: at, endedAt: w.advance(10), patched: 1 });
    }
    const tries = () => w.server.requests.filter((r) => r.path.includes('/events')).length;
    // Each transition reaches the recorder once the object it regards is read: all three, then their writes.
    await waitFor(() => w.recorded() === 3, { description: 'three transitions recorded' });
    await waitFor(() => tries() > 0, { description: 'a try' });
    const at = w.now();
    w.tunnel('Connected');
    w.peers.passDone({ startedAt: at, endedAt: w.advance(10), patched: 1 });
    await waitFor(() => w.recorded() === 4, { description: 'the fourth recorded' });
    await w.recorder.flush();
    // Four occurrences of two Events: at most one try each while the first refusal was on its way, none after it.
    assert.ok(tries() <= 2, `${tries()} tries`);
    assert.ok(w.server.requests.filter((r) => r.path.includes('/events')).every((r) => r.status === 403));
  } finally {
    await close(w);
  }
});

test('a failover is ended by the first pass that started after it, and its Event says that pass\'s objects and time', async () => {
  const w = await world();
  try {
    const at = w.now();
    w.tunnel('Error');
    // A pass already running when the tunnel went down planned on the view before it: it does not end the failover.
    w.peers.passDone({ startedAt: at - 1, endedAt: w.advance(100), patched: 99 });
    assert.doesNotMatch(await w.metrics.registry.metrics(), /shortcut_webhook_failover_seconds_count\{direction="to-hub"\}/);
    w.peers.passDone({ startedAt: at, endedAt: w.advance(1900), patched: 7 });
    const [event] = await waitFor(() => (w.events().length === 1 ? w.events() : undefined), { description: 'the Event' });
    assert.match(event?.note ?? '', /7 stored objects patched in 2\.0 s/);
  } finally {
    await close(w);
  }
});

test('a failover ended by a pass more than ten minutes later (this replica was not leading) is neither timed nor said', async () => {
  const w = await world();
  try {
    const at = w.now();
    w.tunnel('Error');
    w.peers.passDone({ startedAt: at, endedAt: w.advance(11 * 60_000), patched: 3 });
    assert.doesNotMatch(await w.metrics.registry.metrics(), /shortcut_webhook_failover_seconds_count\{direction="to-hub"\}/);
    // The next transition is said: the stale one was dropped, not kept for later.
    const back = w.now();
    w.tunnel('Connected');
    w.peers.passDone({ startedAt: back, endedAt: w.advance(500), patched: 3 });
    await waitFor(() => w.recorded() === 1, { description: 'the restored Event recorded' });
    await w.recorder.flush();
    assert.deepEqual(w.events().map((e) => e.reason), ['DirectNetworkRestored']);
  } finally {
    await close(w);
  }
});

test('a transition seen while following is said in the log only: the Event is the leader\'s', async () => {
  let leader = false;
  const w = await world({ leader: () => leader });
  try {
    const at = w.now();
    w.tunnel('Error');
    w.peers.passDone({ startedAt: at, endedAt: w.advance(100), patched: 1 });
    leader = true;
    const back = w.now();
    w.tunnel('Connected');
    w.peers.passDone({ startedAt: back, endedAt: w.advance(100), patched: 1 });
    await waitFor(() => w.events().length > 0, { description: 'the leader\'s Event' });
    await w.recorder.flush();
    assert.equal(w.recorded(), 1, 'only the transition seen while leading was recorded');
    assert.deepEqual(w.events().map((e) => e.reason), ['DirectNetworkRestored']);
  } finally {
    await close(w);
  }
});

test('Events are written at most 30 a minute: more distinct ones in a minute are dropped, not queued', async () => {
  const w = await world();
  try {
    for (let i = 0; i < 35; i++) {
      w.recorder.record({ regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'demo', name: `pod-${i}` }, type: 'Normal', reason: 'Test', action: 'Test', note: `event ${i}` });
    }
    await w.recorder.flush();
    assert.equal(w.events().length, 30);
  } finally {
    await close(w);
  }
});

test('an Event deleted under its series (expired, removed) is created again with the next occurrence', async () => {
  const w = await world();
  try {
    const event = { regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'demo', name: 'pod' }, type: 'Normal', reason: 'Test', action: 'Test', note: 'again' } as const;
    w.recorder.record(event);
    await waitFor(() => w.events().length === 1, { description: 'created' });
    w.server.failNext({ pathIncludes: '/events', method: 'PATCH' }, 404);
    w.recorder.record(event);
    await waitFor(() => w.server.requests.filter((r) => r.path.includes('/events') && r.method === 'POST').length === 2, { description: 'created again after the 404' });
  } finally {
    await close(w);
  }
});

test('a setting that keeps the shortcut from being used is one ShortcutUnusable Warning when it appears, not one per new view', async () => {
  const w = await world();
  try {
    // cluster2's remapped CIDR narrower than its pod CIDR: a reason the operator can fix.
    w.store.publishFccs([fcc({ aRemapped: '10.61.0.0/24' })]);
    assert.match(await w.metrics.registry.metrics(), /shortcut_webhook_peer_path\{peer="cluster3",path="hub",reason="prefix-mismatch",connection="Connected"\} 1/);
    await waitFor(() => w.recorded() === 1, { description: 'the ShortcutUnusable recorded' });
    // New views that change nothing of cluster3's state: no new Warning.
    w.store.publishTunnels(tunnelValues([['cluster3', 'Connected'], ['cluster9', 'Connected']]));
    w.store.publishTunnels(tunnelValues([['cluster3', 'Connected'], ['cluster9', 'Error']]));
    // Then a transition, whose Event is asked for last.
    const at = w.now();
    w.store.publishFccs([fcc()]);
    w.peers.passDone({ startedAt: at, endedAt: w.advance(100), patched: 1 });
    await waitFor(() => w.events().some((e) => e.reason === 'DirectNetworkRestored'), { description: 'restored' });
    await w.recorder.flush();
    assert.equal(w.recorded(), 2, 'one ShortcutUnusable, one DirectNetworkRestored');
  } finally {
    await close(w);
  }
});

test('an Event regards the peer\'s Connection, else its Configuration, else the product\'s Deployment', async () => {
  const w = await world();
  try {
    await w.server.create(configurationObject({ peer: 'cluster4' }));
    const config = new KubeConfig();
    config.loadFromFile(await w.server.kubeconfig());
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shortcut-webhook', name: 'shortcut-webhook' };
    const kindOf = async (peer: string) => (await peerObject(config, peer, deployment))?.kind;
    assert.deepEqual([await kindOf('cluster3'), await kindOf('cluster4'), await kindOf('cluster5')], ['Connection', 'Configuration', 'Deployment']);
  } finally {
    await close(w);
  }
});

test('peer_path names the leaf\'s peers, never the leaf itself, which the hub\'s Configurations name like any of its peers', async () => {
  const metrics = new Metrics();
  const peers = new PeerEvents({ clusterId: 'cluster2', events: undefined, metrics, logger: createLogger('silent'), isLeader: () => true, regarding: async () => undefined });
  const store = new SnapshotStore();
  store.subscribe((snapshot) => peers.observe(snapshot));
  // The hub keeps a Configuration for each of its leaves: cluster2 (this leaf), cluster3 and cluster4.
  store.publish(directWorldParts());
  const series = (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('shortcut_webhook_peer_path{'));
  assert.deepEqual(series, [
    'shortcut_webhook_peer_path{peer="cluster3",path="direct",reason="direct",connection="Connected"} 1',
    'shortcut_webhook_peer_path{peer="cluster4",path="direct",reason="direct",connection="Connected"} 1',
  ]);
});

test('a failover and a failback are each one Event and one failover_seconds sample: the passes after them write nothing more', async () => {
  const w = await world();
  try {
    const samples = async (direction: string) => Number(new RegExp(`shortcut_webhook_failover_seconds_count\\{direction="${direction}"\\} (\\d+)`)
      .exec(await w.metrics.registry.metrics())?.[1] ?? 0);
    /** The tunnel goes to `state`, a pass moves the objects, and three more find nothing to do. */
    const moveThenPass = (state: string) => {
      const observedAt = w.now();
      w.tunnel(state);
      w.peers.passDone({ startedAt: observedAt, endedAt: w.advance(2000), patched: 3 });
      for (let pass = 0; pass < 3; pass++) w.peers.passDone({ startedAt: w.advance(1000), endedAt: w.advance(1000), patched: 0 });
    };
    moveThenPass('Error');
    assert.equal(await samples('to-hub'), 1, 'one sample for the failover');
    await waitFor(() => w.events().length === 1, { description: 'the failover\'s Event stored' });
    moveThenPass('Connected');
    assert.equal(await samples('to-direct'), 1, 'one sample for the failback');
    await waitFor(() => w.events().length === 2, { description: 'the failback\'s Event stored' });
    await w.recorder.flush();
    assert.equal(w.recorded(), 2, 'two Events in all');
    assert.deepEqual(w.events().map((e) => [e.reason, e.series?.count]).sort(), [['DirectNetworkLost', undefined], ['DirectNetworkRestored', undefined]]);
  } finally {
    await close(w);
  }
});

test('peer_path follows the path: after a failover the direct series is gone, after the failback the hub one, so an alert on the hub path stops', async () => {
  const w = await world();
  try {
    const series = async () => (await w.metrics.registry.metrics()).split('\n')
      .filter((line) => line.startsWith('shortcut_webhook_peer_path{peer="cluster3"') && !line.endsWith(' 0'));
    assert.deepEqual(await series(), ['shortcut_webhook_peer_path{peer="cluster3",path="direct",reason="direct",connection="Connected"} 1']);
    w.tunnel('Error');
    assert.deepEqual(await series(), ['shortcut_webhook_peer_path{peer="cluster3",path="hub",reason="tunnel-down",connection="Error"} 1']);
    w.tunnel('Connected');
    assert.deepEqual(await series(), ['shortcut_webhook_peer_path{peer="cluster3",path="direct",reason="direct",connection="Connected"} 1']);
  } finally {
    await close(w);
  }
});

test('flush at shutdown writes a repeat the per-Event bound still held back: the Event\'s count says every occurrence', async () => {
  const w = await world();
  const config = new KubeConfig();
  config.loadFromFile(await w.server.kubeconfig());
  // One write per Event a minute: the second occurrence waits for the bound, and the pod stops meanwhile.
  const recorder = new EventRecorder({ config, logger: createLogger('silent'), instance: 'webhook-a', minWriteIntervalMs: 60_000 });
  const regarding = { apiVersion: 'networking.liqo.io/v1beta1', kind: 'Connection', namespace: 'liqo-tenant-cluster3', name: 'cluster3' };
  const lost = { type: 'Warning' as const, reason: 'DirectNetworkLost', action: 'Failover', note: 'traffic to cluster3 goes through the hub', regarding };
  try {
    recorder.record(lost);
    await waitFor(() => w.events().length === 1, { description: 'the first occurrence written' });
    recorder.record(lost);
    await within(recorder.flush(), { description: 'flush' });
    assert.equal(w.events()[0]?.series?.count, 2);
  } finally {
    await close(w);
  }
});

test('peer_path says connection="none" for a peer the leaf has no Connection to, as the reference and the alert read it', async () => {
  const w = await world();
  try {
    w.store.publishTunnels(new Map());
    const series = (await w.metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('shortcut_webhook_peer_path{peer="cluster3"'));
    assert.deepEqual(series, ['shortcut_webhook_peer_path{peer="cluster3",path="direct",reason="direct",connection="none"} 1']);
  } finally {
    await close(w);
  }
});

test('a hub whose reader goes away is one Warning Event naming the hub and hub-not-read, and one Normal when it reads again', async () => {
  const w = await world();
  try {
    // The hub cluster1 reflects into this leaf: its Configuration is what the Event regards.
    await w.server.create(configurationObject({ peer: 'cluster1', remotePod: '10.200.0.0/16', remotePodView: '10.200.0.0/16' }));
    const known = { known: false as const, why: 'not given' };
    w.store.publishHub('cluster1', { ipam: known, fccs: [], away: undefined });
    w.store.publishHub('cluster1', { away: 'every read has failed since then' });
    await waitFor(() => w.events().some((event) => event.reason === 'HubNotRead'), { description: 'the HubNotRead Event' });
    const away = w.events().find((event) => event.reason === 'HubNotRead');
    assert.equal(away?.type, 'Warning');
    assert.match(away?.note ?? '', /objects of hub cluster1 are left alone \(hub-not-read: every read has failed/);
    assert.equal(away?.regarding.name, 'cluster1');
    w.store.publishHub('cluster1', { away: undefined });
    await waitFor(() => w.events().some((event) => event.reason === 'HubRead'), { description: 'the HubRead Event' });
  } finally {
    await close(w);
  }
});
