/**
 * The alerts, checked by Prometheus' own tool: `promtool check rules` on the rule file as
 * alertRuleGroups() makes it (HA on and a certSecret, so every alert is there), then `promtool
 * test rules` with the cases of test/fixtures/alerts/cases.ts, each alert's labels and rendered
 * annotations included. An alert without both a firing and a silent case fails here, and so does
 * an alert that reads a series the operator does not export.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { alertNames, alertRuleGroups, type AlertRule } from '../../infra/monitoring/alerts.js';
import { resolveEchoperatorProps } from '../../infra/props.js';
import { ensureDebianPackages } from '../../scripts/ship/apt.js';
import { startedMetricsEndpoint } from '../support/metricsendpoint.js';
import { ALERT_CASES, PROPS, type AlertCase } from '../fixtures/alerts/cases.js';

const r = resolveEchoperatorProps(PROPS);
const rules = alertRuleGroups(r).flatMap((g) => g.rules);

function ruleOf(alert: string, severity: string): AlertRule {
  const found = rules.find((rule) => rule.alert === alert && rule.labels.severity === severity);
  assert.ok(found, `no rule ${alert} of severity ${severity}`);
  return found;
}

/** One promtool test group per case: its series, and the alerts expected at its time. */
function promtoolTest(c: AlertCase): unknown {
  return {
    name: `${c.alert}: ${c.name}`,
    interval: '1m',
    input_series: c.series,
    alert_rule_test: [
      {
        eval_time: c.at,
        alertname: c.alert,
        exp_alerts: c.fires.map((f) => {
          const rule = ruleOf(c.alert, f.severity);
          return {
            exp_labels: { ...rule.labels, ...f.labels },
            exp_annotations: { ...rule.annotations, description: f.description },
          };
        }),
      },
    ],
  };
}

function promtool(args: string[]): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout ?? ''}${run.stderr ?? ''}${run.error?.message ?? ''}` };
}

describe('alerts, through promtool', () => {
  let dir = '';
  before(() => {
    ensureDebianPackages({ prometheus: 'promtool, to check and unit-test the alert rules' }, (line) => process.stderr.write(`${line}\n`));
    dir = mkdtempSync(join(tmpdir(), 'echoperator-alerts-'));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: alertRuleGroups(r) }, { lineWidth: 0 }));
  });
  // Removed by hand: node:test's after() would run before a failing test's message is read.
  process.on('exit', () => dir && rmSync(dir, { recursive: true, force: true }));

  it('promtool check rules accepts the rule file', () => {
    const { status, output } = promtool(['check', 'rules', join(dir, 'rules.yaml')]);
    assert.equal(status, 0, output);
    assert.match(output, new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  it('promtool test rules passes every case', () => {
    writeFileSync(
      join(dir, 'tests.yaml'),
      stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests: ALERT_CASES.map(promtoolTest) }, { lineWidth: 0 }),
    );
    const { status, output } = promtool(['test', 'rules', join(dir, 'tests.yaml')]);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS/);
  });

  it('every alert has a case where it fires and one where it does not; every rule (each severity) fires in one', () => {
    for (const alert of alertNames(r)) {
      const cases = ALERT_CASES.filter((c) => c.alert === alert);
      assert.ok(
        cases.some((c) => c.fires.length > 0),
        `${alert}: no case where it fires`,
      );
      assert.ok(
        cases.some((c) => c.fires.length === 0),
        `${alert}: no case where it stays silent`,
      );
    }
    for (const rule of rules) {
      assert.ok(
        ALERT_CASES.some((c) => c.alert === rule.alert && c.fires.some((f) => f.severity === rule.labels.severity)),
        `${rule.alert} (${rule.labels.severity}): no case where it fires`,
      );
    }
    const unknown = ALERT_CASES.filter((c) => !alertNames(r).includes(c.alert)).map((c) => c.alert);
    assert.deepEqual(unknown, [], 'cases of alerts that do not exist');
  });

  it('the alerts read only series the operator exports, besides up and kube-state-metrics', async (t) => {
    // The endpoint registers its own series (the certificate's expiry among them) when it starts.
    const { metrics } = await startedMetricsEndpoint(t);
    const exported = new Set<string>();
    for (const m of await metrics.registry.getMetricsAsJSON()) {
      exported.add(m.name);
      if (String(m.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(m.name + suffix);
    }
    const read = new Set(rules.flatMap((rule) => [...rule.expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map(([, name]) => name!)));
    const foreign = [...read].filter((name) => !exported.has(name) && name !== 'up' && !name.startsWith('kube_'));
    assert.deepEqual(foreign, []);
  });
});
