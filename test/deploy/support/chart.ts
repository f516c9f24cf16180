// Renders charts/shortcut-webhook with the real helm (scripts/kube-tools.ts): `helm template --include-crds` for the
// objects, `helm install --dry-run=client` for the NOTES (which `helm template` drops). Values go in as a file, as
// users give them with -f; helm merges them over values.yaml and checks them against values.schema.json.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { kubeTools } from '../../../scripts/kube-tools.ts';
import { isRecord, parseManifests, type KubeObject } from './kube.ts';
import { repoPath } from './paths.ts';

export const chartDir = repoPath('charts/shortcut-webhook');

export function readYamlFile(path: string): unknown {
  return parse(readFileSync(path, 'utf8'), { version: '1.1' });
}

export function chartValues(): Record<string, unknown> {
  const values = readYamlFile(join(chartDir, 'values.yaml'));
  assert.ok(isRecord(values));
  return values;
}

/** The Helm release lines the chart is checked with. */
export type HelmLine = 'v4' | 'v3';
export const helmLines: readonly HelmLine[] = ['v4', 'v3'];

export function helmBinary(line: HelmLine): string {
  const tools = kubeTools();
  return line === 'v4' ? tools.helm : tools.helm3;
}

export interface RenderOptions {
  readonly values?: Record<string, unknown>;
  readonly releaseName?: string;
  readonly namespace?: string;
  readonly helm?: HelmLine;
}

export interface RenderedChart {
  readonly objects: readonly KubeObject[];
  /** The text helm printed, for comparing two renders. */
  readonly text: string;
  /** NOTES.txt as `helm install` prints it (rendered on first read). */
  readonly notes: string;
}

export interface HelmRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs helm with the values written to a file and handed over with -f. */
export function runHelm(args: readonly string[], options: RenderOptions = {}): HelmRun {
  const dir = mkdtempSync(join(tmpdir(), 'shortcut-webhook-chart-'));
  try {
    const valuesFile = join(dir, 'values.json');
    writeFileSync(valuesFile, JSON.stringify(options.values ?? {}));
    const result = spawnSync(helmBinary(options.helm ?? 'v4'), [...args, '-f', valuesFile], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      // No kubeconfig, no repositories, no cache outside the temporary folder: the render is offline.
      env: { PATH: process.env['PATH'] ?? '', HOME: dir, KUBECONFIG: join(dir, 'none'), HELM_CACHE_HOME: dir, HELM_CONFIG_HOME: dir, HELM_DATA_HOME: dir },
    });
    assert.equal(result.error, undefined);
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function releaseArgs(options: RenderOptions): string[] {
  return [options.releaseName ?? 'shortcut-webhook', chartDir, '--namespace', options.namespace ?? 'shortcut-webhook'];
}

export function renderChart(options: RenderOptions = {}): RenderedChart {
  const result = runHelm(['template', ...releaseArgs(options), '--include-crds'], options);
  assert.equal(result.status, 0, `helm template failed: ${result.stderr}`);
  let notes: string | undefined;
  return {
    objects: parseManifests(result.stdout, 'helm template'),
    text: result.stdout,
    get notes(): string {
      notes ??= renderNotes(options);
      return notes;
    },
  };
}

function renderNotes(options: RenderOptions): string {
  const result = runHelm(['install', ...releaseArgs(options), '--dry-run=client', '--output', 'json'], options);
  assert.equal(result.status, 0, `helm install --dry-run failed: ${result.stderr}`);
  const release: unknown = JSON.parse(result.stdout);
  assert.ok(isRecord(release) && isRecord(release['info']) && typeof release['info']['notes'] === 'string');
  return release['info']['notes'];
}

/** helm's error for values it must refuse; fails the test when helm renders them. */
export function helmRefusal(options: RenderOptions): string {
  const result = runHelm(['template', ...releaseArgs(options)], options);
  assert.notEqual(result.status, 0, `helm rendered ${JSON.stringify(options.values)}`);
  return result.stderr;
}
