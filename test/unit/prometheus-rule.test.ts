/**
 * The opt-in PrometheusRule as the install synthesizes it: absent by default, and with
 * monitoring.rules.enabled one object of prometheus-operator's kind, named, placed and labelled
 * as the props say, carrying alertRuleGroups() unchanged (the alerts promtool tests).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { synthesize, type Manifest } from '../../infra/chart.js';
import { alertRuleGroups } from '../../infra/monitoring/alerts.js';
import { resolveEchoperatorProps, type EchoperatorProps } from '../../infra/props.js';

const rulesOf = (props: EchoperatorProps): Manifest[] => synthesize(props).objects.filter((o) => o.kind === 'PrometheusRule');

describe('PrometheusRule', () => {
  it('is not made unless monitoring.rules.enabled, even with the ServiceMonitor on', () => {
    assert.deepEqual(rulesOf({}), []);
    assert.deepEqual(rulesOf({ monitoring: { enabled: true, insecureSkipVerify: true, rules: { enabled: false } } }), []);
  });

  it("carries the alerts, in monitoring.namespace, with the install's labels and the rules' labels", () => {
    const props: EchoperatorProps = {
      name: 'echo-op',
      namespace: 'operators',
      labels: { team: 'platform' },
      ha: { enabled: true },
      metrics: { certSecret: 'echo-op-metrics-tls' },
      monitoring: {
        namespace: 'monitoring',
        rules: { enabled: true, labels: { release: 'kube-prometheus-stack' }, runbookUrl: 'https://runbooks.example/echo' },
      },
    };
    const [rule, ...more] = rulesOf(props);
    assert.equal(more.length, 0, 'exactly one');
    assert.equal(rule!.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(rule!.metadata.name, 'echo-op');
    assert.equal(rule!.metadata.namespace, 'monitoring');
    assert.equal(rule!.metadata.labels?.release, 'kube-prometheus-stack');
    assert.equal(rule!.metadata.labels?.team, 'platform');
    assert.equal(rule!.metadata.labels?.['app.kubernetes.io/instance'], 'echo-op');
    const r = resolveEchoperatorProps(props);
    assert.deepEqual(rule!.spec, { groups: alertRuleGroups(r) });
    const alerts = alertRuleGroups(r).flatMap((g) => g.rules);
    assert.ok(alerts.some((a) => a.alert === 'EchoperatorNoLeader' && a.expr.includes('job="echo-op-metrics",namespace="operators"')));
    assert.ok(alerts.some((a) => a.annotations.runbook_url === 'https://runbooks.example/echo#echoperatorcertificateexpiressoon'));
  });

  it("takes monitoring.labels when the rules name none, and the install's namespace by default", () => {
    const [rule] = rulesOf({ monitoring: { labels: { prometheus: 'main' }, rules: { enabled: true } } });
    assert.equal(rule!.metadata.namespace, 'echoperator');
    assert.equal(rule!.metadata.labels?.prometheus, 'main');
  });

  it('is refused without metrics: every alert would read nothing', () => {
    assert.throws(
      () => synthesize({ metrics: { enabled: false }, monitoring: { rules: { enabled: true } } }),
      /monitoring\.rules\.enabled needs metrics\.enabled/,
    );
  });

  it('leaves the leader alerts out without HA, and the certificate alert out without a certSecret', () => {
    const names = (props: EchoperatorProps): string[] =>
      (
        rulesOf({ ...props, monitoring: { rules: { enabled: true } } })[0]!.spec as { groups: { rules: { alert: string }[] }[] }
      ).groups.flatMap((g) => g.rules.map((a) => a.alert));
    const plain = names({});
    assert.ok(!plain.includes('EchoperatorNoLeader') && !plain.includes('EchoperatorMultipleLeaders'));
    assert.ok(!plain.includes('EchoperatorCertificateExpiresSoon'));
    assert.ok(plain.includes('EchoperatorDown') && plain.includes('EchoperatorEventsDropped'));
    const all = names({ ha: { enabled: true }, metrics: { certSecret: 'tls' } });
    assert.ok(
      all.includes('EchoperatorNoLeader') &&
        all.includes('EchoperatorMultipleLeaders') &&
        all.includes('EchoperatorCertificateExpiresSoon'),
    );
  });
});
