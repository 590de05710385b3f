/**
 * The operator's alerts, as Prometheus rule-file groups (pure data): what the PrometheusRule
 * (prometheus-rule.ts) carries and what docs/monitoring/echoperator-alerts.yaml holds for a
 * Prometheus without prometheus-operator (scripts/ship/gen/monitoring.ts).
 *
 * Guarantees: every rule reads only the operator's own series (metricsSelector) or, for
 * EchoperatorNotReady, kube-state-metrics' series of the operator's Deployment; every rule has
 * severity and namespace labels and summary, description and runbook_url annotations, the URL
 * being monitoring.rules.runbookUrl + `#<alert name lower-cased>` (a section of docs/runbooks.md);
 * the leader alerts exist only with ha.enabled, the certificate alert only with a
 * metrics.certSecret (a self-signed certificate is made anew at every start). Each threshold says
 * why it is what it is; test/e2e/alerts-promtool.test.ts runs every alert through promtool, firing
 * and not.
 */
import type { ResolvedEchoperatorProps } from '../props.js';
import { metricsSelector } from './selector.js';

export type Severity = 'critical' | 'warning';

/** One alerting rule of a Prometheus rule file. */
export interface AlertRule {
  alert: string;
  expr: string;
  /** How long the expression must hold before the alert fires; absent: at once. */
  for?: string;
  labels: { severity: Severity; namespace: string };
  annotations: { summary: string; description: string; runbook_url: string };
}

/** A rule file's group. */
export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

/** The alert's rule, without what every rule carries the same way (labels, runbook_url). */
interface Alert {
  alert: string;
  severity: Severity;
  expr: string;
  forSeconds?: number;
  summary: string;
  description: string;
}

/** The name of the one group, also the PrometheusRule's group. */
export const ALERT_GROUP = 'echoperator';

const MINUTE = 60;
const DAY = 86_400;

export function alertRuleGroups(r: ResolvedEchoperatorProps): RuleGroup[] {
  const alerts = [
    ...(r.ha.enabled ? leaderAlerts(r) : []),
    ...availabilityAlerts(r),
    ...reconcileAlerts(r),
    apiServerUnreachable(r),
    eventsDropped(r),
    ...(r.metrics.certSecret !== undefined ? certificateAlerts(r) : []),
  ];
  return [{ name: ALERT_GROUP, rules: alerts.map((a) => rule(r, a)) }];
}

/** The alert names of alertRuleGroups(r), each once. */
export function alertNames(r: ResolvedEchoperatorProps): string[] {
  return [...new Set(alertRuleGroups(r).flatMap((g) => g.rules.map((rule) => rule.alert)))];
}

function rule(r: ResolvedEchoperatorProps, a: Alert): AlertRule {
  return {
    alert: a.alert,
    expr: a.expr,
    ...(a.forSeconds ? { for: duration(a.forSeconds) } : {}),
    labels: { severity: a.severity, namespace: r.namespace },
    annotations: {
      summary: a.summary,
      description: a.description,
      runbook_url: `${r.monitoring.rules.runbookUrl}#${a.alert.toLowerCase()}`,
    },
  };
}

/**
 * How long "no leader" or "two leaders" may be seen through scrapes during a legitimate handover:
 * a crashed leader's lease expires after leaseDuration and a standby takes it within a
 * retryPeriod; the gauges then show it only at the next scrape of each pod (up to one interval
 * each, two pods). At least 2 minutes: with the defaults (15 s + 2 s + 2 x 30 s = 77 s) no handover
 * fires, and nothing is reconciled meanwhile, so not more.
 */
function handoverSeconds(r: ResolvedEchoperatorProps): number {
  const worst = r.ha.leaseDurationSeconds + r.ha.retryPeriodSeconds + 2 * durationSeconds(r.monitoring.interval);
  return Math.max(2 * MINUTE, Math.ceil(worst / MINUTE) * MINUTE);
}

function leaderSelector(r: ResolvedEchoperatorProps): string {
  return `leader_election_master_status{${metricsSelector(r)},name="${r.ha.leaseName}"}`;
}

function leaderAlerts(r: ResolvedEchoperatorProps): Alert[] {
  const status = leaderSelector(r);
  return [
    {
      alert: 'EchoperatorNoLeader',
      severity: 'critical',
      // `or on() vector(0)`: no pod scraped at all is no leader too (EchoperatorDown says why).
      expr: `(max(${status}) or on() vector(0)) < 1`,
      forSeconds: handoverSeconds(r),
      summary: 'No echoperator replica leads: nothing is reconciled.',
      description: `No replica of ${r.namespace}/${r.name} has held the Lease ${r.ha.leaseName} for longer than a handover takes; Echos and ScheduledEchos get no Jobs, CronJobs or status until one does.`,
    },
    {
      alert: 'EchoperatorMultipleLeaders',
      severity: 'critical',
      expr: `sum(${status}) > 1`,
      forSeconds: handoverSeconds(r),
      summary: 'More than one echoperator replica believes it leads.',
      description: `{{ $value }} replicas of ${r.namespace}/${r.name} report themselves leader of the Lease ${r.ha.leaseName}: two writers may fight over the same Jobs and statuses.`,
    },
  ];
}

