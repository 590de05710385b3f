/**
 * The Echoperator construct's props as a user writes them (EchoperatorProps: every prop, its
 * meaning and its documented default) and as the construct synthesizes them
 * (ResolvedEchoperatorProps: every default filled in). Types only, and the lists of the accepted
 * log levels and formats; the defaults are props-defaults.ts's, the checks props-validation.ts's.
 */
import type { EchoperatorPodProps, ResolvedEchoperatorPodProps } from './pod-props.js';
import type {
  EchoperatorMetricsNetworkPolicyProps,
  EchoperatorMetricsProps,
  EchoperatorMonitoringDashboardProps,
  EchoperatorMonitoringProps,
  EchoperatorMonitoringRulesProps,
  ServiceAccountRef,
} from './props-monitoring-types.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
export type LogFormat = 'json' | 'text';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

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
   * The Echo and ScheduledEcho CRDs (generated from src/api), as cert-manager's chart offers
   * them: `enabled` includes them in the install (the Helm chart templates them, so `helm
   * upgrade` upgrades them); false when they are installed separately, e.g. by another install of
   * the operator. `keep` annotates them `helm.sh/resource-policy: keep`, so that neither `helm
   * uninstall` nor a `helm rollback` to a release without them deletes them: deleting a CRD
   * deletes every Echo and ScheduledEcho in the cluster.
   * @default {enabled: true, keep: true}
   */
  readonly crds?: { readonly enabled?: boolean; readonly keep?: boolean };
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
   * Container command (the image's entrypoint, which runs the bundle /app/echoperator.js from its code cache).
   * @default ['node', '/app/start.js']
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
  crds: { enabled: boolean; keep: boolean };
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
