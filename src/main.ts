/**
 * The echoperator command: parse settings, wire the parts, run until told to stop.
 * Nothing else lives here; each part documents its own guarantees.
 *
 * Exit codes: 0 after a graceful stop (SIGTERM/SIGINT), 1 when leadership was lost or a part
 * failed, 2 for invalid settings or configuration.
 */
import { hostname } from 'node:os';
import { parseSettingsOrExit, type Settings } from './config/index.js';
import { CUSTOM_RESOURCES, runnableControllers } from './controllers/index.js';
import {
  KubeConfigError,
  LeadershipLostError,
  loadKubeConfig,
  Manager,
  type ManagerConfig,
  realClock,
  RestClient,
  StartupTimeoutError,
  UnsupportedServerError,
} from './runtime/index.js';
import { MINIMUM_KUBERNETES } from './api/kubernetes.js';
import { KubeEventRecorder, restEventSink } from './observability/events/index.js';
import { HealthServer } from './observability/health.js';
import { createLogger } from './observability/logging.js';
import { createMetrics } from './observability/metrics.js';
import { MAX_REVIEWS_IN_FLIGHT } from './observability/metricsauth.js';
import { MetricsEndpoint } from './observability/metricsendpoint.js';
import { CertificateError } from './observability/servingcert.js';
import { tuneV8ForSize } from './v8flags.js';
import { VERSION } from './version.js';

function managerConfig(s: Settings): ManagerConfig {
  return {
    namespace: s.namespace,
    minimumKubernetes: MINIMUM_KUBERNETES,
    watchNamespaces: s.watchNamespaces.length ? s.watchNamespaces : undefined,
    workers: s.numWorkers,
    resyncPeriodMs: s.resyncPeriodSeconds * 1000,
    queueOrder: s.workQueueOrder,
    shutdownTimeoutMs: s.shutdownTimeoutSeconds * 1000,
    cacheSyncTimeoutMs: s.cacheSyncTimeoutSeconds * 1000,
    apiUnreachableTimeoutMs: s.apiUnreachableTimeoutSeconds * 1000,
    leaderElection: s.haEnabled
      ? {
          leaseName: s.haLeaseLockName,
          identity: s.haNodeId,
          leaseDurationMs: s.haLeaseDurationSeconds * 1000,
          renewDeadlineMs: s.haRenewDeadlineSeconds * 1000,
          retryPeriodMs: s.haRetryPeriodSeconds * 1000,
        }
      : undefined,
  };
}

async function main(): Promise<number> {
  tuneV8ForSize();
  const settings = parseSettingsOrExit(process.argv.slice(2), process.env, { kinds: CUSTOM_RESOURCES });
  const log = createLogger({ level: settings.logLevel, format: settings.logFormat });
  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(settings.kubeconfig);
  } catch (err) {
    if (!(err instanceof KubeConfigError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    return 2;
  }
  const metrics = createMetrics();
  const rest = new RestClient(kubeConfig, {
    userAgent: `echoperator/${VERSION} (${hostname()})`,
    metrics: metrics.rest,
    exec: { log: log.child({ component: 'exec-credential' }) },
  });
  log.info('starting echoperator', {
    version: VERSION,
    server: rest.server,
    namespace: settings.namespace,
    watchNamespaces: settings.watchNamespaces.length ? settings.watchNamespaces.join(',') : '(all)',
    workers: settings.numWorkers,
    ha: settings.haEnabled ? settings.haNodeId : false,
  });

  // The scrapers' access reviews on connections of their own: a flood of scrapes can never hold
  // the sockets that reconciles and the Lease renewals need (metricsauth.ts caps them in flight).
  const reviewRest = rest.withOwnConnections({ maxSockets: MAX_REVIEWS_IN_FLIGHT });
  const health = settings.healthPort ? new HealthServer({ port: settings.healthPort, logger: log }) : undefined;
  const metricsServer = settings.metricsEnabled
    ? new MetricsEndpoint({
        registry: metrics.registry,
        port: settings.metricsPort,
        path: settings.metricsPath,
        certDir: settings.metricsCertDir,
        insecurePlainHttp: settings.metricsInsecurePlainHttp,
        api: reviewRest,
        hosts: [hostname(), 'localhost', '127.0.0.1', '::1'],
        logger: log,
      })
    : undefined;
  // Events yield to reconciles while the queues have work (see KubeEventRecorder); the manager
  // that knows is made next, with the recorder among its parts.
  let hasQueuedWork = (): boolean => false;
  const events = new KubeEventRecorder({
    sink: restEventSink(rest),
    instance: settings.haNodeId,
    logger: log,
    busy: () => hasQueuedWork(),
    metrics: metrics.events,
  });
  const manager = new Manager(
    managerConfig(settings),
    {
      rest,
      logger: log,
      events,
      health,
      controllerMetrics: metrics.controller,
      queueMetrics: metrics.workqueue,
      leaderMetrics: metrics.leaderElection(settings.haLeaseLockName),
      informerMetrics: metrics.informer,
    },
    runnableControllers(settings),
  );
  hasQueuedWork = () => manager.hasQueuedWork();

  const stop = new AbortController();
  // The shutdown budget runs from the signal: the workers drain first, the Events get the rest.
  const shutdownBudgetMs = settings.shutdownTimeoutSeconds * 1000;
  let stoppingSince: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    log.info('stopping: finishing in-flight work', { signal });
    stoppingSince = realClock.now();
    stop.abort(new Error(`received ${signal}`));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // False once the lease is lost: as controller-runtime then, no graceful shutdown. Another
  // replica may lead already, and the usual cause, an API server that stopped answering, would
  // hold this process for the whole budget before a fresh one could stand again.
  let graceful = true;

  try {
    await health?.start();
    await metricsServer?.start();
    await manager.run(stop.signal);
    log.info('stopped');
    return 0;
  } catch (err) {
    if (stop.signal.aborted && err === stop.signal.reason) return 0;
    if (err instanceof CertificateError) {
      log.error('invalid setting', { error: err.message });
      return 2;
    }
    if (err instanceof LeadershipLostError) {
      graceful = false;
      log.error('leadership lost: exiting so that a fresh process can stand for election', { error: err.message });
    } else if (err instanceof UnsupportedServerError) {
      log.error('unsupported Kubernetes version', { error: err.message });
    } else if (err instanceof StartupTimeoutError) {
      log.error('could not start in time: exiting so that a fresh process tries again', { error: err.message });
    } else {
      log.error('fatal error', { error: err instanceof Error ? err.message : String(err) });
    }
    return 1;
  } finally {
    const stoppedFor = realClock.now() - (stoppingSince ?? realClock.now());
    // Without a graceful shutdown the Events still waiting are abandoned (the recorder logs how many).
    const eventsBudgetMs = graceful ? Math.max(0, shutdownBudgetMs - stoppedFor) : 0;
    await events.close(eventsBudgetMs).catch(() => undefined);
    await health?.close();
    await metricsServer?.close();
    reviewRest.close();
    rest.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
