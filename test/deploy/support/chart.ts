// Renders charts/shortcut-webhook as `helm template` would (values merged over values.yaml and checked against
// values.schema.json first), with the Go template emulation in go-template.ts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { TemplateSet } from './go-template.ts';
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

export function valuesSchema(): Record<string, unknown> {
  const schema: unknown = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8'));
  assert.ok(isRecord(schema));
  return schema;
}

/** Helm's coalescing: maps merge, null deletes, anything else replaces. */
export function mergeValues(base: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    const current = merged[key];
    if (value === null) delete merged[key];
    else if (isRecord(value) && isRecord(current)) merged[key] = mergeValues(current, value);
    else merged[key] = value;
  }
  return merged;
}

export function schemaErrors(values: unknown): string[] {
  const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(valuesSchema());
  if (validate(values)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}

export interface RenderOptions {
  readonly values?: Record<string, unknown>;
  readonly releaseName?: string;
  readonly namespace?: string;
}

export interface RenderedChart {
  readonly objects: readonly KubeObject[];
  /** Rendered text of each template file that produced output. */
  readonly files: ReadonlyMap<string, string>;
  readonly notes: string;
  readonly values: Record<string, unknown>;
}

function templateFiles(): string[] {
  return readdirSync(join(chartDir, 'templates')).sort();
}

export function loadTemplates(): TemplateSet {
  const set = new TemplateSet();
  for (const file of templateFiles()) set.add(file, readFileSync(join(chartDir, 'templates', file), 'utf8'));
  return set;
}

export function renderChart(options: RenderOptions = {}): RenderedChart {
  const values = mergeValues(chartValues(), options.values ?? {});
  assert.deepEqual(schemaErrors(values), [], 'values do not match values.schema.json');
  const chart = readYamlFile(join(chartDir, 'Chart.yaml'));
  assert.ok(isRecord(chart));
  const releaseName = options.releaseName ?? 'shortcut-webhook';
  const namespace = options.namespace ?? 'shortcut-webhook';
  const context = {
    Values: values,
    Release: { Name: releaseName, Namespace: namespace, Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1n },
    Chart: { Name: chart['name'], Version: chart['version'], AppVersion: chart['appVersion'], Description: chart['description'] },
  };
  const set = loadTemplates();
  const files = new Map<string, string>();
  const objects: KubeObject[] = [];
  let notes = '';
  for (const file of templateFiles()) {
    if (file.startsWith('_')) continue;
    const text = set.render(file, context);
    if (file === 'NOTES.txt') {
      notes = text;
      continue;
    }
    if (text.trim() === '') continue;
    files.set(file, text);
    objects.push(...parseManifests(text, `templates/${file}`));
  }
  return { objects, files, notes, values };
}
