// Section "startup": how long the executable takes to answer, against a bare Node start measured in the same rounds.
//   bare:    `node -e 0`, exec to exit
//   rewrite: `node bin/shortcut-webhook.js rewrite --shortcuts examples/shortcuts.yaml --explain examples/endpointslice.yaml`
//            (the README's example), exec to exit
//   help:    `node bin/shortcut-webhook.js --help`, exec to exit
//   serve:   `node bin/shortcut-webhook.js serve` in file mode (examples/shortcuts.yaml, given certificates), exec to
//            the first 200 of /readyz: the ops port is read from the "serving" log line, then /readyz is asked
//   rewrite from the sources: the same rewrite through tsx, as the bin runs it when src/ changed since the bundle
// It first runs build/bundle.js, as `npm ci` does, so the bin takes the bundle. Rounds run the commands one after
// the other, so the shared machine's noise falls on all alike; each ratio is the median of the per-round ratios to
// that round's bare start, each time the median of the rounds. Prints one JSON line.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCerts } from '../test/support/certs.ts';
import { median, progress, round, sized } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? sized(11, 1));
const SOURCE_ROUNDS = sized(3, 1);
const root = new URL('..', import.meta.url).pathname;
const bin = join(root, 'bin/shortcut-webhook.js');
const REWRITE = ['rewrite', '--shortcuts', 'examples/shortcuts.yaml', '--explain', 'examples/endpointslice.yaml'];

const built = spawnSync(process.execPath, [join(root, 'build/bundle.js')], { cwd: root, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`build/bundle.js failed: ${built.stderr}`);
const dir = mkdtempSync(join(tmpdir(), 'shortcut-bench-startup-'));
const certs = makeCerts(join(dir, 'certs'));
// The sources' path: a copy of the checkout without dist/, so the bin runs src/ through tsx.
const sources = join(dir, 'checkout');
for (const path of ['bin', 'build', 'src', 'examples', 'package.json', 'tsconfig.json']) cpSync(join(root, path), join(sources, path), { recursive: true });
symlinkSync(join(root, 'node_modules'), join(sources, 'node_modules'), 'dir');
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

/** Milliseconds from spawn to exit; a failure or an unexpected output stops the bench. */
function timed(args: readonly string[], cwd = root, expect?: RegExp): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0 || (expect !== undefined && !expect.test(result.stdout))) {
    throw new Error(`node ${args.join(' ')} exited ${result.status}:\n${result.stdout}${result.stderr}`);
  }
  return ms;
}

function readyz(port: number): Promise<number> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path: '/readyz' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', () => resolve(0));
  });
}

/** Milliseconds from spawn to the first 200 of /readyz, then the server is stopped. */
async function serveReady(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--tls-cert', certs.certFile,
    '--tls-key', certs.keyFile, '--shortcuts', 'examples/shortcuts.yaml', '--cluster-id', 'cluster2'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  try {
    const opsPort = await new Promise<number>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const line = output.split('\n').find((candidate) => candidate.includes('"msg":"serving"'));
        if (line === undefined) return;
        child.stdout.off('data', onData);
        const serving: unknown = JSON.parse(line);
        const ops = typeof serving === 'object' && serving !== null && 'ops' in serving && Array.isArray(serving.ops) ? serving.ops[0] : undefined;
        resolve(typeof ops === 'object' && ops !== null && 'port' in ops && typeof ops.port === 'number' ? ops.port : 0);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code} before serving:\n${output}`)));
    });
    // Ready follows the first load of the shortcut files, which may come just after the listen.
    for (let attempt = 0; attempt < 10_000; attempt++) {
      if (await readyz(opsPort) === 200) return performance.now() - started;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`/readyz never answered 200:\n${output}`);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

const EXPLAIN = /10\.63\.0\.151 +10\.61\.0\.151/;
const rounds: { bare: number; rewrite: number; help: number; serve: number }[] = [];
progress(`startup: ${ROUNDS} rounds of bare node, rewrite, --help and serve to /readyz`);
// One round first, not counted: the page cache and the bundle's compile cache are warm for every counted round alike.
timed(['-e', '0']);
timed([bin, ...REWRITE], root, EXPLAIN);
for (let r = 0; r < ROUNDS; r++) {
  const bare = timed(['-e', '0']);
  const rewrite = timed([bin, ...REWRITE], root, EXPLAIN);
  const help = timed([bin, '--help'], root, /Usage/);
  const serve = await serveReady();
  rounds.push({ bare, rewrite, help, serve });
}
const fromSources: number[] = [];
const sourceBare: number[] = [];
for (let r = 0; r < SOURCE_ROUNDS; r++) {
  sourceBare.push(timed(['-e', '0']));
  fromSources.push(timed([join(sources, 'bin/shortcut-webhook.js'), ...REWRITE], sources, EXPLAIN));
}

const ms = (key: 'bare' | 'rewrite' | 'help' | 'serve') => round(median(rounds.map((one) => one[key])), 1);
const ratio = (key: 'rewrite' | 'help' | 'serve') => round(median(rounds.map((one) => one[key] / one.bare)), 2);
console.log(JSON.stringify({
  rounds: ROUNDS,
  bareMs: ms('bare'),
  rewriteMs: ms('rewrite'), rewriteRatio: ratio('rewrite'),
  helpMs: ms('help'), helpRatio: ratio('help'),
  serveReadyMs: ms('serve'), serveReadyRatio: ratio('serve'),
  rewriteFromSourcesMs: round(median(fromSources), 1),
  rewriteFromSourcesRatio: round(median(fromSources.map((value, r) => value / (sourceBare[r] ?? Number.NaN))), 2),
  roundsMs: rounds.map((one) => ({ bare: round(one.bare, 1), rewrite: round(one.rewrite, 1), help: round(one.help, 1), serve: round(one.serve, 1) })),
}));
