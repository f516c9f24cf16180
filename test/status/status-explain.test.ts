// status --addresses and explain speak of an address in one vocabulary (docs/reference.md, "status"): for each address
// of each stored object the same INPUT and OUTPUT, and status's REASON is the reason explain gives (its first word; for
// an address an unusable FCC blocks, that FCC's reason, which explain names after `no-pair:`). status adds only the
// PATH the address takes and the peer it counts for.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connectionObject, sliceObject } from '../support/builders.ts';
import { runCli } from '../support/run-cli.ts';
import { startReadmeWorld, type ReadmeWorld } from './readme-world.ts';

interface StatusRow { resource: string; object: string; input: string; output: string; path: string; reason: string }
interface Explained { slice: string; addresses?: { input: string; output: string; reason: string }[];
  listed?: { input: string; output: string; outcome: string; reason: string | null }[] }

let world: ReadmeWorld;
before(async () => {
  world = await startReadmeWorld();
  // The EndpointSlice Liqo's writer makes from a repaired shadow: cluster3's pod in the leaf's view of cluster3's pods,
  // which the webhook leaves alone (the stock path resolves only the hub's external CIDR).
  await world.leaf.create(sliceObject({ name: 'api-mapped', addresses: [['10.61.0.9']] }));
});
after(async () => world.close());

/** status's rows, and explain's words for the same addresses, object by object. */
async function bothCommands(): Promise<{ rows: StatusRow[]; explained: Map<string, { input: string; output: string; reason: string }[]> }> {
  const env = { KUBECONFIG: await world.leaf.kubeconfig() };
  const hub = ['--shortcuts-kubeconfig', await world.hub.kubeconfig()];
  const status = await runCli(['status', '-n', 'demo', '--addresses', '-o', 'json', ...hub], { env });
  assert.equal(status.code, 0, status.stderr);
  const rows = (JSON.parse(status.stdout) as { addresses: StatusRow[] }).addresses;
  const explained = new Map<string, { input: string; output: string; reason: string }[]>();
  for (const [object, resource] of new Map(rows.map((row) => [row.object, row.resource]))) {
    const kind = resource === 'ShadowEndpointSlice' ? ['--shadows'] : [];
    const run = await runCli(['explain', ...kind, '-n', 'demo', object.slice('demo/'.length), '-o', 'json', ...hub], { env });
    assert.equal(run.code, 0, run.stderr);
    const [slice] = (JSON.parse(run.stdout) as { slices: Explained[] }).slices;
    explained.set(object, slice?.addresses?.map(({ input, output, reason }) => {
      const [words = '', rest = ''] = reason.split(': ');
      // `restored, tunnel-down`: a stored address put back, and why; status names the why.
      const word = words.split(', ').at(-1) ?? words;
      return { input, output, reason: word === 'no-pair' && /^[a-z-]+$/.test(rest) ? rest : word };
    }) ?? slice?.listed?.map(({ input, output, outcome, reason }) => ({ input, output, reason: reason ?? outcome })) ?? []);
  }
  return { rows, explained };
}

async function assertOneVocabulary(): Promise<StatusRow[]> {
  const { rows, explained } = await bothCommands();
  for (const [object, addresses] of explained) {
    assert.deepEqual(rows.filter((row) => row.object === object).map(({ input, output, reason }) => ({ input, output, reason })).sort(byInput),
      [...addresses].sort(byInput), `status and explain on ${object}`);
  }
  return rows;
}

const byInput = (a: { input: string }, b: { input: string }) => a.input.localeCompare(b.input);

test('status --addresses gives each address the INPUT, OUTPUT and reason explain gives it, for both kinds of stored object', async () => {
  const rows = await assertOneVocabulary();
  assert.deepEqual(new Set(rows.map((row) => row.resource)), new Set(['EndpointSlice', 'ShadowEndpointSlice']));
  // A shadow's INPUT is the address as the hub wrote it, in both: the stored one is already repaired.
  assert.deepEqual(rows.filter((row) => row.object === 'demo/api-x7k2p').map((row) => [row.input, row.output]), [['10.63.0.40', '10.60.0.40'], ['10.64.0.7', '10.70.0.21']]);
});

test('an address Liqo\'s direct connections put in a peer\'s range keeps explain\'s reason; only its PATH says direct, or none while the tunnel is down', async () => {
  const mapped = async () => (await assertOneVocabulary()).find((row) => row.object === 'demo/api-mapped');
  assert.deepEqual(await mapped(), { ...await mapped(), path: 'direct', reason: 'not-hub-external' });
  const connection = connectionObject('cluster3', 'Error');
  await world.leaf.updateStatus({ ...connection, metadata: { ...(connection['metadata'] as object), namespace: 'liqo-tenant-cluster3' } });
  assert.deepEqual(await mapped(), { ...await mapped(), path: 'none', reason: 'not-hub-external' });
});
