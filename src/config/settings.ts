/**
 * Every setting of the operator, in ONE table: its environment variable, its flag, its default,
 * its parser (which also words what it accepts) and its description. `--help`, the error
 * messages and the parsing all read this table, and its type requires exactly one entry per field
 * of Settings, so a setting cannot be added to one place and forgotten in another.
 *
 * The environment variable names are those of the Go echoperator, so its Helm values and
 * ConfigMaps keep working.
 */
import { LEASE_DEFAULT_SECONDS, LEASE_MAX_SECONDS, type LogLevel } from '../runtime/index.js';
import type { LogFormat } from '../observability/logging.js';
import {
  boolean,
  choice,
  dnsSubdomain,
  imageReference,
  integer,
  namespaceList,
  namespaceName,
  nonEmptyText,
  port,
  seconds,
  text,
  urlPath,
  type Parser,
} from './parsers.js';

export type { LogFormat };

/** The operator's configuration, fully resolved and validated. */
export interface Settings {
  /** Path of a kubeconfig file; '' = in-cluster when in a pod, else client-node's default lookup. */
  kubeconfig: string;
  /** The operator's own namespace; the HA Lease lives here. */
  namespace: string;
  /** Namespaces whose objects are watched; [] = all namespaces. */
  watchNamespaces: string[];
  numWorkers: number;
  haEnabled: boolean;
  /** This process's identity in the Lease; unique per process. */
  haNodeId: string;
  haLeaseLockName: string;
  haLeaseDurationSeconds: number;
  haRenewDeadlineSeconds: number;
  haRetryPeriodSeconds: number;
  metricsEnabled: boolean;
  metricsPath: string;
  /** 0 = any free port (tests). */
  metricsPort: number;
  /** Folder with tls.crt and tls.key for the metrics endpoint; '' = a self-signed certificate. */
  metricsCertDir: string;
  /** Plain HTTP and no authentication on the metrics endpoint (tests, a trusted sidecar). */
  metricsInsecurePlainHttp: boolean;
  /** 0 = no probe server. */
  healthPort: number;
  logLevel: LogLevel;
  /** 'auto' is left for the logger to resolve against its stream (text on a TTY, else JSON). */
  logFormat: LogFormat;
  shutdownTimeoutSeconds: number;
  jobImage: string;
  /** 0 = no periodic resync. */
  resyncPeriodSeconds: number;
  /** fair: priorities, turns across namespaces, aging (runtime/workqueue/fair.ts); fifo: client-go's order. */
  workQueueOrder: 'fair' | 'fifo';
  cacheSyncTimeoutSeconds: number;
  /** 0 = no "apiserver" liveness check. */
  apiUnreachableTimeoutSeconds: number;
}

/** What computed defaults may look at; injectable so tests do not depend on the machine. */
export interface DefaultContext {
  env: NodeJS.ProcessEnv;
  hostname(): string;
  /** n random bytes as 2n lower-case hex digits. */
  randomHex(bytes: number): string;
  /** The pod's namespace from the service account mount; undefined outside a pod. */
  inClusterNamespace(): string | undefined;
}

export interface SettingSpec<T> {
  /** The environment variable; an empty value counts as unset (ConfigMaps often render ''). */
  env: string;
  /** The long flag, e.g. --num-workers; it wins over the environment variable. */
  flag: string;
  /** Shown in help as <valueName>; a boolean takes an optional value, a bare flag meaning true. */
  valueName: string;
  description: string;
  parser: Parser<T>;
  default: T | ((ctx: DefaultContext) => T);
  /** The default as --help shows it (computed defaults cannot be shown by value). */
  defaultText: string;
}

export type SettingsTable = { readonly [K in keyof Settings]: SettingSpec<Settings[K]> };

/** An hour: no lease, renewal or shutdown wait is meant to be longer. */
const HOUR = LEASE_MAX_SECONDS;
/** A day: the longest sensible resync period. */
const DAY = 86_400;

const positiveSeconds = (max = HOUR): Parser<number> =>
  seconds({ allowZero: false, max, accepts: `a positive number of seconds up to ${max}, e.g. 15 or 0.5` });

const enabledPort = (what: string): Parser<number> => port(`a port number from 0 to 65535 (${what})`);

