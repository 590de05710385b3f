/**
 * alertRuleGroups() as data: the leader alerts wait out the handover the install's own lease and
 * scrape settings allow, and every rule carries what Alertmanager routes and people read by.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alertRuleGroups, durationSeconds } from '../../infra/monitoring/alerts.js';
import { resolveEchoperatorProps, type EchoperatorProps } from '../../infra/props.js';

const rulesOf = (props: EchoperatorProps) => alertRuleGroups(resolveEchoperatorProps(props)).flatMap((g) => g.rules);
const forOf = (props: EchoperatorProps, alert: string) => rulesOf(props).find((r) => r.alert === alert)?.for;

describe('alertRuleGroups', () => {
  it("waits out a handover: the lease's expiry and a retry, plus two scrapes, never under 2 minutes", () => {
    assert.equal(forOf({ ha: { enabled: true } }, 'EchoperatorNoLeader'), '2m', 'defaults: 15 s + 2 s + 2 x 30 s');
    const slow = {
      ha: { enabled: true, leaseDurationSeconds: 60, renewDeadlineSeconds: 40, retryPeriodSeconds: 5 },
      monitoring: { interval: '1m30s' },
    };
    assert.equal(forOf(slow, 'EchoperatorNoLeader'), '5m', '60 s + 5 s + 2 x 90 s = 245 s, rounded up to whole minutes');
    assert.equal(forOf(slow, 'EchoperatorMultipleLeaders'), '5m');
  });

  it('reads Prometheus durations as the props accept them', () => {
    assert.equal(durationSeconds('30s'), 30);
    assert.equal(durationSeconds('1m30s'), 90);
    assert.equal(durationSeconds('2h'), 7_200);
    assert.equal(durationSeconds('1500ms'), 1.5);
  });

  it('gives every rule a severity, the install namespace, and all three annotations', () => {
    for (const rule of rulesOf({ namespace: 'ops', ha: { enabled: true }, metrics: { certSecret: 'tls' } })) {
      assert.ok(['critical', 'warning'].includes(rule.labels.severity), rule.alert);
      assert.equal(rule.labels.namespace, 'ops', rule.alert);
      for (const key of ['summary', 'description', 'runbook_url'] as const)
        assert.ok(rule.annotations[key].trim(), `${rule.alert}: ${key}`);
      assert.match(rule.expr, /job="echoperator-metrics",namespace="ops"|namespace="ops",deployment="echoperator"/, rule.alert);
    }
  });
});
