// The gateways' heartbeats timed on the product's own clock (view/connection-heartbeats.ts), with time moved by hand:
// a Connection rewritten on time never goes stale, a silent one does at the bound and not before, the view is rebuilt
// only when a state changes, and one timer stands for the earliest deadline.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.ts';
import type { TunnelState } from '../../src/core/leaf-views.ts';
import { ConnectionHeartbeats } from '../../src/view/connection-heartbeats.ts';
import { SnapshotStore } from '../../src/view/shortcut-view.ts';
import { connectionObject, heartbeatNow } from '../support/builders.ts';
import { recordingLogger } from '../support/recording-logger.ts';
import { TestTime } from '../support/test-time.ts';

const BOUND = 30_000;
/** The wall clock runs 1.7e12 ms ahead of the monotonic one, as performance.now and Date.now do. */
const WALL_OFFSET = 1_764_000_000_000;

function world(staleAfterMs = BOUND) {
  const time = new TestTime(50_000);
  const wall = () => WALL_OFFSET + time.now();
  const store = new SnapshotStore();
  const { logger, records } = recordingLogger();
  const heartbeats = new ConnectionHeartbeats({ staleAfterMs, logger, publish: (tunnels) => store.publishTunnels(tunnels), time, wallClock: wall });
  const objects = new Map<string, JsonObject>();
  /** The gateway writes its Connection: value and latency, timestamp now (to the second, as stored). */
  const write = (peer: string, options: { value?: string; name?: string; heartbeat?: string | null } = {}) => {
    const name = options.name ?? `gw-${peer}`;
    const object = connectionObject(peer, options.value ?? 'Connected', name, options.heartbeat === undefined ? heartbeatNow(wall()) : options.heartbeat);
    objects.set(`liqo-tenant-${peer}/${name}`, object);
    heartbeats.observe(new Map(objects));
  };
  const state = (peer: string): TunnelState | undefined => store.current().tunnels.get(peer);
  const reason = (peer: string) => {
    const s = state(peer);
    return s === undefined ? undefined : s.up ? 'up' : s.reason;
  };
  return { time, wall, store, records, heartbeats, objects, write, state, reason };
}

test('a Connection rewritten at Liqo\'s cadence never goes stale, and its latency-only rewrites rebuild nothing', () => {
  const w = world();
  w.write('cluster3');
  const version = w.store.current().version;
  // Ten minutes at 12 s, the slowest regular cadence of Liqo's gateway (a pong every 2 s after the 10 s interval).
  for (let i = 0; i < 50; i++) {
    w.time.advance(12_000);
    w.write('cluster3');
    assert.equal(w.reason('cluster3'), 'up');
  }
  // A write lost on the way (the next one comes at the next pong): still within the bound.
  w.time.advance(26_000);
  w.write('cluster3');
  assert.equal(w.reason('cluster3'), 'up');
  assert.equal(w.store.current().version, version, 'no snapshot for a rewrite that changes no state');
});

test('a Connection whose rewrites stop goes stale at the bound, not a millisecond before, and up with the next rewrite', () => {
  const w = world();
  w.write('cluster3');
  w.time.advance(10_000);
  w.write('cluster3');
  const lastSeen = w.wall();
  const version = w.store.current().version;
  w.time.advance(BOUND - 1);
  assert.equal(w.reason('cluster3'), 'up');
  w.time.advance(1);
  assert.deepEqual(w.state('cluster3'), { up: false, reason: 'connection-stale', value: 'Connected', connection: 'liqo-tenant-cluster3/gw-cluster3', lastHeartbeat: new Date(lastSeen).toISOString() });
  assert.equal(w.store.current().version, version + 1, 'the deadline rebuilt the view once');
  w.time.advance(5 * 60_000);
  assert.equal(w.store.current().version, version + 1, 'and no more while it stays silent');
  w.write('cluster3');
  assert.equal(w.reason('cluster3'), 'up');
  assert.equal(w.store.current().version, version + 2);
});

test('a relist of the same objects is no rewrite: the silence is still timed from the last change seen', () => {
  const w = world();
  w.write('cluster3');
  w.time.advance(1000);
  w.write('cluster3');
  w.time.advance(20_000);
  w.heartbeats.observe(new Map(w.objects));
  w.time.advance(BOUND - 20_000);
  assert.equal(w.reason('cluster3'), 'connection-stale');
});

