// Traffic takes the shortcut: the product's rewrite, followed to the packets. Two real control planes (hub cluster1,
// leaf cluster2) with Liqo's CRDs and objects, Liqo's own writer storing the reflected EndpointSlices, the real
// kube-proxy (nftables mode) in cluster2's node namespace programming the two ClusterIP Services from them, and a
// miniature of Liqo v1.2.0's data path in network namespaces (support/datapath: gateways, wireguard-go tunnels, the
// nftables tables and routes Liqo installs, generated from the Liqo objects stored in those API servers). A client
// pod of cluster2 sends UDP probes to each ClusterIP; a pod of cluster3 echoes them; the packets each peering's
// gateway forwards into and out of its tunnel are counted per link. Liqo's connection check runs in the two gateways
// of the direct network (support/datapath/conncheck.ts): cluster2's writes its Connection (Error when the link dies,
// Connected when it is back, the latency heartbeat meanwhile), and freezing that gateway stops its tunnel and its
// heartbeat at once. Service `web-fcc` is reflected by a hub that sends hub-view addresses (the FCC path), `web-stock`
// by a stock Liqo hub (its IPAM's allocation, the stock path), `web-direct` by a hub using Liqo's own direct
// connections (the ShadowEndpointSlice repair). Each test builds on the state the previous one left.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dataPathToolsBuilt } from './datapath-tools/build.ts';
import { Lab, dataPathUnavailable } from './support/datapath/netns.ts';
import { goAvailable } from './support/go-build.ts';
import { CONNECTION_STALE_AFTER_MS, LINKS, PATH_NAMES, Stack, WEB, type BatchResult, type PathName } from './support/datapath/stack.ts';
import { skipReason } from './support/skip.ts';

/** Probes per Service and phase: each crosses each link it takes twice (the probe and its echo). */
const PROBES = 20;
const PATHS: readonly PathName[] = PATH_NAMES;
/** Probes to a Service with no endpoint: each waits for nothing. */
const LOST_PROBES = 5;
const LOST_PROBE_MS = 300;
/** How long a probe waits for its echo while the path is being switched over. */
const SWITCH_PROBE_MS = 200;
const SWITCH_BOUND_MS = 30_000;

/** Outside CI a machine that cannot lay out the data path skips it and says why; in CI (CI=true) that is a failure. */
function dataPathSkip(): string | false {
  const missing = dataPathUnavailable()
    ?? (goAvailable() || dataPathToolsBuilt() ? undefined : 'Go is not installed: the data path builds wireguard-go and kube-proxy from Go modules (install Go 1.26)');
  if (missing === undefined || process.env.CI) return false;
  process.stdout.write(`# data-path e2e skipped: ${missing}\n`);
  return missing;
}

const skip = skipReason() || dataPathSkip();

function hubOnly(result: BatchResult): void {
  assert.equal(result.answered, result.sent, 'every probe answered');
  assert.deepEqual(result.counts, { [LINKS.clientHub]: 2 * result.sent, [LINKS.hubServer]: 2 * result.sent, [LINKS.direct]: 0 },
    'each probe and its echo crossed both hub tunnels, none the direct one');
}

function directOnly(result: BatchResult): void {
  assert.equal(result.answered, result.sent, 'every probe answered');
  assert.deepEqual(result.counts, { [LINKS.clientHub]: 0, [LINKS.hubServer]: 0, [LINKS.direct]: 2 * result.sent },
    'each probe and its echo crossed the direct tunnel only');
}

function say(line: string): void {
  process.stdout.write(`# datapath: ${line}\n`);
}

