/**
 * What the resolved props become in the operator's pod: the settings (environment variables, the
 * keys of the settings ConfigMap) exactly as the operator reads them, their checksum on the pod
 * template (a changed setting rolls the pods), where metrics.certSecret is mounted, and the
 * environment variables and labels the install sets (which extraEnv and podLabels may not).
 */
import { createHash } from 'node:crypto';
import { POD_ENV_NAMES } from './pod-props.js';
import type { ResolvedEchoperatorProps } from './props-types.js';

/** The annotation on the pod template holding the hash of the settings ConfigMap's data. */
export const CONFIG_CHECKSUM_ANNOTATION = 'echoperator.mmontes.io/config-checksum';

/** Where a metrics.certSecret is mounted (METRICS_CERT_DIR). */
export const METRICS_CERT_MOUNT = '/etc/echoperator/metrics-cert';

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
