/**
 * The Echoperator construct's props: every prop with its documented default, their validation
 * (EchoperatorPropsError names the bad prop), and the operator settings they become.
 */
import { createHash } from 'node:crypto';
import packageJson from '../package.json' with { type: 'json' };
import { brokenLeaseRule, JITTER_FACTOR, LEASE_DEFAULT_SECONDS, LEASE_MAX_SECONDS } from '../src/runtime/leaderelection/config.js';
import {
  isDns1123Label,
  isDns1123Subdomain,
  isImageReference,
  isLabelKey,
  isLabelValue,
  isPort,
  isUrlPath,
} from '../src/config/validation.js';
import { echoPodTemplate } from '../src/controllers/common/pod.js';
import { checkPodProps, POD_ENV_NAMES, resolvePodProps, type EchoperatorPodProps, type ResolvedEchoperatorPodProps } from './pod-props.js';

export * from './pod-props.js';

/** The version of this project: the default image tag and the app.kubernetes.io/version label. */
export const ECHOPERATOR_VERSION: string = packageJson.version;

/** Where release images are published. */
export const IMAGE_REPOSITORY = 'ghcr.io/mmontes11/echoperator-ts';

/**
 * How long the operator takes at most to stop after SIGTERM (drain workers, release the lease).
 * The pod's terminationGracePeriodSeconds must exceed it, or the kubelet kills it mid-drain.
 */
export const OPERATOR_SHUTDOWN_TIMEOUT_SECONDS = 30;

/** The longest install name: `<name>-config` and `<name>-metrics` must stay DNS labels. */
export const NAME_MAX_LENGTH = 55;

/** A Prometheus duration, as monitoring.interval takes it: `30s`, `1m`, `1h30m`. */
export const PROMETHEUS_DURATION = /^([0-9]+(ms|s|m|h))+$/;

