// Which link each packet takes, before and after the product (`npm run demo -- datapath`; root, Linux, Go once):
//
// Two real control planes (hub cluster1, leaf cluster2) with Liqo's objects, Liqo's own writer storing the reflected
// EndpointSlices, the real kube-proxy in cluster2's node namespace, and Liqo v1.2.0's data path in network namespaces
// (gateways, wireguard-go tunnels, Liqo's nftables tables and routes generated from those objects): the set-up of
// test/e2e/datapath.test.ts. A client pod of cluster2 probes three ClusterIP Services whose endpoint is web-0 of
// cluster3: `web-fcc` reflected by a hub that sends hub-view addresses, `web-stock` by a stock Liqo hub, `web-direct`
// by a hub using Liqo's own direct connections (alone, Liqo's writer stores no slice for it). Each probe
// is listed with the links its packets crossed; then the product starts, then the direct link dies and comes back
// (cluster2's gateway, running Liqo's connection check, writes its Connection Error and Connected), then that gateway
// freezes (SIGSTOP: its tunnel and its heartbeat stop together, the Connection still reads Connected) and resumes.
// Everything it creates goes when it ends (network namespaces named swdp-*).
import { dataPathUnavailable } from '../test/e2e/support/datapath/netns.ts';
import { CONNECTION_STALE_AFTER_MS, LINKS, PATH_NAMES, Stack } from '../test/e2e/support/datapath/stack.ts';

const PROBES_PER_SERVICE = 3;
const PATHS = PATH_NAMES;

const missing = dataPathUnavailable();
if (missing !== undefined) {
  console.error(`demo datapath: ${missing}`);
  process.exit(1);
}

const began = Date.now();
const elapsed = () => `${((Date.now() - began) / 1000).toFixed(1)} s`;
console.log('starting two control planes, Liqo\'s writer, the data path and kube-proxy (the first run builds them from Go modules) ...');
const stack = await Stack.start((line) => console.log(`  ${line}`));
const shortLink: Record<string, string> = { [LINKS.clientHub]: 'cluster2<->hub', [LINKS.hubServer]: 'hub<->cluster3', [LINKS.direct]: 'cluster2<->cluster3 direct' };

async function round(title: string): Promise<void> {
  console.log(`\n=== ${title} (${elapsed()})`);
  console.log(`${'service'.padEnd(10)} ${'ClusterIP'.padEnd(14)} ${'stored endpoint'.padEnd(16)} ${'probe'.padEnd(6)} ${'answer'.padEnd(8)} links its packets crossed`);
  for (const path of PATHS) {
    const service = stack.services[path];
    const stored = (await stack.storedAddresses(path)).join(',') || '(no slice)';
    for (let i = 1; i <= PROBES_PER_SERVICE; i++) {
      const probe = await stack.probe(path, 500);
      const links = probe.links.map((link) => shortLink[link] ?? link).join(' + ') || '(none)';
      const answer = probe.ok ? `${probe.ms.toFixed(1)} ms` : 'lost';
      console.log(`${service.name.padEnd(10)} ${service.clusterIP.padEnd(14)} ${stored.padEnd(16)} ${String(i).padEnd(6)} ${answer.padEnd(8)} ${links}`);
    }
  }
}

/** The leaf's Connection to cluster3 as stored, and the age of its heartbeat. */
async function connectionLine(): Promise<string> {
  const { value, heartbeat } = await stack.connection();
  const age = heartbeat === undefined ? '' : ` (${((Date.now() - Date.parse(heartbeat)) / 1000).toFixed(1)} s ago, to the second)`;
  return `cluster2's Connection to cluster3: ${value ?? '(no value)'}, heartbeat ${heartbeat ?? '(none)'}${age}`;
}

try {
  console.log(`
  client pod 10.60.0.10 --- cluster2 --[${shortLink[LINKS.clientHub]}]--> hub cluster1 --[${shortLink[LINKS.hubServer]}]--> cluster3 --- web-0 10.60.0.151
                                \\------------------[${shortLink[LINKS.direct]}]------------------/`);
  await round('Liqo alone: the stored slices hold the hub\'s addresses');

  await stack.startProduct();
  for (const path of PATHS) await stack.untilServed(path, '10.61.0.151');
  await round('with shortcut-webhook on cluster2: the slices rewritten to the direct network, kube-proxy following');

  await stack.path.setLink(LINKS.direct, 'down');
  const cut = Date.now();
  await stack.untilConnection('Error');
  const error = Date.now();
  console.log(`\nthe direct link is cut: cluster2's gateway, its PINGs to cluster3's unanswered, wrote its Connection Error ${error - cut} ms later`);
  for (const path of PATHS) await stack.untilServed(path, stack.services[path].throughHub);
  console.log(`the controller sent the three Services through the hub, kube-proxy followed, ${Date.now() - error} ms after the Error`);
  await round('direct link down: back through the hub');

  await stack.path.setLink(LINKS.direct, 'up');
  await stack.untilConnection('Connected');
  for (const path of PATHS) await stack.untilServed(path, '10.61.0.151');
  await round('the link is back: direct again');

  console.log(`\n${await connectionLine()}`);
  const pids = await stack.setDirectGateway('frozen');
  const frozen = Date.now();
  console.log(`cluster2's gateway for the direct network frozen (SIGSTOP to ${pids.length} processes: wireguard-go and the connection check), `
    + `the product's --connection-stale-after is ${CONNECTION_STALE_AFTER_MS / 1000} s`);
  const values = new Set<string>();
  const toHub = await stack.firstReplies(frozen, {
    boundMs: 60_000, probeMs: 200, between: async () => {
      values.add((await stack.connection()).value ?? '(no value)');
    },
  });
  for (const path of PATHS) {
    const ms = toHub.get(path);
    console.log(`  ${stack.services[path].name}: ${ms === undefined ? 'no reply within a minute' : `first reply through the hub ${ms} ms`} after the freeze`);
  }
  console.log(`the Connection read ${[...values].join(', ')} all along; ${await connectionLine()}`);
  await round('the direct gateway frozen: its Connection still Connected, its heartbeat stale, through the hub');

  await stack.setDirectGateway('running');
  const resumed = Date.now();
  console.log('\nthe gateway resumed (SIGCONT): its tunnel and its heartbeat at once');
  await Promise.all(PATHS.map(async (path) => {
    await stack.untilServed(path, '10.61.0.151');
    console.log(`  ${stack.services[path].name}: direct again (stored, and in kube-proxy) ${Date.now() - resumed} ms after the resume`);
  }));
  console.log(await connectionLine());
  await round('the gateway is back: direct again');
} finally {
  await stack.stop();
  console.log(`\ndone in ${elapsed()}; every namespace, link and process of the demo removed`);
}
