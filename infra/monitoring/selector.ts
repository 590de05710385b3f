/**
 * Which Prometheus series are the operator's: the label matchers of its scrape targets, for the
 * alerts and anything else that queries them.
 *
 * prometheus-operator sets `job` to the scraped Service's name (`<name>-metrics`) and `namespace`
 * to the Service's namespace; a plain Prometheus scrape config relabels to the same (see
 * docs/monitoring.md), so one selector serves both.
 */
import type { ResolvedEchoperatorProps } from '../props.js';

/** The metrics Service's name: the `job` label of every series scraped from the operator. */
export function metricsJob(r: Pick<ResolvedEchoperatorProps, 'name'>): string {
  return `${r.name}-metrics`;
}

/** `job="<name>-metrics",namespace="<namespace>"`: the matchers, without braces. */
export function metricsSelector(r: Pick<ResolvedEchoperatorProps, 'name' | 'namespace'>): string {
  return `job="${metricsJob(r)}",namespace="${r.namespace}"`;
}
