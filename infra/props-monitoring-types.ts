/**
 * The props of the metrics endpoint (metrics.*) and of the monitoring by prometheus-operator
 * (monitoring.*: ServiceMonitor, PrometheusRule, Grafana dashboard), each with its documented
 * default. Types only: part of EchoperatorProps (props-types.ts).
 */

/**
 * An opt-in NetworkPolicy for the operator's pods (kubebuilder's `allow-metrics-traffic`). Once a
 * policy selects a pod, every ingress it does not allow is dropped, so it allows exactly two: the
 * metrics port from namespaces carrying `namespaceLabels` (where Prometheus runs), and the health
 * port from anywhere (the kubelet's probes come from the node, which most CNIs let through anyway,
 * but not every one; /healthz and /readyz tell nothing secret). The operator serves nothing else.
 * Egress is not restricted. Only a CNI that enforces NetworkPolicies (Calico, Cilium...) applies it.
 */
export interface EchoperatorMetricsNetworkPolicyProps {
  /** @default false */
  readonly enabled?: boolean;
  /**
   * Labels a namespace must carry for its pods to reach the metrics port.
   * @default { metrics: 'enabled' }
   */
  readonly namespaceLabels?: Record<string, string>;
}

/** Prometheus metrics endpoint settings. */
export interface EchoperatorMetricsProps {
  /**
   * Serve metrics, and create a Service (port named `https`, or `http` with insecurePlainHttp) in
   * front of them. Served over HTTPS to callers whose bearer token may `get` the metrics path (a
   * TokenReview and a SubjectAccessReview, cached): bind scrapers to the `<name>-metrics-reader`
   * ClusterRole.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Plain HTTP and no authentication (METRICS_INSECURE_PLAIN_HTTP): anyone who reaches the port
   * reads the metrics. For a trusted network only.
   * @default false
   */
  readonly insecurePlainHttp?: boolean;
  /**
   * Name of a `kubernetes.io/tls` Secret in the operator's namespace (e.g. made by cert-manager)
   * whose `tls.crt` and `tls.key` the metrics endpoint serves; mounted read-only, reloaded when
   * it rotates (METRICS_CERT_DIR).
   * @default - none: a self-signed certificate made at start
   */
  readonly certSecret?: string;
  /**
   * @default { enabled: false, namespaceLabels: { metrics: 'enabled' } }
   */
  readonly networkPolicy?: EchoperatorMetricsNetworkPolicyProps;
  /**
   * Port the metrics endpoint listens on.
   * @default 2112
   */
  readonly port?: number;
  /**
   * HTTP path of the metrics endpoint.
   * @default '/metrics'
   */
  readonly path?: string;
}

/** A ServiceAccount, named with its namespace. */
export interface ServiceAccountRef {
  readonly name: string;
  readonly namespace: string;
}

/**
 * The opt-in PrometheusRule: the operator's alerts (infra/monitoring/alerts.ts), each with a
 * `runbook_url` into docs/runbooks.md.
 */
export interface EchoperatorMonitoringRulesProps {
  /** @default false */
  readonly enabled?: boolean;
  /**
   * Extra labels on the PrometheusRule, for a Prometheus' `ruleSelector` (kube-prometheus selects
   * every rule in its namespaces; a Helm-installed kube-prometheus-stack wants `release: <name>`).
   * @default - monitoring.labels
   */
  readonly labels?: Record<string, string>;
  /**
   * Where the runbooks are: each alert's runbook_url is this URL plus `#<alert name, lower-cased>`.
   * @default the docs/runbooks.md of this version on GitHub
   */
  readonly runbookUrl?: string;
}

/**
 * The opt-in Grafana dashboard: a ConfigMap holding the dashboard's JSON, labelled for Grafana's
 * dashboard sidecar (kube-prometheus-stack's `grafana.sidecar.dashboards`), which loads every
 * ConfigMap with that label.
 */
export interface EchoperatorMonitoringDashboardProps {
  /** @default false */
  readonly enabled?: boolean;
  /**
   * Namespace of the ConfigMap (the sidecar may watch only Grafana's own namespace).
   * @default - monitoring.namespace
   */
  readonly namespace?: string;
  /**
   * Labels the sidecar selects dashboards by.
   * @default { grafana_dashboard: '1' }
   */
  readonly labels?: Record<string, string>;
}

/**
 * Monitoring by prometheus-operator, with the Go echoperator chart's `monitoring.*` names where
 * they fit (its `path` and `port` are `metrics.path` and `metrics.port` here): a ServiceMonitor
 * scraping the metrics Service over HTTPS with the scraper's ServiceAccount token, and the
 * ClusterRoleBinding that lets that ServiceAccount read the metrics; opt-in alerts and dashboard.
 */
export interface EchoperatorMonitoringProps {
  /**
   * Create the ServiceMonitor (needs prometheus-operator's CRDs) and bind `prometheusServiceAccount`
   * to the metrics-reader ClusterRole.
   * @default false
   */
  readonly enabled?: boolean;
  /**
   * Namespace of the ServiceMonitor and the PrometheusRule (a Prometheus often selects only some
   * namespaces); the ServiceMonitor selects the metrics Service in the install's namespace.
   * @default - the install's namespace
   */
  readonly namespace?: string;
  /**
   * Scrape interval.
   * @default '30s'
   */
  readonly interval?: string;
  /**
   * Extra labels on the ServiceMonitor (and the PrometheusRule), for a Prometheus'
   * `serviceMonitorSelector`.
   * @default - none
   */
  readonly labels?: Record<string, string>;
  /**
   * The ServiceAccount Prometheus scrapes with, bound to the metrics-reader ClusterRole.
   * @default { name: 'prometheus-k8s', namespace: 'monitoring' } (kube-prometheus')
   */
  readonly prometheusServiceAccount?: ServiceAccountRef;
  /**
   * Scrape without verifying the serving certificate. Without `metrics.certSecret` the operator
   * serves a self-signed certificate made at start, which nothing can verify: the synth then
   * refuses `enabled` unless this is true (the scraper's token would go to whichever endpoint
   * answers). Better: a certSecret from cert-manager, which the ServiceMonitor then verifies.
   * @default false
   */
  readonly insecureSkipVerify?: boolean;
  /** @default { enabled: false } */
  readonly rules?: EchoperatorMonitoringRulesProps;
  /** @default { enabled: false, labels: { grafana_dashboard: '1' } } */
  readonly dashboard?: EchoperatorMonitoringDashboardProps;
}
