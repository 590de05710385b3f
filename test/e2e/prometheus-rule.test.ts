/**
 * The PrometheusRule against prometheus-operator's own CRD (from its Go module, the version the
 * ServiceMonitor test runs), on a private control plane: the synthesized object, every alert in it
 * (HA on, a certSecret), is applied and kept field for field (the server prunes what the schema
 * does not know, so equality means every field is the CRD's), and a copy with a `for:` that is not
 * a duration is refused, so the schema really validated it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { synthesize, type Manifest } from '../../infra/chart.js';
import type { PrometheusRuleSpec } from '../../infra/monitoring/prometheus-rule.js';
import { ensurePrometheusOperator } from '../../scripts/testbed/controlplane/assets.js';
import { manifestsOf } from '../support/manifests.js';
import { startPrivateControlPlane } from '../support/faults.js';

type PrometheusRule = Manifest & { spec: PrometheusRuleSpec };

test("prometheus-operator's CRD accepts the PrometheusRule as synthesized, and refuses a wrong one", { timeout: 600_000 }, async (t) => {
  const po = await ensurePrometheusOperator((l) => t.diagnostic(l));
  const cp = await startPrivateControlPlane();
  t.after(() => cp.stop());
  const k = cp.kubectl;
  k.ok(['apply', '--server-side', '-f', po.crds]);
  k.ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd/prometheusrules.monitoring.coreos.com']);

  const { objects } = synthesize({
    ha: { enabled: true },
    metrics: { certSecret: 'echoperator-metrics-tls' },
    monitoring: { namespace: 'monitoring', rules: { enabled: true, labels: { release: 'kube-prometheus-stack' } } },
  });
  const [rule] = manifestsOf<PrometheusRule>(objects, 'PrometheusRule');
  assert.ok(rule, 'the install has a PrometheusRule');
  k.ok(['create', 'namespace', 'monitoring']);
  k.ok(['apply', '--server-side', '--validate=strict', '-f', '-'], { input: JSON.stringify(rule) });

  const stored = k.json<PrometheusRule>(['get', 'prometheusrule', rule.metadata.name, '-n', 'monitoring']);
  assert.deepEqual(stored.spec, rule.spec);
  assert.deepEqual(stored.metadata.labels, rule.metadata.labels);
  assert.ok(stored.spec.groups[0]!.rules.length >= 12, 'every alert, the leader and certificate ones included');

  const wrong = structuredClone(rule);
  wrong.metadata.name = `${rule.metadata.name}-wrong`;
  wrong.spec.groups[0]!.rules[0]!.for = 'two minutes';
  const res = k.run(['create', '--dry-run=server', '--validate=strict', '-f', '-'], { input: JSON.stringify(wrong) });
  assert.notEqual(res.code, 0, 'the API server must refuse a for: that is not a duration');
  assert.match(res.stderr, /spec\.groups\[0\]\.rules\[0\]\.for/);
});