/** An http(s) URL without a fragment, as monitoring.rules.runbookUrl takes it (`#<alert>` is added). */
export const RUNBOOK_URL = /^https?:\/\/[^\s#]+$/;

/** The annotation on the pod template holding the hash of the settings ConfigMap's data. */
export const CONFIG_CHECKSUM_ANNOTATION = 'echoperator.mmontes.io/config-checksum';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
export type LogFormat = 'json' | 'text';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

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

/** Leader election (high availability) settings. */
export interface EchoperatorHaProps {
  /**
   * Run several replicas that elect a leader through a coordination.k8s.io Lease; only the
   * leader reconciles, standbys keep warm caches. Adds the Lease RBAC, a PodDisruptionBudget
   * and topology spread constraints.
   * @default false
   */
  readonly enabled?: boolean;
  /**
   * Number of replicas when HA is enabled (ignored otherwise: one replica).
   * @default 3
   */
  readonly replicas?: number;
  /**
   * How long a standby waits on an unchanged lease before taking it over, in seconds.
   * Must be greater than renewDeadlineSeconds.
   * @default 15
   */
  readonly leaseDurationSeconds?: number;
  /**
   * How long a leader keeps leading without a successful renewal, in seconds.
   * Must be greater than 1.2 x retryPeriodSeconds.
   * @default 10
   */
  readonly renewDeadlineSeconds?: number;
  /**
   * Pause between attempts to acquire or renew the lease, in seconds.
   * @default 2
   */
  readonly retryPeriodSeconds?: number;
  /**
   * Name of the Lease, in the operator's namespace. The RBAC grants access to this one only.
   * @default 'echoperator'
   */
  readonly leaseName?: string;
}

/** Kubernetes quantities, e.g. cpu '50m', memory '64Mi'. */
export interface ResourceQuantities {
  readonly cpu?: string;
  readonly memory?: string;
}

/** Container resources. Each quantity given replaces the default for that quantity only. */
export interface EchoperatorResources {
  /**
   * Memory follows the measured resident set (docs/benchmarks.md, "Memory"): 57-69 MiB idle,
   * 98-109 MiB with 10,000 Echos and their 10,000 Jobs cached; the request covers that, so the
   * scheduler places the operator only where what it uses is free. Users' annotations add
   * (almost) nothing: the caches do not keep them.
   * @default { cpu: '50m', memory: '128Mi' }
   */
  readonly requests?: ResourceQuantities;
  /**
   * No CPU limit by default: CFS throttling would delay probes and lease renewals, while the
   * request already guarantees the share the operator needs. The memory limit leaves 4x the
   * request: a larger cluster (about 2 KB per cached object) and the garbage of a re-list must
   * not end in an OOM kill, which would restart every informer and re-list once more.
   * @default { memory: '512Mi' }
   */
  readonly limits?: ResourceQuantities;
}

/** Every prop; the pod settings Helm users expect (nodeSelector, tolerations...) are in {@link EchoperatorPodProps}. */
export interface EchoperatorProps extends EchoperatorPodProps {
  /**
   * Namespace the operator runs in (its ServiceAccount, ConfigMap, Deployment, Lease...).
   * @default 'echoperator'
   */
  readonly namespace?: string;
  /**
   * Create the namespace (labelled for the `restricted` Pod Security Standard). Set to false
   * when the namespace is managed elsewhere.
   * @default true
   */
  readonly createNamespace?: boolean;
  /**
   * Include the Echo and ScheduledEcho CRDs (generated from src/api). Set to false when the
   * CRDs are installed separately, e.g. by a second install of the operator in the cluster.
   * @default true
   */
  readonly installCrds?: boolean;
  /**
   * Name of the ServiceAccount, ConfigMap (`<name>-config`), Deployment, metrics Service
   * (`<name>-metrics`), PodDisruptionBudget and Roles. The cluster-scoped ClusterRole and
   * ClusterRoleBinding are named `<name>` when the namespace is also called `<name>` (the
   * default install), else `<name>-<namespace>`, so installs in two namespaces never collide.
   * @default 'echoperator'
   */
  readonly name?: string;
  /**
   * The `app.kubernetes.io/name` label of every object and of the pods' selector (Helm's chart
   * name, or its nameOverride).
   * @default 'echoperator'
   */
  readonly appName?: string;
  /**
   * The `app.kubernetes.io/instance` label of every object and of the pods' selector (Helm's
   * release name).
   * @default - the name prop
   */
  readonly instance?: string;
  /**
   * Container image: `repo:tag`, `repo@sha256:<digest>` or `repo:tag@sha256:<digest>`.
   * @default `ghcr.io/mmontes11/echoperator-ts:<package.json version>`
   */
  readonly image?: string;
  /**
   * @default 'IfNotPresent'
   */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /**
   * Container command (the image holds the bundle at /app/echoperator.js).
   * @default ['node', '/app/echoperator.js']
   */
  readonly command?: string[];
  /**
   * Container arguments.
   * @default [] (the operator has no subcommands)
   */
  readonly args?: string[];
  /**
   * Number of concurrent reconcile workers (NUM_WORKERS).
   * @default 4
   */
  readonly workers?: number;
  /**
   * Namespaces to watch (WATCH_NAMESPACES). When set, the operator gets one Role + RoleBinding in
   * each of them instead of a ClusterRole; the namespaces must exist.
   * @default - all namespaces (ClusterRole + ClusterRoleBinding)
   */
  readonly watchNamespaces?: string[];
  /**
   * LOG_LEVEL.
   * @default 'info'
   */
  readonly logLevel?: LogLevel;
  /**
   * LOG_FORMAT: JSON lines for log collectors, or text for a person reading `kubectl logs`.
   * @default 'json'
   */
  readonly logFormat?: LogFormat;
  /**
   * @default { enabled: true, port: 2112, path: '/metrics', insecurePlainHttp: false, networkPolicy: { enabled: false } }
   */
  readonly metrics?: EchoperatorMetricsProps;
  /**
   * @default { enabled: false, interval: '30s', prometheusServiceAccount: { name: 'prometheus-k8s', namespace: 'monitoring' } }
   */
  readonly monitoring?: EchoperatorMonitoringProps;
  /**
   * Port of the health server (GET /healthz for liveness, GET /readyz for readiness).
   * @default 8081
   */
  readonly healthPort?: number;
  /**
   * @default { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } }
   */
  readonly resources?: EchoperatorResources;
  /**
   * Image of the Jobs and CronJobs the operator creates to print messages (JOB_IMAGE).
   * @default 'busybox:1.37'
   */
  readonly jobImage?: string;
  /**
   * The most cpu and memory each container of the operator's Jobs and CronJobs may request or be
   * limited to, enforced by the confinement policy (confineServiceAccount): a stolen token cannot
   * reserve a node's CPUs or memory through them. The operator's own Job container requests 10m
   * cpu and 16Mi memory and is limited to 32Mi (src/controllers/common/pod.ts), which the maximum
   * must cover; the default leaves room for a jobImage with a larger printf.
   * @default { cpu: '100m', memory: '64Mi' }
   */
  readonly jobMaxResources?: ResourceQuantities;
  /**
   * @default { enabled: false, replicas: 3, leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2, leaseName: 'echoperator' }
   */
  readonly ha?: EchoperatorHaProps;
  /**
   * Seconds between SIGTERM and SIGKILL. Must exceed the operator's 30 s shutdown timeout.
   * @default 45
   */
  readonly terminationGracePeriodSeconds?: number;
  /**
   * A ValidatingAdmissionPolicy (Kubernetes 1.31 or newer: it compares quantities) that lets the
   * operator's ServiceAccount create and update only Jobs and CronJobs of exactly the shape it
   * makes (the jobImage, printf of the message, no env, no ports, no ServiceAccount token, no
   * volumes, the restricted Pod Security fields set, no placement or priority, resources within
   * jobMaxResources, one pod, owned by an Echo or ScheduledEcho), and update or delete only those
   * its custom resources control (infra/confinement.ts, docs/confinement.md). On by default:
   * every flow passes with it, and without it the ServiceAccount's Job rights are rights to run
   * any pod where it may create Jobs. Turn off only when a mutating webhook adds env, volumes,
   * probes or sidecars to the operator's Jobs (the policy would refuse them).
   * @default true
   */
  readonly confineServiceAccount?: boolean;
  /**
   * An editor and a viewer ClusterRole per kind (`<ClusterRole name>-echo-editor`, ...), labelled to
   * aggregate into the built-in `admin` and `edit` (editor) and `view` (viewer) roles, as
   * kubebuilder scaffolds them: whoever may edit a namespace may then edit its Echos and
   * ScheduledEchos, whoever may view it may read them (infra/tenant-roles.ts). They grant nothing
   * the built-in roles do not already allow through Jobs and CronJobs. Turn off when the cluster's
   * RBAC is managed elsewhere, or to keep the kinds from namespace editors.
   * @default true
   */
  readonly tenantRoles?: boolean;
  /**
   * Extra labels for every object except the CRDs (which stay identical to crds/).
   * @default - none
   */
  readonly labels?: Record<string, string>;
}

/** The props with every default filled in: what the construct actually synthesizes. */
export interface ResolvedEchoperatorProps {
  namespace: string;
  createNamespace: boolean;
  installCrds: boolean;
  name: string;
  appName: string;
  instance: string;
  image: string;
  imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  command: string[];
  args: string[];
  workers: number;
  watchNamespaces: string[] | undefined;
  logLevel: LogLevel;
  logFormat: LogFormat;
  metrics: Required<Omit<EchoperatorMetricsProps, 'certSecret' | 'networkPolicy'>> & {
    certSecret: string | undefined;
    networkPolicy: Required<EchoperatorMetricsNetworkPolicyProps>;
  };
  monitoring: {
    enabled: boolean;
    namespace: string;
    interval: string;
    labels: Record<string, string>;
    prometheusServiceAccount: ServiceAccountRef;
    insecureSkipVerify: boolean;
    rules: Required<EchoperatorMonitoringRulesProps>;
    dashboard: Required<EchoperatorMonitoringDashboardProps>;
  };
  healthPort: number;
  resources: { requests: ResourceQuantities; limits: ResourceQuantities };
  jobImage: string;
  jobMaxResources: Required<ResourceQuantities>;
  ha: Required<EchoperatorHaProps>;
  terminationGracePeriodSeconds: number;
  confineServiceAccount: boolean;
  tenantRoles: boolean;
  labels: Record<string, string>;
  pod: ResolvedEchoperatorPodProps;
}

export const DEFAULTS = {
  namespace: 'echoperator',
  name: 'echoperator',
  image: `${IMAGE_REPOSITORY}:${ECHOPERATOR_VERSION}`,
  imagePullPolicy: 'IfNotPresent',
  command: ['node', '/app/echoperator.js'],
  args: [],
  workers: 4,
  logLevel: 'info',
  logFormat: 'json',
  metrics: { enabled: true, port: 2112, path: '/metrics', insecurePlainHttp: false },
  metricsNetworkPolicy: { enabled: false, namespaceLabels: { metrics: 'enabled' } },
  monitoring: {
    interval: '30s',
    prometheusServiceAccount: { name: 'prometheus-k8s', namespace: 'monitoring' },
    runbookUrl: `https://github.com/mmontes11/echoperator-ts/blob/v${ECHOPERATOR_VERSION}/docs/runbooks.md`,
    dashboardLabels: { grafana_dashboard: '1' },
  },
  healthPort: 8081,
  // Why these: see EchoperatorResources.
  resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
  jobImage: 'busybox:1.37',
  // Why these: see EchoperatorProps.jobMaxResources.
  jobMaxResources: { cpu: '100m', memory: '64Mi' },
  ha: {
    enabled: false,
    replicas: 3,
    leaseDurationSeconds: LEASE_DEFAULT_SECONDS.leaseDuration,
    renewDeadlineSeconds: LEASE_DEFAULT_SECONDS.renewDeadline,
    retryPeriodSeconds: LEASE_DEFAULT_SECONDS.retryPeriod,
    leaseName: 'echoperator',
  },
  terminationGracePeriodSeconds: 45,
} as const;

/** Where a metrics.certSecret is mounted (METRICS_CERT_DIR). */
export const METRICS_CERT_MOUNT = '/etc/echoperator/metrics-cert';
/** The quantities the props accept (the values schema's pattern for jobMaxResources too). */
export const QUANTITY = /^([0-9]+(\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
const QUANTITY_FACTORS: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** Thrown for props the construct cannot turn into a working install; the message names the prop. */
export class EchoperatorPropsError extends Error {
  override readonly name = 'EchoperatorPropsError';
}

function fail(message: string): never {
  throw new EchoperatorPropsError(`Echoperator: ${message}`);
}

function checkPort(what: string, port: number): void {
  if (!isPort(port)) fail(`${what} must be an integer from 1 to 65535, got ${port}`);
}

function checkPositiveInteger(what: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) fail(`${what} must be a positive integer, got ${value}`);
}

function checkLabel(what: string, value: string, max = 63): void {
  if (!isDns1123Label(value, max)) {
    fail(`${what} must be a DNS label (lower-case letters, digits and '-', at most ${max} characters), got ${JSON.stringify(value)}`);
  }
}

function quantityValue(what: string, q: string): number {
  const m = QUANTITY.exec(q);
  if (!m) fail(`${what} must be a Kubernetes quantity such as '50m', '1', '64Mi' or '1Gi', got ${JSON.stringify(q)}`);
  return Number(m[1]) * QUANTITY_FACTORS[m[3] ?? '']!;
}

/**
 * jobMaxResources: quantities that cover what the operator's own Job container requests and is
 * limited to, or the confinement policy would refuse every Job the operator makes.
 */
function checkJobMaxResources(max: Required<ResourceQuantities>): void {
  const resources = echoPodTemplate('', '', {}).spec!.containers[0]!.resources!;
  for (const res of ['cpu', 'memory'] as const) {
    const maxValue = quantityValue(`jobMaxResources.${res}`, max[res]);
    for (const [kind, quantities] of Object.entries(resources) as [string, Record<string, string> | undefined][]) {
      const own = quantities?.[res];
      if (own !== undefined && quantityValue(`the Job's ${kind}.${res}`, own) > maxValue) {
        fail(
          `jobMaxResources.${res} must be at least ${own}, what the operator's Jobs ${kind === 'limits' ? 'are limited to' : 'request'}, got ${max[res]}`,
        );
      }
    }
  }
}

/** Fills in defaults and checks every prop; throws EchoperatorPropsError naming the bad one. */
export function resolveEchoperatorProps(props: EchoperatorProps = {}): ResolvedEchoperatorProps {
  const metrics = {
    ...DEFAULTS.metrics,
    ...defined(props.metrics),
    certSecret: props.metrics?.certSecret,
    networkPolicy: {
      enabled: props.metrics?.networkPolicy?.enabled ?? DEFAULTS.metricsNetworkPolicy.enabled,
      namespaceLabels: { ...(props.metrics?.networkPolicy?.namespaceLabels ?? DEFAULTS.metricsNetworkPolicy.namespaceLabels) },
    },
  };
  const ha = { ...DEFAULTS.ha, ...defined(props.ha) };
  const namespace = props.namespace ?? DEFAULTS.namespace;
  const mon = props.monitoring ?? {};
  const monitoringNamespace = mon.namespace ?? namespace;
  const monitoringLabels = { ...mon.labels };
  const monitoring: ResolvedEchoperatorProps['monitoring'] = {
    enabled: mon.enabled ?? false,
    namespace: monitoringNamespace,
    interval: mon.interval ?? DEFAULTS.monitoring.interval,
    labels: monitoringLabels,
    prometheusServiceAccount: { ...(mon.prometheusServiceAccount ?? DEFAULTS.monitoring.prometheusServiceAccount) },
    insecureSkipVerify: mon.insecureSkipVerify ?? false,
    rules: {
      enabled: mon.rules?.enabled ?? false,
      labels: { ...(mon.rules?.labels ?? monitoringLabels) },
      runbookUrl: mon.rules?.runbookUrl ?? DEFAULTS.monitoring.runbookUrl,
    },
    dashboard: {
      enabled: mon.dashboard?.enabled ?? false,
      namespace: mon.dashboard?.namespace ?? monitoringNamespace,
      labels: { ...(mon.dashboard?.labels ?? DEFAULTS.monitoring.dashboardLabels) },
    },
  };
  const r: ResolvedEchoperatorProps = {
    namespace,
    createNamespace: props.createNamespace ?? true,
    installCrds: props.installCrds ?? true,
    name: props.name ?? DEFAULTS.name,
    appName: props.appName ?? DEFAULTS.name,
    instance: props.instance ?? props.name ?? DEFAULTS.name,
    image: props.image ?? DEFAULTS.image,
    imagePullPolicy: props.imagePullPolicy ?? DEFAULTS.imagePullPolicy,
    command: [...(props.command ?? DEFAULTS.command)],
    args: [...(props.args ?? DEFAULTS.args)],
    workers: props.workers ?? DEFAULTS.workers,
    watchNamespaces: props.watchNamespaces ? [...props.watchNamespaces] : undefined,
    logLevel: props.logLevel ?? DEFAULTS.logLevel,
    logFormat: props.logFormat ?? DEFAULTS.logFormat,
    metrics,
    monitoring,
    healthPort: props.healthPort ?? DEFAULTS.healthPort,
    resources: {
      requests: { ...DEFAULTS.resources.requests, ...defined(props.resources?.requests) },
      limits: { ...DEFAULTS.resources.limits, ...defined(props.resources?.limits) },
    },
    jobImage: props.jobImage ?? DEFAULTS.jobImage,
    jobMaxResources: { ...DEFAULTS.jobMaxResources, ...defined(props.jobMaxResources) },
    ha,
    terminationGracePeriodSeconds: props.terminationGracePeriodSeconds ?? DEFAULTS.terminationGracePeriodSeconds,
    confineServiceAccount: props.confineServiceAccount ?? true,
    tenantRoles: props.tenantRoles ?? true,
    labels: { ...props.labels },
    pod: resolvePodProps(props),
  };

  checkLabel('namespace', r.namespace);
  // Leaves room for the '-config' and '-metrics' suffixes within a DNS label.
  checkLabel('name', r.name, NAME_MAX_LENGTH);
  for (const key of ['appName', 'instance'] as const) {
    // Both select the operator's pods: a label value, and never empty.
    if (r[key] === '' || !isLabelValue(r[key])) fail(`${key} must be a label value (at most 63 characters), got ${JSON.stringify(r[key])}`);
  }
  if (!isImageReference(r.image)) {
    fail(`image must be an image reference such as 'repo/name:tag' or 'repo/name@sha256:<64 hex digits>', got ${JSON.stringify(r.image)}`);
  }
  if (!isImageReference(r.jobImage)) fail(`jobImage must be an image reference such as 'busybox:1.37', got ${JSON.stringify(r.jobImage)}`);
  if (!['Always', 'IfNotPresent', 'Never'].includes(r.imagePullPolicy)) {
    fail(`imagePullPolicy must be Always, IfNotPresent or Never, got ${JSON.stringify(r.imagePullPolicy)}`);
  }
  if (r.command.length === 0) fail('command must not be empty');
  checkPositiveInteger('workers', r.workers);
  if (r.watchNamespaces !== undefined) {
    if (r.watchNamespaces.length === 0) {
      fail('watchNamespaces must list at least one namespace; leave it undefined to watch all namespaces');
    }
    const seen = new Set<string>();
    for (const ns of r.watchNamespaces) {
      checkLabel('every entry of watchNamespaces', ns);
      if (seen.has(ns)) fail(`watchNamespaces lists ${ns} twice`);
      seen.add(ns);
    }
  }
  if (!LOG_LEVELS.includes(r.logLevel)) fail(`logLevel must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(r.logLevel)}`);
  if (!LOG_FORMATS.includes(r.logFormat)) fail(`logFormat must be one of ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(r.logFormat)}`);
  checkPort('metrics.port', r.metrics.port);
  checkPort('healthPort', r.healthPort);
  if (r.metrics.enabled && r.metrics.port === r.healthPort) {
    fail(`metrics.port and healthPort must differ, both are ${r.healthPort}`);
  }
  if (r.metrics.certSecret !== undefined) {
    if (r.metrics.insecurePlainHttp)
      fail('metrics.certSecret and metrics.insecurePlainHttp exclude each other: plain HTTP uses no certificate');
    if (!isDns1123Subdomain(r.metrics.certSecret)) {
      fail(`metrics.certSecret must be a Secret name (a DNS subdomain), got ${JSON.stringify(r.metrics.certSecret)}`);
    }
  }
  const npLabels = Object.entries(r.metrics.networkPolicy.namespaceLabels);
  if (r.metrics.networkPolicy.enabled && npLabels.length === 0) {
    fail('metrics.networkPolicy.namespaceLabels must hold at least one label: an empty selector would admit every namespace');
  }
  for (const [k, v] of npLabels) {
    if (!isLabelKey(k) || !isLabelValue(v)) {
      fail(`metrics.networkPolicy.namespaceLabels must be valid label keys and values, got ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    }
  }
  if (!isUrlPath(r.metrics.path)) {
    fail(`metrics.path must be an absolute URL path such as '/metrics' (no spaces, '?' or '#'), got ${JSON.stringify(r.metrics.path)}`);
  }
  checkMonitoring(r);
  for (const res of ['cpu', 'memory'] as const) {
    const req = r.resources.requests[res];
    const lim = r.resources.limits[res];
    const reqValue = req === undefined ? undefined : quantityValue(`resources.requests.${res}`, req);
    const limValue = lim === undefined ? undefined : quantityValue(`resources.limits.${res}`, lim);
    if (reqValue !== undefined && limValue !== undefined && reqValue > limValue) {
      fail(`resources.requests.${res} (${req}) must not exceed resources.limits.${res} (${lim})`);
    }
  }
  if (r.resources.requests.cpu === undefined || r.resources.requests.memory === undefined) {
    fail('resources.requests must set both cpu and memory');
  }
  if (r.resources.limits.memory === undefined) fail('resources.limits.memory must be set: a leaking operator must not starve its node');
  checkJobMaxResources(r.jobMaxResources);
  if (!Number.isInteger(r.terminationGracePeriodSeconds) || r.terminationGracePeriodSeconds <= OPERATOR_SHUTDOWN_TIMEOUT_SECONDS) {
    fail(
      `terminationGracePeriodSeconds must be an integer greater than the operator's ${OPERATOR_SHUTDOWN_TIMEOUT_SECONDS} s shutdown timeout, ` +
        `got ${r.terminationGracePeriodSeconds}`,
    );
  }

  checkPositiveInteger('ha.replicas', ha.replicas);
  for (const key of ['leaseDurationSeconds', 'renewDeadlineSeconds', 'retryPeriodSeconds'] as const) {
    checkPositiveInteger(`ha.${key}`, ha[key]);
    if (ha[key] > LEASE_MAX_SECONDS) fail(`ha.${key} must be at most ${LEASE_MAX_SECONDS} (an hour), got ${ha[key]}`);
  }
  const broken = brokenLeaseRule({
    leaseDuration: ha.leaseDurationSeconds,
    renewDeadline: ha.renewDeadlineSeconds,
    retryPeriod: ha.retryPeriodSeconds,
  });
  if (broken === 'leaseDuration') {
    fail(
      `ha.leaseDurationSeconds (${ha.leaseDurationSeconds}) must be greater than ha.renewDeadlineSeconds (${ha.renewDeadlineSeconds}): ` +
        'a standby must wait longer than a leader keeps leading without renewing, or two leaders can run at once',
    );
  }
  if (broken === 'renewDeadline') {
    fail(
      `ha.renewDeadlineSeconds (${ha.renewDeadlineSeconds}) must be greater than ${JITTER_FACTOR} x ha.retryPeriodSeconds ` +
        `(${JITTER_FACTOR * ha.retryPeriodSeconds}), so a leader gets more than one try to renew`,
    );
  }
  if (!isDns1123Subdomain(ha.leaseName)) {
    fail(`ha.leaseName must be a DNS subdomain (lower-case letters, digits, '-' and '.'), got ${JSON.stringify(ha.leaseName)}`);
  }
  checkPodProps(r.pod, {
    installEnvNames: installEnvNames(r),
    installLabelKeys: new Set(INSTALL_LABEL_KEYS),
    checksumAnnotation: CONFIG_CHECKSUM_ANNOTATION,
    fail,
  });
  return r;
}

/** The monitoring props: names, labels, and a ServiceMonitor only where its scrape can work. */
function checkMonitoring(r: ResolvedEchoperatorProps): void {
  const m = r.monitoring;
  checkLabel('monitoring.namespace', m.namespace);
  checkLabel('monitoring.dashboard.namespace', m.dashboard.namespace);
  checkLabel('monitoring.prometheusServiceAccount.namespace', m.prometheusServiceAccount.namespace);
  if (!isDns1123Subdomain(m.prometheusServiceAccount.name)) {
    fail(`monitoring.prometheusServiceAccount.name must be a ServiceAccount name, got ${JSON.stringify(m.prometheusServiceAccount.name)}`);
  }
  if (!PROMETHEUS_DURATION.test(m.interval)) {
    fail(`monitoring.interval must be a Prometheus duration such as '30s' or '1m', got ${JSON.stringify(m.interval)}`);
  }
  const labelSets: [string, Record<string, string>][] = [
    ['monitoring.labels', m.labels],
    ['monitoring.rules.labels', m.rules.labels],
    ['monitoring.dashboard.labels', m.dashboard.labels],
  ];
  for (const [key, labels] of labelSets) {
    for (const [k, v] of Object.entries(labels)) {
      if (!isLabelKey(k) || !isLabelValue(v))
        fail(`${key} must be valid label keys and values, got ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    }
  }
  if (m.dashboard.enabled && Object.keys(m.dashboard.labels).length === 0) {
    fail("monitoring.dashboard.labels must hold at least one label: Grafana's sidecar finds dashboards by label");
  }
  if (!RUNBOOK_URL.test(m.rules.runbookUrl)) {
    fail(`monitoring.rules.runbookUrl must be an http(s) URL without a fragment, got ${JSON.stringify(m.rules.runbookUrl)}`);
  }
  if (m.rules.enabled && !r.metrics.enabled) {
    fail('monitoring.rules.enabled needs metrics.enabled: the alerts read the metrics (EchoperatorDown would fire for good)');
  }
  if (!m.enabled) return;
  if (!r.metrics.enabled) fail('monitoring.enabled needs metrics.enabled: the ServiceMonitor scrapes the metrics Service');
  if (r.metrics.certSecret !== undefined && m.namespace !== r.namespace) {
    fail(
      `monitoring.namespace must be the install's namespace (${r.namespace}) with metrics.certSecret, got ${JSON.stringify(m.namespace)}: ` +
        "prometheus-operator reads the ServiceMonitor's CA from a Secret in the ServiceMonitor's own namespace",
    );
  }
  if (r.metrics.certSecret === undefined && !r.metrics.insecurePlainHttp && !m.insecureSkipVerify) {
    fail(
      'monitoring.enabled: without metrics.certSecret the operator serves a self-signed certificate that Prometheus cannot verify. ' +
        'Set metrics.certSecret to a kubernetes.io/tls Secret (e.g. from cert-manager) with a ca.crt, or set monitoring.insecureSkipVerify: true ' +
        "to scrape without verifying (the scraper's token then goes to whichever endpoint answers)",
    );
  }
  if (r.metrics.certSecret !== undefined && m.namespace !== r.namespace) {
    fail(
      `monitoring.namespace (${m.namespace}) must be the install's namespace (${r.namespace}) when metrics.certSecret is set: ` +
        'a ServiceMonitor reads the CA to verify with from a Secret in its own namespace',
    );
  }
}

/** Drops keys whose value is undefined, so `{ port: undefined }` keeps the default port. */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The operator's settings as environment variables: the keys of the settings ConfigMap, exactly
 * the variables the operator reads (KUBECONFIG stays unset: in-cluster).
 */
export function operatorSettings(r: ResolvedEchoperatorProps): Record<string, string> {
  const settings: Record<string, string> = {
    NUM_WORKERS: String(r.workers),
    WATCH_NAMESPACES: (r.watchNamespaces ?? []).join(','),
    LOG_LEVEL: r.logLevel,
    LOG_FORMAT: r.logFormat,
    METRICS_ENABLED: String(r.metrics.enabled),
    METRICS_PATH: r.metrics.path,
    METRICS_PORT: String(r.metrics.port),
    METRICS_INSECURE_PLAIN_HTTP: String(r.metrics.insecurePlainHttp),
    HEALTH_PORT: String(r.healthPort),
    JOB_IMAGE: r.jobImage,
    HA_ENABLED: String(r.ha.enabled),
  };
  if (r.metrics.certSecret !== undefined) settings.METRICS_CERT_DIR = METRICS_CERT_MOUNT;
  if (r.ha.enabled) {
    settings.HA_LEASE_LOCK_NAME = r.ha.leaseName;
    settings.HA_LEASE_DURATION_SECONDS = String(r.ha.leaseDurationSeconds);
    settings.HA_RENEW_DEADLINE_SECONDS = String(r.ha.renewDeadlineSeconds);
    settings.HA_RETRY_PERIOD_SECONDS = String(r.ha.retryPeriodSeconds);
  }
  return settings;
}

/**
 * Every environment variable the install sets in the operator's container: the downward API's
 * and every key the settings ConfigMap may hold (whichever props are on), which extraEnv may not set.
 */
export function installEnvNames(r: ResolvedEchoperatorProps): Set<string> {
  const everythingOn = { ...r, ha: { ...r.ha, enabled: true }, metrics: { ...r.metrics, certSecret: 'any' } };
  return new Set([...POD_ENV_NAMES, ...Object.keys(operatorSettings(everythingOn))]);
}

/** The labels the install puts on the pod template (and every object); podLabels may not set them. */
export const INSTALL_LABEL_KEYS = [
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'app.kubernetes.io/component',
  'app.kubernetes.io/part-of',
  'app.kubernetes.io/managed-by',
] as const;

/** sha256 of the settings, keys sorted: changes exactly when a setting changes. */
export function settingsChecksum(settings: Record<string, string>): string {
  const canonical = JSON.stringify(
    Object.keys(settings)
      .sort()
      .map((k) => [k, settings[k]]),
  );
  return createHash('sha256').update(canonical).digest('hex');
}
