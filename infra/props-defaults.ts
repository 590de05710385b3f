/**
 * The props' defaults: what the construct synthesizes for a prop left out. Each is also written
 * in the prop's `@default` (props-types.ts), and the values schema takes its defaults from the
 * resolved props, so values.schema.json and the README's table follow a change here.
 */
import packageJson from '../package.json' with { type: 'json' };
import { LEASE_DEFAULT_SECONDS } from '../src/runtime/leaderelection/config.js';

/** The version of this project: the default image tag and the app.kubernetes.io/version label. */
export const ECHOPERATOR_VERSION: string = packageJson.version;

/** Where release images are published. */
export const IMAGE_REPOSITORY = 'ghcr.io/mmontes11/echoperator-ts';

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
