// dashboards/shortcut-webhook.json: a Grafana dashboard over the metrics of SPEC §4 and the API server's webhook
// metrics, checked for what Grafana would not tell until someone looks: unknown metrics or labels, panels on top of
// each other, a data source that is not the dashboard's variable.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { chartValues } from './support/chart.ts';
import { at, isRecord, listAt, stringAt } from './support/kube.ts';
import { repoPath } from './support/paths.ts';
import { apiServerHistograms, apiServerMetrics, histogramMetrics, targetLabels, webhookMetrics } from './support/spec.ts';

const dashboard: unknown = JSON.parse(readFileSync(repoPath('dashboards/shortcut-webhook.json'), 'utf8'));
const panels = listAt(dashboard, 'panels').map((panel) => {
  assert.ok(isRecord(panel));
  return panel;
});
const queryPanels = panels.filter((panel) => panel['type'] !== 'row');
const targets = queryPanels.flatMap((panel) => listAt(panel, 'targets').map((target) => ({ panel: stringAt(panel, 'title'), target })));
const exprs = targets.map(({ panel, target }) => ({ panel, expr: stringAt(target, 'expr'), legend: String(at(target, 'legendFormat') ?? '') }));

interface Selector { readonly metric: string; readonly labels: readonly string[] }

/** `metric{label="v", ...}` selectors of a PromQL expression, with the label names they match on. */
function selectorsOf(expr: string): Selector[] {
  const selectors: Selector[] = [];
  for (const match of expr.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g)) {
    const labels = [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"/g)].map((label) => label[1] ?? '');
    selectors.push({ metric: match[1] ?? '', labels });
  }
  return selectors;
}

function baseMetric(name: string): { readonly metric: string; readonly labels: readonly string[] } | undefined {
  for (const [metrics, histograms] of [[webhookMetrics, histogramMetrics], [apiServerMetrics, apiServerHistograms]] as const) {
    if (metrics.has(name)) return { metric: name, labels: metrics.get(name) ?? [] };
    const histogram = /^(.*)_(bucket|sum|count)$/.exec(name);
    if (histogram?.[1] && histograms.has(histogram[1])) return { metric: histogram[1], labels: [...(metrics.get(histogram[1]) ?? []), 'le'] };
  }
  return undefined;
}