test('at first sight the heartbeat\'s own timestamp is read against the clock, with the bound allowed again for skew', () => {
  const w = world();
  // Older than twice the bound: stale at once.
  w.write('cluster3', { heartbeat: heartbeatNow(w.wall() - 2 * BOUND - 1000) });
  assert.equal(w.reason('cluster3'), 'connection-stale');
  // 40 s old: 20 s left of the allowance.
  w.write('cluster4', { heartbeat: heartbeatNow(w.wall() - 40_000) });
  w.time.advance(19_000);
  assert.equal(w.reason('cluster4'), 'up');
  w.time.advance(1000);
  assert.equal(w.reason('cluster4'), 'connection-stale');
  // A gateway whose clock runs ahead gains nothing past twice the bound.
  w.write('cluster5', { heartbeat: heartbeatNow(w.wall() + 3_600_000) });
  w.time.advance(2 * BOUND - 1);
  assert.equal(w.reason('cluster5'), 'up');
  w.time.advance(1);
  assert.equal(w.reason('cluster5'), 'connection-stale');
});

test('a Connection without heartbeat is judged by its value alone, and the product says once per peer that it cannot see that gateway', () => {
  const w = world();
  w.write('cluster3', { heartbeat: null });
  w.write('cluster3', { heartbeat: null, name: 'gw-cluster3-b' });
  w.time.advance(60 * 60_000);
  w.write('cluster3', { heartbeat: null });
  assert.equal(w.reason('cluster3'), 'up');
  const said = w.records.filter((r) => typeof r.msg === 'string' && r.msg.includes('carries no heartbeat'));
  assert.equal(said.length, 1);
  assert.equal(said[0]?.peer, 'cluster3');
  // A Connection in Error carries none either (Liqo writes a zero time): that is no blindness to report.
  w.write('cluster4', { value: 'Error', heartbeat: null });
  assert.equal(w.reason('cluster4'), 'tunnel-down');
  assert.equal(w.records.filter((r) => typeof r.msg === 'string' && r.msg.includes('carries no heartbeat')).length, 1);
});

test('a value that is not Connected says tunnel-down before any staleness, and one stale Connection of two makes its peer stale', () => {
  const w = world();
  w.write('cluster3');
  w.write('cluster3', { name: 'gw-cluster3-b' });
  w.time.advance(1000);
  w.write('cluster3');
  w.write('cluster3', { name: 'gw-cluster3-b' });
  w.time.advance(20_000);
  w.write('cluster3', { name: 'gw-cluster3-b' });
  w.time.advance(BOUND - 20_000);
  assert.deepEqual(w.state('cluster3'), {
    up: false, reason: 'connection-stale', value: 'Connected', connection: 'liqo-tenant-cluster3/gw-cluster3', lastHeartbeat: new Date(w.wall() - BOUND).toISOString(),
  });
  w.write('cluster3', { name: 'gw-cluster3-b', value: 'Error', heartbeat: null });
  assert.deepEqual(w.state('cluster3'), { up: false, reason: 'tunnel-down', value: 'Error' });
});

test('a pause of the product itself is no gateway\'s silence: after it, each Connection is timed again from the resume', () => {
  const w = world();
  w.write('cluster3');
  w.write('cluster4');
  w.time.advance(1000);
  w.write('cluster3');
  w.time.advance(10_000);
  // cluster4 stops for good; the product is stopped for 40 s, cluster3's heartbeats queue in its watch meanwhile.
  w.time.pause(40_000);
  w.time.advance(0);
  assert.equal(w.reason('cluster3'), 'up', 'the late timer judges nothing stale');
  assert.equal(w.reason('cluster4'), 'up');
  assert.ok(w.records.some((r) => r.msg === 'the Connection heartbeat timer ran late (this process was paused or blocked): their silence is timed again from now'));
  w.write('cluster3');
  w.time.advance(BOUND - 1);
  w.write('cluster3');
  assert.equal(w.reason('cluster4'), 'up');
  w.time.advance(1);
  assert.equal(w.reason('cluster4'), 'connection-stale', 'a gateway silent since goes stale one bound after the resume');
  assert.equal(w.reason('cluster3'), 'up');
  // One already stale stays so across a pause: no flap back to up.
  w.time.pause(120_000);
  w.time.advance(0);
  assert.equal(w.reason('cluster4'), 'connection-stale');
});

test('one timer stands for the earliest deadline, and none with the rule off or once stopped', () => {
  const w = world();
  const mark = w.time.timersSet();
  w.write('cluster3');
  w.time.advance(5000);
  w.write('cluster4');
  assert.deepEqual(w.time.setSince(mark), [2 * BOUND - 5000], 'first sight: twice the bound');
  w.write('cluster3');
  assert.deepEqual(w.time.setSince(mark), [BOUND], 'a rewrite seen: the bound from now, before cluster4\'s first-sight deadline');
  w.heartbeats.stop();
  assert.deepEqual(w.time.setSince(mark), []);

  const off = world(0);
  const offMark = off.time.timersSet();
  off.write('cluster3', { heartbeat: heartbeatNow(off.wall() - 3_600_000) });
  assert.equal(off.reason('cluster3'), 'up');
  assert.deepEqual(off.time.setSince(offMark), []);
});
