/**
 * The Grafana dashboard (infra/monitoring/dashboard.ts) and its ConfigMap: every panel queries,
 * every query reads only series the operator really exports (names read from a registry that
 * createMetrics() filled, histograms by their _bucket/_sum/_count series) through the
 * `namespace` and `job` variables' selector and names no other variable; and the ConfigMap is
 * synthesized only when monitoring.dashboard.enabled, with the sidecar's labels and the JSON.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { synthesize } from '../../infra/chart.js';
import { DASHBOARD_UID, dashboardJson, dashboardPanelQueries, echoperatorDashboard } from '../../infra/monitoring/dashboard.js';
import { DASHBOARD_FILE } from '../../infra/monitoring/dashboard-configmap.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { manifestsOf } from '../support/manifests.js';
import { exportedSeriesNames, queryProblems } from '../support/promql.js';

/** The variables the contract lets a query name: the test can substitute each of them. */
const ALLOWED_VARIABLES = new Set(['namespace', 'job', '__rate_interval', '__interval', '__range']);
/** The matchers every selector carries. */
const SELECTOR = { namespace: '="$namespace"', job: '="$job"' };

interface JsonTarget {
  expr?: string;
  legendFormat?: string;
  datasource?: { uid?: string };
}
interface JsonPanel {
  type: string;
  id?: number;
  title?: string;
  description?: string;
  targets?: JsonTarget[];
  panels?: JsonPanel[];
  datasource?: { type?: string; uid?: string };
  fieldConfig?: { defaults?: { unit?: string } };
  options?: { legend?: { showLegend?: boolean } };
}

/** The dashboard's panels, rows' own panels included, rows left out. */
function panels(): JsonPanel[] {
  const top = (echoperatorDashboard().panels ?? []) as JsonPanel[];
  return top.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
}

/** The series names the operator exports, as a scrape of a fresh operator shows them. */
async function operatorSeries(): Promise<Set<string>> {
  return exportedSeriesNames(createMetrics({ registry: new Registry() }).registry);
}

describe('dashboard', () => {
  it('has the uid, title and the datasource, namespace and job variables', () => {
    const d = echoperatorDashboard();
    assert.equal(d.uid, DASHBOARD_UID);
    assert.equal(d.title, 'echoperator');
    const vars = d.templating.list ?? [];
    assert.deepEqual(
      vars.map((v) => [v.name, v.type]),
      [
        ['datasource', 'datasource'],
        ['namespace', 'query'],
        ['job', 'query'],
      ],
    );
    assert.equal(vars[0]!.query, 'prometheus');
    assert.equal(vars[1]!.query, 'label_values(echoperator_build_info, namespace)');
    assert.equal(vars[2]!.query, 'label_values(echoperator_build_info{namespace="$namespace"}, job)');
    for (const v of vars.slice(1)) assert.deepEqual(v.datasource, { type: 'prometheus', uid: '${datasource}' });
  });

  it('gives every panel a query, a unit, a description, the datasource variable and a legend', () => {
    const all = panels();
    assert.ok(all.length >= 20, `${all.length} panels`);
    const ids = new Set<number>();
    for (const p of all) {
      const name = `panel ${JSON.stringify(p.title)}`;
      assert.ok(p.targets?.length, `${name} has no query`);
      for (const t of p.targets) {
        assert.ok(t.expr?.trim(), `${name} has an empty query`);
        assert.ok(t.legendFormat?.trim(), `${name}: ${t.expr} has no legend`);
      }
      assert.ok(p.fieldConfig?.defaults?.unit, `${name} has no unit`);
      assert.ok((p.description ?? '').length > 20, `${name} has no description`);
      assert.deepEqual(p.datasource, { type: 'prometheus', uid: '${datasource}' }, name);
      if (p.type !== 'stat') assert.equal(p.options?.legend?.showLegend, true, `${name} hides its legend`);
      assert.ok(p.id !== undefined && !ids.has(p.id), `${name} has no id of its own`);
      ids.add(p.id);
    }
    assert.equal(new Set(all.map((p) => p.title)).size, all.length, 'panel titles are unique');
  });

  it('lists every query of every panel in dashboardPanelQueries()', () => {
    const fromJson = panels().flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    assert.deepEqual(dashboardPanelQueries(), fromJson);
  });

  it('reads only series the operator exports, through the selector, with the allowed variables only', async () => {
    const exported = await operatorSeries();
    const problems = dashboardPanelQueries().flatMap(({ panel, expr }) =>
      queryProblems(expr, exported, SELECTOR, ALLOWED_VARIABLES).map((p) => `${panel}: ${p}`),
    );
    assert.deepEqual(problems, []);
  });

  it('the query check refuses a foreign metric, a missing matcher, a bare name and another variable', async () => {
    const exported = await operatorSeries();
    const problems = (expr: string) => queryProblems(expr, exported, SELECTOR, ALLOWED_VARIABLES);
    assert.deepEqual(problems('sum(rate(workqueue_adds_total{namespace="$namespace", job="$job"}[$__rate_interval]))'), []);
    assert.deepEqual(problems('sum(up{namespace="$namespace", job="$job"})'), ['reads up, which the operator does not export']);
    assert.deepEqual(problems('sum(workqueue_depth{job="$job"})'), ['reads workqueue_depth without namespace="$namespace"']);
    assert.deepEqual(problems('sum(workqueue_depth)'), ['reads no metric', 'reads workqueue_depth without a selector']);
    assert.deepEqual(problems('workqueue_depth{namespace="$namespace", job="$job", pod="$pod"}'), ['names the variable $pod']);
    assert.deepEqual(
      problems(
        'histogram_quantile(0.9, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket{namespace="$namespace", job="$job"}[5m])))',
      ),
      [],
    );
    assert.deepEqual(problems('controller_runtime_reconcile_time_seconds{namespace="$namespace", job="$job"}'), [
      'reads controller_runtime_reconcile_time_seconds, which the operator does not export',
    ]);
  });

  it('is the same JSON on every call', () => {
    assert.equal(dashboardJson(), dashboardJson());
    assert.deepEqual(JSON.parse(dashboardJson()), echoperatorDashboard());
  });
});

