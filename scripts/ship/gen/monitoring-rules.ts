/**
 * The alert rules as shipped (infra/monitoring/alerts.ts), with each `for:` shortened so that a
 * live run sees an alert fire within seconds of its cause, where production waits minutes. The
 * expressions, labels and annotations are the shipped ones, unchanged.
 */
import { alertRuleGroups } from '../../../infra/monitoring/alerts.js';
import type { ResolvedEchoperatorProps } from '../../../infra/props.js';

export function rulesWithShortFor(r: ResolvedEchoperatorProps, forSeconds: number): { groups: unknown[] } {
  return { groups: alertRuleGroups(r).map((g) => ({ ...g, rules: g.rules.map((rule) => ({ ...rule, for: `${forSeconds}s` })) })) };
}
