// What runs, said where an operator looks: /metrics' build_info and process metrics, and one version everywhere.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { Metrics } from '../../src/metrics.ts';
import { buildInfo } from '../../src/version.ts';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

test('shortcut_webhook_build_info carries version, commit and Node.js version, and the default process metrics are there', async () => {
  const info = { version: '1.2.3', commit: 'abc123', node: 'v24.0.0' };
  const text = await new Metrics({ build: info, processMetrics: true }).registry.metrics();
  assert.match(text, /^shortcut_webhook_build_info\{version="1\.2\.3",commit="abc123",node="v24\.0\.0"\} 1$/m);
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
    assert.match(text, new RegExp(`^${name} `, 'm'), name);
  }
  const unknown = await new Metrics({ build: { ...info, commit: undefined } }).registry.metrics();
  assert.match(unknown, /^shortcut_webhook_build_info\{version="1\.2\.3",commit="",node="v24\.0\.0"\} 1$/m);
  assert.doesNotMatch(unknown, /^process_cpu_seconds_total/m, 'process metrics are opt-in');
});

test('buildInfo reads the package version and this Node.js', () => {
  const info = buildInfo();
  assert.equal(info.version, (JSON.parse(read('package.json')) as { version: string }).version);
  assert.equal(info.node, process.version);
});

test('the package, the chart\'s appVersion, the image tag and the manifests\' image agree on one version', () => {
  const { version } = JSON.parse(read('package.json')) as { version: string };
  const chart = parse(read('charts/shortcut-webhook/Chart.yaml')) as { appVersion: string; version: string };
  assert.equal(chart.appVersion, version, 'Chart.yaml appVersion');
  const dockerfile = read('Dockerfile');
  assert.equal(/^ARG VERSION=(\S+)$/m.exec(dockerfile)?.[1], version, 'the Dockerfile\'s ARG VERSION');
  assert.match(dockerfile, /org\.opencontainers\.image\.version="\$\{VERSION\}"/);
  assert.match(dockerfile, new RegExp(`docker build -t shortcut-webhook:${version.replaceAll('.', '\\.')} `));
  assert.match(read('manifests/05-deployment.yaml'), new RegExp(`image: shortcut-webhook:${version.replaceAll('.', '\\.')}$`, 'm'));
});

test('Node: engines asks for 22 or newer, and .ci/run runs the suite on 22 and on the image\'s major; npm\'s warnings are not hidden', () => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
  assert.equal(pkg.engines.node, '>=22');
  const ci = read('.ci/run');
  assert.match(ci, /printf '%s\\n' 22 "\$image_node_major"/);
  assert.match(ci, /\.ci\/install-node "\$major"/);
  assert.doesNotMatch(read('.npmrc'), /^\s*loglevel\s*=/m);
});