describe('dashboard ConfigMap', () => {
  const configMaps = (props: Parameters<typeof synthesize>[0]) =>
    manifestsOf<V1ConfigMap>(synthesize(props).objects, 'ConfigMap').filter((c) => c.metadata?.name?.endsWith('-dashboard'));

  it('is not made by default', () => {
    assert.deepEqual(configMaps({}), []);
    assert.deepEqual(configMaps({ monitoring: { enabled: true, insecureSkipVerify: true } }), []);
  });

  it('holds the dashboard, in its namespace, with the install labels and the sidecar labels', () => {
    const [cm, ...more] = configMaps({
      name: 'echo-a',
      namespace: 'operators',
      labels: { team: 'platform' },
      monitoring: { dashboard: { enabled: true, namespace: 'grafana', labels: { grafana_dashboard: '1', folder: 'operators' } } },
    });
    assert.ok(cm, 'one dashboard ConfigMap');
    assert.equal(more.length, 0);
    assert.equal(cm.metadata?.name, 'echo-a-dashboard');
    assert.equal(cm.metadata?.namespace, 'grafana');
    const labels = cm.metadata?.labels ?? {};
    assert.equal(labels.grafana_dashboard, '1');
    assert.equal(labels.folder, 'operators');
    assert.equal(labels.team, 'platform');
    assert.equal(labels['app.kubernetes.io/instance'], 'echo-a');
    assert.equal(labels['app.kubernetes.io/name'], 'echoperator');
    assert.deepEqual(Object.keys(cm.data ?? {}), [DASHBOARD_FILE]);
    assert.equal(cm.data?.[DASHBOARD_FILE], dashboardJson());
  });

  it("defaults to monitoring's namespace and the grafana_dashboard label", () => {
    const [cm] = configMaps({ namespace: 'operators', monitoring: { namespace: 'monitoring', dashboard: { enabled: true } } });
    assert.equal(cm?.metadata?.namespace, 'monitoring');
    assert.equal(cm?.metadata?.labels?.grafana_dashboard, '1');
  });
});
