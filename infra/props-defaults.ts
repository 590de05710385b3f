/**
 * The props' defaults: what the construct synthesizes for a prop left out, and withDefaults, which
 * fills them in (a prop given as undefined keeps its default). Each is also written in the prop's
 * `@default` (props-types.ts), and the values schema takes its defaults from the resolved props,
 * so values.schema.json and the README's table follow a change here.
 */
import packageJson from '../package.json' with { type: 'json' };
import { LEASE_DEFAULT_SECONDS } from '../src/runtime/leaderelection/config.js';
import { resolvePodProps } from './pod-props.js';
import type { EchoperatorProps, ResolvedEchoperatorProps } from './props-types.js';

/** The version of this project: the default image tag and the app.kubernetes.io/version label. */
export const ECHOPERATOR_VERSION: string = packageJson.version;

/** Where release images are published. */
export const IMAGE_REPOSITORY = 'ghcr.io/mmontes11/echoperator-ts';

export const DEFAULTS = {
  namespace: 'echoperator',
  name: 'echoperator',
  image: `${IMAGE_REPOSITORY}:${ECHOPERATOR_VERSION}`,
  imagePullPolicy: 'IfNotPresent',
  command: ['node', '/app/start.js'],
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

/** The props with every default filled in, not yet checked: resolveEchoperatorProps checks them. */
export function withDefaults(props: EchoperatorProps): ResolvedEchoperatorProps {
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
    crds: { enabled: props.crds?.enabled ?? true, keep: props.crds?.keep ?? true },
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
  return r;
}

/** Drops keys whose value is undefined, so `{ port: undefined }` keeps the default port. */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