describe('traffic takes the shortcut: a ClusterIP through the real kube-proxy and Liqo\'s data path in network namespaces', { skip }, () => {
  let stack: Stack | undefined;
  let tag: string | undefined;
  const started = Date.now();
  const the = (): Stack => {
    if (stack === undefined) throw new Error('the stack did not start');
    return stack;
  };

  before(async () => {
    const missing = dataPathUnavailable();
    if (missing !== undefined) throw new Error(`CI=true and the data path cannot be laid out here: ${missing}`);
    stack = await Stack.start(say);
    tag = stack.path.lab.tag;
  });

  after(async () => {
    const pids = stack?.path.lab.pids() ?? [];
    await stack?.stop();
    say(`the data-path suite took ${Date.now() - started} ms`);
    if (tag === undefined) return;
    assert.deepEqual(Lab.existing(tag), [], 'no namespace of this run is left');
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    assert.deepEqual(alive, [], 'no process of this run is left');
  });

  test('without the product: Liqo\'s stored slices send two Services through the hub, over both of its tunnels, and leave the third with no endpoint', async () => {
    const s = the();
    assert.deepEqual(await s.storedAddresses('fcc'), [WEB.hubView]);
    assert.deepEqual(await s.storedAddresses('stock'), [WEB.leafViewOfAllocated]);
    for (const path of ['fcc', 'stock'] as const) {
      const result = await s.probeBatch(path, PROBES);
      say(`${path}, no product: ${JSON.stringify(result.counts)} (${result.answered}/${result.sent} answered)`);
      hubOnly(result);
    }
    // Liqo's direct connections with a hub that remapped cluster3: its writer fails on the shadow, stores nothing.
    assert.deepEqual(await s.storedAddresses('direct'), [], 'no EndpointSlice for web-direct');
    const lost = await s.probeBatch('direct', LOST_PROBES, LOST_PROBE_MS);
    say(`direct, no product: ${JSON.stringify(lost.counts)} (${lost.answered}/${lost.sent} answered)`);
    assert.equal(lost.answered, 0, 'no probe to a Service without endpoints is answered');
    assert.deepEqual(lost.counts, { [LINKS.clientHub]: 0, [LINKS.hubServer]: 0, [LINKS.direct]: 0 }, 'nothing leaves cluster2');
  });

  test('with the product: the reflected slices are rewritten, kube-proxy follows, and the packets take the direct tunnel only', async () => {
    const s = the();
    await s.startProduct();
    for (const path of PATHS) await s.untilServed(path, WEB.direct);
    for (const path of PATHS) {
      const result = await s.probeBatch(path, PROBES);
      say(`${path}, with the product: ${JSON.stringify(result.counts)} (${result.answered}/${result.sent} answered)`);
      directOnly(result);
    }
  });

  test('the direct link dies: black-holed until its gateway writes the Connection Error, then back through the hub once the controller restored the slices', async () => {
    const s = the();
    await s.path.setLink(LINKS.direct, 'down');
    // Still Connected until the gateway's connection check has missed its PONGs: the Services still point at the dead tunnel.
    for (const path of PATHS) assert.equal((await s.probeBatch(path, 1, SWITCH_PROBE_MS)).answered, 0, `${path}: a probe over the dead link is lost`);
    await s.untilConnection('Error');
    const error = Date.now();
    const firstReply = await firstReplies(s, error);
    for (const path of PATHS) say(`${path}: first reply through the hub ${firstReply.get(path)} ms after the gateway wrote the Connection Error`);
    for (const path of PATHS) assert.deepEqual(await s.storedAddresses(path), [s.services[path].throughHub], `${path}: stored through the hub`);
    for (const path of PATHS) {
      const result = await s.probeBatch(path, PROBES);
      say(`${path}, direct link down: ${JSON.stringify(result.counts)} (${result.answered}/${result.sent} answered)`);
      hubOnly(result);
    }
  });

  test('the link returns: its gateway writes the Connection Connected, the slices are rewritten again and the packets take the direct tunnel only', async () => {
    const s = the();
    await s.path.setLink(LINKS.direct, 'up');
    await s.untilConnection('Connected');
    for (const path of PATHS) await s.untilServed(path, WEB.direct);
    for (const path of PATHS) {
      const result = await s.probeBatch(path, PROBES);
      say(`${path}, link back: ${JSON.stringify(result.counts)} (${result.answered}/${result.sent} answered)`);
      directOnly(result);
    }
  });

  // The gateway itself hangs (SIGSTOP: its tunnel and its connection check at once). Nothing writes its Connection,
  // which reads Connected all along; only its heartbeat's silence tells, and the product moves the Services once it
  // outlasts --connection-stale-after.
  let silentHeartbeat: string | undefined;

  test('the direct gateway freezes: its Connection still reads Connected, its heartbeat stops, and the packets take the hub once it is stale', async () => {
    const s = the();
    await s.setDirectGateway('frozen');
    const frozen = Date.now();
    const values = new Set<string | undefined>();
    const firstReply = await firstReplies(s, frozen, async () => {
      values.add((await s.connection()).value);
    });
    for (const path of PATHS) say(`${path}: first reply through the hub ${firstReply.get(path)} ms after the gateway froze (--connection-stale-after ${CONNECTION_STALE_AFTER_MS} ms)`);
    silentHeartbeat = (await s.connection()).heartbeat;
    for (const path of PATHS) assert.deepEqual(await s.storedAddresses(path), [s.services[path].throughHub], `${path}: stored through the hub`);
    for (const path of PATHS) {
      const result = await s.probeBatch(path, PROBES);
      say(`${path}, gateway frozen: ${JSON.stringify(result.counts)} (${result.answered}/${result.sent} answered)`);
      hubOnly(result);
    }
    const connection = await s.connection();
    values.add(connection.value);
    assert.deepEqual([...values], ['Connected'], 'the Connection read Connected while the traffic moved');
    assert.equal(connection.heartbeat, silentHeartbeat, 'no heartbeat while the gateway is frozen');
  });

  test('the direct gateway resumes: its heartbeat comes back, the slices are rewritten again and the packets take the direct tunnel only', async () => {
    const s = the();
    for (const path of PATHS) assert.deepEqual(await s.storedAddresses(path), [s.services[path].throughHub], `${path}: through the hub while the gateway is frozen`);
    await s.setDirectGateway('running');
    const resumed = Date.now();
    for (const path of PATHS) await s.untilServed(path, WEB.direct);
    say(`the three Services direct again (stored and in kube-proxy) ${Date.now() - resumed} ms after the gateway resumed`);
    const connection = await s.connection();
    assert.equal(connection.value, 'Connected');
    assert.notEqual(connection.heartbeat, silentHeartbeat, 'the gateway rewrote its heartbeat');
    for (const path of PATHS) {
      const result = await s.probeBatch(path, PROBES);
      say(`${path}, gateway resumed: ${JSON.stringify(result.counts)} (${result.answered}/${result.sent} answered)`);
      directOnly(result);
    }
  });
});

/** Stack.firstReplies within the switch bound, each Service answered. */
async function firstReplies(s: Stack, since: number, between?: () => Promise<void>): Promise<Map<PathName, number>> {
  const firstReply = await s.firstReplies(since, { boundMs: SWITCH_BOUND_MS, probeMs: SWITCH_PROBE_MS, ...(between === undefined ? {} : { between }) });
  for (const path of PATHS) assert.ok(firstReply.has(path), `${path}: an answer within ${SWITCH_BOUND_MS} ms`);
  return firstReply;
}