export const SETTINGS: SettingsTable = {
  kubeconfig: {
    env: 'KUBECONFIG',
    flag: '--kubeconfig',
    valueName: 'path',
    description: 'kubeconfig file to reach the API server; empty = in-cluster service account when in a pod, else ~/.kube/config',
    parser: text('a file path, or empty'),
    default: '',
    defaultText: "''",
  },
  namespace: {
    env: 'NAMESPACE',
    flag: '--namespace',
    valueName: 'name',
    description: "the operator's own namespace, where the HA Lease lives",
    parser: namespaceName,
    default: (ctx) => nonBlank(ctx.env.POD_NAMESPACE) ?? ctx.inClusterNamespace() ?? 'default',
    defaultText: '$POD_NAMESPACE, else the in-cluster namespace, else default',
  },
  watchNamespaces: {
    env: 'WATCH_NAMESPACES',
    flag: '--watch-namespaces',
    valueName: 'list',
    description: 'namespaces whose objects are reconciled',
    parser: namespaceList,
    default: [],
    defaultText: "'' (all)",
  },
  numWorkers: {
    env: 'NUM_WORKERS',
    flag: '--num-workers',
    valueName: 'n',
    description: 'reconciles running in parallel per controller',
    parser: integer(1, 256),
    default: 4,
    defaultText: '4',
  },
  haEnabled: {
    env: 'HA_ENABLED',
    flag: '--ha-enabled',
    valueName: 'bool',
    description: 'run several replicas and let only the holder of a Lease reconcile',
    parser: boolean,
    default: false,
    defaultText: 'false',
  },
  haNodeId: {
    env: 'HA_NODE_ID',
    flag: '--ha-node-id',
    valueName: 'id',
    description: "this replica's identity in the Lease; must be unique per process",
    parser: nonEmptyText('a non-empty string'),
    // client-go appends a random part to the hostname for the same reason: a restarted process
    // on the same host must not mistake the lease of its predecessor for its own.
    default: (ctx) => `${ctx.hostname()}_${ctx.randomHex(4)}`,
    defaultText: '<hostname>_<8 random hex digits>',
  },
  haLeaseLockName: {
    env: 'HA_LEASE_LOCK_NAME',
    flag: '--ha-lease-lock-name',
    valueName: 'name',
    description: 'name of the coordination.k8s.io Lease the replicas contend for',
    parser: dnsSubdomain,
    default: 'echoperator',
    defaultText: 'echoperator',
  },
  haLeaseDurationSeconds: {
    env: 'HA_LEASE_DURATION_SECONDS',
    flag: '--ha-lease-duration-seconds',
    valueName: 'seconds',
    description: 'how long a standby waits on an unrenewed Lease before taking it over',
    parser: positiveSeconds(),
    default: LEASE_DEFAULT_SECONDS.leaseDuration,
    defaultText: String(LEASE_DEFAULT_SECONDS.leaseDuration),
  },
  haRenewDeadlineSeconds: {
    env: 'HA_RENEW_DEADLINE_SECONDS',
    flag: '--ha-renew-deadline-seconds',
    valueName: 'seconds',
    description: 'how long the leader keeps leading without renewing the Lease before it stops',
    parser: positiveSeconds(),
    default: LEASE_DEFAULT_SECONDS.renewDeadline,
    defaultText: String(LEASE_DEFAULT_SECONDS.renewDeadline),
  },
  haRetryPeriodSeconds: {
    env: 'HA_RETRY_PERIOD_SECONDS',
    flag: '--ha-retry-period-seconds',
    valueName: 'seconds',
    description: 'pause between attempts to acquire or renew the Lease',
    parser: positiveSeconds(),
    default: LEASE_DEFAULT_SECONDS.retryPeriod,
    defaultText: String(LEASE_DEFAULT_SECONDS.retryPeriod),
  },
  metricsEnabled: {
    env: 'METRICS_ENABLED',
    flag: '--metrics-enabled',
    valueName: 'bool',
    description: 'serve Prometheus metrics',
    parser: boolean,
    default: true,
    defaultText: 'true',
  },
  metricsPath: {
    env: 'METRICS_PATH',
    flag: '--metrics-path',
    valueName: 'path',
    description: 'URL path of the metrics endpoint',
    parser: urlPath,
    default: '/metrics',
    defaultText: '/metrics',
  },
  metricsPort: {
    env: 'METRICS_PORT',
    flag: '--metrics-port',
    valueName: 'port',
    description: 'port of the metrics endpoint',
    parser: enabledPort('0 = any free port'),
    default: 2112,
    defaultText: '2112',
  },
  metricsCertDir: {
    env: 'METRICS_CERT_DIR',
    flag: '--metrics-cert-dir',
    valueName: 'dir',
    description:
      "folder holding the metrics endpoint's tls.crt and tls.key (a mounted kubernetes.io/tls Secret, as cert-manager writes it), reloaded when they change; empty = a self-signed certificate made at start",
    parser: text('a folder path, or empty for a self-signed certificate'),
    default: '',
    defaultText: "''",
  },
  metricsInsecurePlainHttp: {
    env: 'METRICS_INSECURE_PLAIN_HTTP',
    flag: '--metrics-insecure-plain-http',
    valueName: 'bool',
    description:
      'serve metrics over plain HTTP to anyone who reaches the port, without TLS and without authentication (by default: HTTPS, and only callers whose bearer token may get the metrics path)',
    parser: boolean,
    default: false,
    defaultText: 'false',
  },
  healthPort: {
    env: 'HEALTH_PORT',
    flag: '--health-port',
    valueName: 'port',
    description: 'port of /healthz and /readyz',
    parser: enabledPort('0 = no probe server'),
    default: 8081,
    defaultText: '8081',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    flag: '--log-level',
    valueName: 'level',
    description: 'least severe level written',
    parser: choice(['debug', 'info', 'warn', 'error'] as const),
    default: 'info',
    defaultText: 'info',
  },
  logFormat: {
    env: 'LOG_FORMAT',
    flag: '--log-format',
    valueName: 'format',
    description: 'log line format; auto = text when stderr is a terminal (or ENV=local), else JSON lines',
    parser: choice(['auto', 'json', 'text'] as const),
    default: 'auto',
    defaultText: 'auto',
  },
  shutdownTimeoutSeconds: {
    env: 'SHUTDOWN_TIMEOUT_SECONDS',
    flag: '--shutdown-timeout-seconds',
    valueName: 'seconds',
    description: 'how long a graceful stop may take before the process exits anyway',
    parser: positiveSeconds(),
    default: 30,
    defaultText: '30',
  },
  jobImage: {
    env: 'JOB_IMAGE',
    flag: '--job-image',
    valueName: 'image',
    description: 'container image of the Jobs and CronJobs that echo the message',
    parser: imageReference,
    default: 'busybox:1.37',
    defaultText: 'busybox:1.37',
  },
  resyncPeriodSeconds: {
    env: 'RESYNC_PERIOD_SECONDS',
    flag: '--resync-period-seconds',
    valueName: 'seconds',
    description: 'how often every cached object is reconciled again even without a change',
    parser: seconds({ allowZero: true, max: DAY, accepts: `a number of seconds from 0 (off) to ${DAY}` }),
    default: 0,
    defaultText: '0 (off)',
  },
  workQueueOrder: {
    env: 'WORK_QUEUE_ORDER',
    flag: '--work-queue-order',
    valueName: 'order',
    description:
      "order reconciles are run in; fair = fresh changes before the initial list and resyncs, namespaces taking turns, no key waiting more than 10 s behind them; fifo = first in, first out (client-go's)",
    parser: choice(['fair', 'fifo'] as const),
    default: 'fair',
    defaultText: 'fair',
  },
  cacheSyncTimeoutSeconds: {
    env: 'CACHE_SYNC_TIMEOUT_SECONDS',
    flag: '--cache-sync-timeout-seconds',
    valueName: 'seconds',
    description:
      "how long the start may take (reaching the API server, finding the CRDs, the caches' first sync) before the process exits 1 naming the last problem",
    parser: positiveSeconds(),
    default: 120,
    defaultText: '120',
  },
  apiUnreachableTimeoutSeconds: {
    env: 'API_UNREACHABLE_TIMEOUT_SECONDS',
    flag: '--api-unreachable-timeout-seconds',
    valueName: 'seconds',
    description:
      'how long the API server may give no answer at all (timeouts, refused connections, a silent proxy) while requests are made before /healthz fails',
    parser: seconds({ allowZero: true, max: HOUR, accepts: `a number of seconds from 0 (no such check) to ${HOUR}` }),
    default: 120,
    defaultText: '120',
  },
};

function nonBlank(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t ? t : undefined;
}