function availabilityAlerts(r: ResolvedEchoperatorProps): Alert[] {
  return [
    {
      alert: 'EchoperatorDown',
      severity: 'critical',
      // No target up: all pods gone, crashing, or not scraped (absent() also fires when
      // Prometheus lost the targets, which is as blind as an outage).
      expr: `absent(up{${metricsSelector(r)}} == 1)`,
      // 5 minutes: rides out a rollout, a rescheduled pod and its image pull, or a restart
      // after the liveness probe; long enough outages to delay users' Echos visibly are not.
      forSeconds: 5 * MINUTE,
      summary: 'No echoperator replica is up.',
      description: `Prometheus has scraped no replica of ${r.namespace}/${r.name} successfully for 5 minutes: the operator is down, crashing or unreachable to Prometheus.`,
    },
    {
      alert: 'EchoperatorNotReady',
      severity: 'warning',
      // kube-state-metrics (part of kube-prometheus): the operator exports no readiness of its own.
      expr: `kube_deployment_status_replicas_unavailable{namespace="${r.namespace}",deployment="${r.name}"} > 0`,
      // 15 minutes, as kube-prometheus' KubeDeploymentReplicasMismatch: longer than a rollout, a
      // cache sync of a large cluster, or a node drain takes.
      forSeconds: 15 * MINUTE,
      summary: 'An echoperator replica has not been ready for 15 minutes.',
      description: `{{ $value }} replica(s) of the Deployment ${r.namespace}/${r.name} are unavailable (not ready, pending or crashing); with HA the standby that should take over may be missing.`,
    },
  ];
}

function reconcileAlerts(r: ResolvedEchoperatorProps): Alert[] {
  const sel = metricsSelector(r);
  const longestWaiting = `workqueue_longest_waiting_seconds{${sel}}`;
  // Standbys queue the keys of every change too (they keep warm caches) but never hand them out:
  // only the leader's queue says whether work flows.
  const byController = (counter: string): string => `sum by (controller) (rate(${counter}{${sel}}[5m]))`;
  const leadersQueue = r.ha.enabled ? `(${longestWaiting} and on(instance) (${leaderSelector(r)} == 1))` : longestWaiting;
  return [
    {
      alert: 'EchoperatorReconcileErrors',
      severity: 'warning',
      // Retried errors only: terminal ones are counted as errors too, but no retry follows them
      // and EchoperatorObjectsStalled reports them (a stalled object re-checked every 5 minutes
      // would otherwise keep this ratio up on a quiet operator).
      expr: `(${byController('controller_runtime_reconcile_errors_total')} - ${byController('controller_runtime_terminal_reconcile_errors_total')}) / ${byController('controller_runtime_reconcile_total')} > 0.1`,
      // More than 10% of reconciles failing for 15 minutes: a write conflict or an API server
      // hiccup fails a reconcile now and then and the retry succeeds, far below 10%; a cause
      // that persists (RBAC, an admission policy, a quota, an overloaded API server) fails every
      // retry of the objects it touches, and 15 minutes outlasts the backoffs of a blip.
      forSeconds: 15 * MINUTE,
      summary: 'echoperator reconciles keep failing.',
      description:
        '{{ $value | humanizePercentage }} of the reconciles of controller {{ $labels.controller }} failed over the last 5 minutes, for 15 minutes.',
    },
    {
      alert: 'EchoperatorObjectsStalled',
      severity: 'warning',
      // Any terminal error: each leaves an object Stalled that no retry can cure, only a change
      // of its spec (or of what blocks it). Over 15 minutes, so a stall blocked by a foreign
      // object (re-checked every 5 minutes) keeps the alert on until it is resolved.
      expr: `sum by (controller) (increase(controller_runtime_terminal_reconcile_errors_total{${sel}}[15m])) > 0`,
      summary: 'echoperator objects are Stalled.',
      description:
        'Controller {{ $labels.controller }} stalled objects in the last 15 minutes: their Stalled condition says why; they wait for a change of their spec.',
    },
    {
      alert: 'EchoperatorWorkQueueStuck',
      severity: 'warning',
      // A key waiting 10 minutes to be handed out: workers are wedged or far too few. Normal
      // waits are milliseconds; a start over thousands of objects drains in a few minutes (the
      // initial list is queued at low priority, behind fresh events but aged forward). Held 5
      // minutes, so a new leader's queue, which was filled while it stood by, drains first.
      expr: `max by (name) (${leadersQueue}) > 600`,
      forSeconds: 5 * MINUTE,
      summary: "echoperator's work queue does not move.",
      description:
        'A key has waited {{ $value | humanizeDuration }} in the work queue {{ $labels.name }} without being handed to a worker.',
    },
    {
      alert: 'EchoperatorReconcileStuck',
      severity: 'warning',
      // A reconcile running 5 minutes: each makes a few API calls of 30 s deadline at most,
      // and reconcile_time_seconds' buckets end at 60 s; 5x that is a hung worker.
      expr: `max by (name) (workqueue_longest_running_processor_seconds{${sel}}) > 300`,
      forSeconds: 5 * MINUTE,
      summary: 'An echoperator reconcile has been running for over 5 minutes.',
      description:
        'The longest reconcile of work queue {{ $labels.name }} has run for {{ $value | humanizeDuration }}: a worker is stuck, and the keys behind it wait.',
    },
  ];
}

