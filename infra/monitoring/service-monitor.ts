/**
 * The opt-in ServiceMonitor (monitoring.coreos.com/v1, prometheus-operator's CRD) that scrapes the
 * metrics Service, and the ClusterRoleBinding that lets the scraper's ServiceAccount read them.
 *
 * Guarantees, for `monitoring.enabled`:
 * - One ServiceMonitor `<name>` in monitoring.namespace, labelled with the install's labels plus
 *   monitoring.labels, selecting only the `<name>-metrics` Service of the install's namespace by
 *   the install's selector labels, its port `https` (`http` with metrics.insecurePlainHttp).
 * - Over HTTPS it sends the scraper's own ServiceAccount token (`bearerTokenFile`, the projected,
 *   rotated token every pod has, as kubebuilder's scaffold does). prometheus-operator v0.85 marks
 *   that field deprecated in favour of `authorization`, but `authorization` reads only a Secret:
 *   it would need a long-lived token Secret, which is worse. A Prometheus with
 *   `arbitraryFSAccessThroughSMs.deny` refuses this ServiceMonitor; bind and scrape by hand there.
 * - With metrics.certSecret the serving certificate is verified: the CA is that Secret's `ca.crt`
 *   (cert-manager writes it) and the name the Service's DNS name `<name>-metrics.<ns>.svc`.
 *   prometheus-operator reads the Secret from the ServiceMonitor's namespace, so the props
 *   require monitoring.namespace to be the install's then. Without a certSecret the operator's
 *   certificate is self-signed at start and cannot be verified: `insecureSkipVerify`, which the
 *   props allow only with monitoring.insecureSkipVerify.
 * - Over plain HTTP (metrics.insecurePlainHttp) there is no token and no TLS config: the endpoint
 *   asks for neither, and there is no metrics-reader ClusterRole to bind.
 * - The ClusterRoleBinding `<metricsReaderRoleName>` binds the install's metrics-reader
 *   ClusterRole to monitoring.prometheusServiceAccount, and is named after it.
 */
import { ApiObject } from 'cdk8s';
import * as k8s from '../imports/k8s.js';
import type { Construct } from 'constructs';
import type { ResolvedEchoperatorProps } from '../props.js';
import { metricsServiceDns } from './scrape-config.js';

/** Where the kubelet mounts a pod's ServiceAccount token (Prometheus' own, in its pod). */
export const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The key cert-manager (and `kubectl create secret tls` users, by hand) store the CA under. */
export const CA_KEY = 'ca.crt';

/** The fields of prometheus-operator's v1 ServiceMonitor this install sets (its CRD has many more). */
export interface ServiceMonitorSpec {
  selector: { matchLabels: Record<string, string> };
  namespaceSelector: { matchNames: string[] };
  endpoints: ServiceMonitorEndpoint[];
}

export interface ServiceMonitorEndpoint {
  port: string;
  path: string;
  interval: string;
  scheme: 'http' | 'https';
  bearerTokenFile?: string;
  tlsConfig?: { ca: { secret: { name: string; key: string } }; serverName: string } | { insecureSkipVerify: true };
}

export interface ServiceMonitorProps {
  readonly config: ResolvedEchoperatorProps;
  /** The install's labels, which the ServiceMonitor and the binding carry. */
  readonly labels: Record<string, string>;
  /** The labels that select the operator's pods, and so its metrics Service. */
  readonly selector: Record<string, string>;
  /** The metrics-reader ClusterRole; undefined over plain HTTP (no binding then). */
  readonly metricsReaderRoleName: string | undefined;
}

/** The ServiceMonitor's spec for these props (plain data, for tests and docs). */
export function serviceMonitorSpec(r: ResolvedEchoperatorProps, selector: Record<string, string>): ServiceMonitorSpec {
  const common = { path: r.metrics.path, interval: r.monitoring.interval };
  const endpoint: ServiceMonitorEndpoint = r.metrics.insecurePlainHttp
    ? { port: 'http', ...common, scheme: 'http' }
    : {
        port: 'https',
        ...common,
        scheme: 'https',
        bearerTokenFile: SERVICE_ACCOUNT_TOKEN_FILE,
        tlsConfig: r.metrics.certSecret
          ? { ca: { secret: { name: r.metrics.certSecret, key: CA_KEY } }, serverName: metricsServiceDns(r) }
          : { insecureSkipVerify: true },
      };
  return {
    selector: { matchLabels: { ...selector } },
    namespaceSelector: { matchNames: [r.namespace] },
    endpoints: [endpoint],
  };
}

/**
 * Adds the ServiceMonitor and (over HTTPS) the metrics-reader binding to `scope` when
 * monitoring.enabled; nothing otherwise.
 */
export function addServiceMonitor(scope: Construct, props: ServiceMonitorProps): void {
  const r = props.config;
  if (!r.monitoring.enabled) return;
  new ApiObject(scope, 'ServiceMonitor', {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: {
      name: r.name,
      namespace: r.monitoring.namespace,
      labels: { ...props.labels, ...r.monitoring.labels },
    },
    spec: serviceMonitorSpec(r, props.selector),
  });
  if (props.metricsReaderRoleName === undefined) return;
  const sa = r.monitoring.prometheusServiceAccount;
  new k8s.KubeClusterRoleBinding(scope, 'MetricsReaderRoleBinding', {
    metadata: { name: props.metricsReaderRoleName, labels: props.labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: props.metricsReaderRoleName },
    subjects: [{ kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace }],
  });
}
