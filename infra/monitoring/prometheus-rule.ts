/**
 * The opt-in PrometheusRule (monitoring.coreos.com/v1, prometheus-operator's CRD) carrying the
 * operator's alerts (alerts.ts), for a Prometheus that selects rules by label.
 *
 * Guarantees: nothing unless monitoring.rules.enabled; then exactly one PrometheusRule `<name>`
 * in monitoring.namespace, labelled with the install's labels plus monitoring.rules.labels (a
 * Prometheus' `ruleSelector`), whose groups are alertRuleGroups(r) unchanged: the same rules as
 * docs/monitoring/echoperator-alerts.yaml for the same props.
 */
import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import type { ResolvedEchoperatorProps } from '../props.js';
import { alertRuleGroups, type RuleGroup } from './alerts.js';

export const PROMETHEUS_RULE_API_VERSION = 'monitoring.coreos.com/v1';
export const PROMETHEUS_RULE_KIND = 'PrometheusRule';

/** The fields of prometheus-operator's v1 PrometheusRule this install sets. */
export interface PrometheusRuleSpec {
  groups: RuleGroup[];
}

export interface PrometheusRuleProps {
  readonly metadata: { name: string; namespace: string; labels: Record<string, string> };
  readonly spec: PrometheusRuleSpec;
}

/** A PrometheusRule, typed for what this install writes into it. */
export class PrometheusRule extends ApiObject {
  constructor(scope: Construct, id: string, props: PrometheusRuleProps) {
    super(scope, id, { apiVersion: PROMETHEUS_RULE_API_VERSION, kind: PROMETHEUS_RULE_KIND, ...props });
  }
}

/**
 * Adds the PrometheusRule to `scope` when r.monitoring.rules.enabled, labelled with the install's
 * `labels` and monitoring.rules.labels; returns its name, if made.
 */
export function addPrometheusRule(scope: Construct, r: ResolvedEchoperatorProps, labels: Record<string, string>): string | undefined {
  if (!r.monitoring.rules.enabled) return undefined;
  new PrometheusRule(scope, 'PrometheusRule', {
    metadata: { name: r.name, namespace: r.monitoring.namespace, labels: { ...labels, ...r.monitoring.rules.labels } },
    spec: { groups: alertRuleGroups(r) },
  });
  return r.name;
}