function apiServerUnreachable(r: ResolvedEchoperatorProps): Alert {
  const requests = (extra: string): string => `sum by (instance) (rate(rest_client_requests_total{${metricsSelector(r)}${extra}}[5m]))`;
  return {
    alert: 'EchoperatorAPIServerUnreachable',
    severity: 'critical',
    // code="<error>": a request that got no answer at all (refused, reset, timed out, the proxy
    // silent: src/kube/rest.ts); an answer, even a 5xx, has its status code. More than half
    // without an answer for 5 minutes: single resets are retried and stay far below; an API
    // server restart in an upgrade lasts about a minute.
    expr: `${requests(',code="<error>"')} / ${requests('')} > 0.5`,
    forSeconds: 5 * MINUTE,
    summary: 'echoperator gets no answer from the API server.',
    description:
      '{{ $value | humanizePercentage }} of the API requests of {{ $labels.instance }} got no answer over the last 5 minutes: it can neither see nor change anything.',
  };
}

function eventsDropped(r: ResolvedEchoperatorProps): Alert {
  return {
    alert: 'EchoperatorEventsDropped',
    severity: 'warning',
    // Every reason but spam_filter loses an Event a user would have read in `kubectl describe`
    // (src/observability/events/metrics.ts): the queue full, refused (RBAC), retries out, a bug.
    // spam_filter is client-go's design: a hot loop on one object gets 25 Events, then 1 per 5
    // minutes, and the first ones say what the rest would. Any drop: each is a symptom of a cause
    // that goes on dropping until fixed; a warning, not a page.
    expr: `sum by (reason) (increase(echoperator_events_dropped_total{${metricsSelector(r)},reason!="spam_filter"}[15m])) > 0`,
    summary: 'echoperator dropped Kubernetes Events.',
    description:
      'About {{ $value | humanize }} Events were dropped in the last 15 minutes for reason {{ $labels.reason }}; users miss them in kubectl describe.',
  };
}

function certificateAlerts(r: ResolvedEchoperatorProps): Alert[] {
  const left = `echoperator_metrics_certificate_expiry_timestamp_seconds{${metricsSelector(r)}} - time()`;
  const description = `The metrics certificate served by {{ $labels.instance }} (Secret ${r.metrics.certSecret}) expires in {{ $value | humanizeDuration }}; scrapes that verify it will fail then.`;
  // cert-manager renews at 2/3 of a certificate's life (30 days before a 90-day one expires) and
  // the operator serves a renewed Secret within a minute: 7 days left means renewal or reload
  // failed, with a week to fix it; 1 day left pages (kube-prometheus' client certificate alerts
  // use the same two steps). 10 minutes: a renewal written just now is served by then.
  return [
    {
      alert: 'EchoperatorCertificateExpiresSoon',
      severity: 'warning',
      expr: `${left} < ${7 * DAY}`,
      forSeconds: 10 * MINUTE,
      summary: 'The echoperator metrics certificate expires within 7 days.',
      description,
    },
    {
      alert: 'EchoperatorCertificateExpiresSoon',
      severity: 'critical',
      expr: `${left} < ${DAY}`,
      forSeconds: 10 * MINUTE,
      summary: 'The echoperator metrics certificate expires within 24 hours.',
      description,
    },
  ];
}

/** A Prometheus duration ('30s', '1m30s', '2h'), as the props accept it, in seconds. */
export function durationSeconds(d: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: MINUTE, h: 3_600 };
  let total = 0;
  for (const [, n, unit] of d.matchAll(/([0-9]+)(ms|s|m|h)/g)) total += Number(n) * units[unit!]!;
  return total;
}

/** Whole seconds as a Prometheus duration: 300 -> '5m', 90 -> '90s'. */
function duration(seconds: number): string {
  if (seconds % 3_600 === 0) return `${seconds / 3_600}h`;
  return seconds % MINUTE === 0 ? `${seconds / MINUTE}m` : `${seconds}s`;
}
