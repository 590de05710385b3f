/**
 * The props' validation: resolveEchoperatorProps fills in the defaults (props-defaults.ts) and
 * checks every prop, throwing EchoperatorPropsError with a message that names the bad prop and
 * what it accepts, for any value the API server would refuse or that would give a broken install
 * (ports that collide, lease timings that allow two leaders, a ServiceMonitor that cannot verify
 * what it scrapes...). The formats here are the values schema's too (infra/values-schema.ts).
 */
import { brokenLeaseRule, JITTER_FACTOR, LEASE_MAX_SECONDS } from '../src/runtime/leaderelection/config.js';
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
import { checkPodProps } from './pod-props.js';
import { withDefaults } from './props-defaults.js';
import { CONFIG_CHECKSUM_ANNOTATION, INSTALL_LABEL_KEYS, installEnvNames } from './props-settings.js';
import { LOG_FORMATS, LOG_LEVELS, type EchoperatorProps, type ResolvedEchoperatorProps, type ResourceQuantities } from './props-types.js';

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
  const r = withDefaults(props);
  const ha = r.ha;
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
    fail(
      `metrics.path must be an absolute URL path such as '/metrics' (no spaces, '?', '#' or '*': it is the metrics-reader role's nonResourceURL, where '*' is the RBAC wildcard), got ${JSON.stringify(r.metrics.path)}`,
    );
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
}