describe('the Grafana dashboard', () => {
  test('is an importable dashboard with a stable uid and a Prometheus data source variable', () => {
    assert.equal(at(dashboard, 'uid'), 'shortcut-webhook');
    assert.equal(at(dashboard, 'title'), 'shortcut-webhook');
    assert.equal(at(dashboard, 'id'), null, 'no instance-specific id');
    assert.ok(Number(at(dashboard, 'schemaVersion')) >= 36);
    const variables = listAt(dashboard, 'templating.list');
    const datasource = variables.find((variable) => at(variable, 'name') === 'datasource');
    assert.equal(at(datasource, 'type'), 'datasource');
    assert.equal(at(datasource, 'query'), 'prometheus');
  });

  test('every query goes to the data source variable', () => {
    for (const panel of queryPanels) {
      assert.deepEqual(panel['datasource'], { type: 'prometheus', uid: '${datasource}' }, stringAt(panel, 'title'));
      for (const target of listAt(panel, 'targets')) assert.deepEqual(at(target, 'datasource'), { type: 'prometheus', uid: '${datasource}' });
    }
    for (const variable of listAt(dashboard, 'templating.list')) {
      if (at(variable, 'type') === 'query') assert.deepEqual(at(variable, 'datasource'), { type: 'prometheus', uid: '${datasource}' });
    }
  });

  test('panel ids are unique and no two panels overlap on the 24-column grid', () => {
    const ids = panels.map((panel) => panel['id']);
    assert.equal(new Set(ids).size, ids.length);
    const boxes = panels.map((panel) => ({ title: stringAt(panel, 'title'), ...recordOfNumbers(at(panel, 'gridPos')) }));
    for (const box of boxes) assert.ok(box.x >= 0 && box.w > 0 && box.x + box.w <= 24, `${box.title} fits the grid`);
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        assert.ok(!overlap, `${a.title} overlaps ${b.title}`);
      }
    }
  });

  test('shows every metric of SPEC §4 and the API server\'s latency, rejection and fail-open metrics', () => {
    const shown = new Set(exprs.flatMap(({ expr }) => selectorsOf(expr).map((selector) => baseMetric(selector.metric)?.metric)));
    for (const metric of webhookMetrics.keys()) assert.ok(shown.has(metric), `${metric} is on no panel`);
    for (const metric of [
      'apiserver_admission_webhook_admission_duration_seconds',
      'apiserver_admission_webhook_rejection_count',
      'apiserver_admission_webhook_fail_open_count',
    ]) {
      assert.ok(shown.has(metric), `${metric} is on no panel`);
    }
  });

  test('queries only known metrics, by their own labels', () => {
    for (const { panel, expr } of exprs) {
      const selectors = selectorsOf(expr);
      assert.ok(selectors.length > 0, `${panel}: no metric selector in ${expr}`);
      for (const selector of selectors) {
        const known = baseMetric(selector.metric);
        assert.ok(known, `${panel}: unknown metric ${selector.metric}`);
        for (const label of selector.labels) {
          assert.ok(known.labels.includes(label) || targetLabels.has(label), `${panel}: ${selector.metric} has no label ${label}`);
        }
      }
      for (const by of expr.matchAll(/\bby \(([^)]*)\)/g)) {
        const labels = (by[1] ?? '').split(',').map((label) => label.trim());
        const allowed = new Set([...selectors.flatMap((selector) => baseMetric(selector.metric)?.labels ?? []), ...targetLabels]);
        for (const label of labels) assert.ok(allowed.has(label), `${panel}: grouping by unknown label ${label}`);
      }
    }
  });

  test('filters the API server metrics by the webhook name the chart and manifests register', () => {
    const variable = listAt(dashboard, 'templating.list').find((item) => at(item, 'name') === 'webhook');
    assert.equal(at(variable, 'query'), at(chartValues(), 'webhook.name'));
    for (const { panel, expr } of exprs) {
      for (const selector of selectorsOf(expr)) {
        if (!selector.metric.startsWith('apiserver_')) continue;
        assert.ok(expr.includes('name="$webhook"') && expr.includes('type="admit"'), `${panel}: ${selector.metric} is not filtered to this mutating webhook`);
      }
    }
  });

  test('every expression is balanced and every legend names a label it groups by', () => {
    for (const { panel, expr, legend } of exprs) {
      const depth = [...expr].reduce((level, char) => {
        const next = level + (char === '(' ? 1 : char === ')' ? -1 : 0);
        assert.ok(next >= 0, `${panel}: unbalanced ) in ${expr}`);
        return next;
      }, 0);
      assert.equal(depth, 0, `${panel}: unbalanced ( in ${expr}`);
      const grouped = new Set([...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((by) => (by[1] ?? '').split(',').map((label) => label.trim())));
      for (const used of legend.matchAll(/\{\{(\w+)\}\}/g)) assert.ok(grouped.has(used[1] ?? ''), `${panel}: legend {{${used[1]}}} is not grouped by`);
    }
  });

  test('the label check would catch a made-up label', () => {
    const [selector] = selectorsOf('sum(rate(shortcut_webhook_pairs{namespace="x", reason="conflict"}[5m]))');
    assert.ok(selector);
    const known = baseMetric(selector.metric);
    assert.ok(known && !known.labels.includes('reason') && !targetLabels.has('reason'));
  });
});

function recordOfNumbers(value: unknown): { x: number; y: number; w: number; h: number } {
  assert.ok(isRecord(value));
  const [x, y, w, h] = ['x', 'y', 'w', 'h'].map((key) => value[key]);
  assert.ok([x, y, w, h].every((item) => typeof item === 'number'));
  return { x: Number(x), y: Number(y), w: Number(w), h: Number(h) };
}
