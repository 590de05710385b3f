/**
 * The opt-in dashboard ConfigMap: the operator's Grafana dashboard (dashboard.ts) as
 * `echoperator.json`, labelled for Grafana's dashboard sidecar (kube-prometheus-stack's
 * `grafana.sidecar.dashboards`), which loads every ConfigMap carrying its label.
 *
 * Guarantees: nothing unless monitoring.dashboard.enabled; then exactly one ConfigMap,
 * `<name>-dashboard` in monitoring.dashboard.namespace, whose data is byte for byte the file
 * docs/monitoring/echoperator-dashboard.json (the same dashboardJson()).
 */
import * as k8s from '../imports/k8s.js';
import type { Construct } from 'constructs';
import type { ResolvedEchoperatorProps } from '../props.js';
import { dashboardJson } from './dashboard.js';

/** The key of the dashboard in the ConfigMap's data: the sidecar writes it as this file. */
export const DASHBOARD_FILE = 'echoperator.json';

/**
 * Adds the dashboard ConfigMap to `scope` when r.monitoring.dashboard.enabled, labelled with the
 * install's labels and monitoring.dashboard.labels (the sidecar's); returns its name, if made.
 */
export function addDashboardConfigMap(scope: Construct, r: ResolvedEchoperatorProps, labels: Record<string, string>): string | undefined {
  const d = r.monitoring.dashboard;
  if (!d.enabled) return undefined;
  const name = `${r.name}-dashboard`;
  new k8s.KubeConfigMap(scope, 'DashboardConfigMap', {
    metadata: { name, namespace: d.namespace, labels: { ...labels, ...d.labels } },
    data: { [DASHBOARD_FILE]: dashboardJson() },
  });
  return name;
}
