/**
 * The scrape job for a Prometheus without prometheus-operator: the same target, labels and
 * credentials as the ServiceMonitor, written as a plain `scrape_configs` entry.
 *
 * - Discovery: kubernetes_sd_configs, role `endpointslice`, in the install's namespace only; the
 *   `<name>-metrics` Service's port named `https` is kept, every other endpoint dropped.
 * - Labels: `job` = the Service's name, `namespace`, `pod`, `service`, as prometheus-operator sets
 *   them, so metricsSelector(r), the alerts and the dashboard read these series unchanged.
 * - Credentials: the scraper's ServiceAccount token (bind it to the install's metrics-reader
 *   ClusterRole), over HTTPS; the serving certificate is verified against `caFile` (the CA of
 *   metrics.certSecret) for the Service's DNS name, or, only with monitoring.insecureSkipVerify and
 *   no certSecret, not verified at all.
 *
 * docs/monitoring.md prints this config, and the live test (test/e2e/node-monitoring.test.ts)
 * scrapes with it (Debian's Prometheus lacks the kubernetes SD, so there the endpointslice
 * discovery is stood in for by scripts/lab/pictures/discovery.ts, with the same meta labels).
 */
import type { ResolvedEchoperatorProps } from '../props.js';

export interface PlainScrapeOptions {
  /** The scraper's ServiceAccount token (in a pod: /var/run/secrets/kubernetes.io/serviceaccount/token). */
  tokenFile: string;
  /** The CA that signed metrics.certSecret's certificate; unused with insecureSkipVerify. */
  caFile?: string;
  /** @default r.monitoring.interval */
  scrapeInterval?: string;
}

export interface RelabelConfig {
  action?: 'keep';
  source_labels: string[];
  regex?: string;
  target_label?: string;
}

/** One entry of prometheus.yml's `scrape_configs` (plain data: stringify it as YAML). */
export interface ScrapeConfig {
  job_name: string;
  scrape_interval: string;
  scheme: 'https';
  metrics_path: string;
  authorization: { type: 'Bearer'; credentials_file: string };
  tls_config: { ca_file: string | undefined; server_name: string } | { insecure_skip_verify: true };
  kubernetes_sd_configs: { role: 'endpointslice'; namespaces: { names: string[] } }[];
  relabel_configs: RelabelConfig[];
}

/** The metrics Service's name, which is also the scrape job's name and the series' `job` label. */
export const metricsServiceName = (r: ResolvedEchoperatorProps): string => `${r.name}-metrics`;

/** The name the metrics certificate must carry: the Service's in-cluster DNS name. */
export const metricsServiceDns = (r: ResolvedEchoperatorProps): string => `${metricsServiceName(r)}.${r.namespace}.svc`;

/** Why a plain scrape of this install cannot be configured, or undefined when it can. */
export function plainScrapeRefusal(r: ResolvedEchoperatorProps): string | undefined {
  if (!r.metrics.enabled) return 'metrics.enabled is false: there is nothing to scrape';
  if (r.metrics.insecurePlainHttp) return 'metrics.insecurePlainHttp is true: scrape the `http` port without credentials instead';
  if (!r.metrics.certSecret && !r.monitoring.insecureSkipVerify) {
    return 'set metrics.certSecret (a certificate the scraper verifies) or monitoring.insecureSkipVerify: true (the self-signed certificate made at start cannot be verified)';
  }
  return undefined;
}

/** The scrape job; throws, naming the settings, when the install cannot be scraped this way. */
export function plainScrapeConfig(r: ResolvedEchoperatorProps, o: PlainScrapeOptions): ScrapeConfig {
  const refusal = plainScrapeRefusal(r);
  if (refusal) throw new Error(`plain scrape config: ${refusal}`);
  if (r.metrics.certSecret && !o.caFile) throw new Error('plain scrape config: caFile (the CA of metrics.certSecret) is required');
  const service = metricsServiceName(r);
  const copy = (from: string, to: string): RelabelConfig => ({ source_labels: [from], target_label: to });
  return {
    job_name: service,
    scrape_interval: o.scrapeInterval ?? r.monitoring.interval,
    scheme: 'https',
    metrics_path: r.metrics.path,
    authorization: { type: 'Bearer', credentials_file: o.tokenFile },
    tls_config: r.metrics.certSecret ? { ca_file: o.caFile, server_name: metricsServiceDns(r) } : { insecure_skip_verify: true },
    // In a pod, Prometheus discovers with its ServiceAccount's in-cluster credentials: it needs
    // get/list/watch on endpointslices, services and pods in the install's namespace.
    kubernetes_sd_configs: [{ role: 'endpointslice', namespaces: { names: [r.namespace] } }],
    relabel_configs: [
      { action: 'keep', source_labels: ['__meta_kubernetes_service_name'], regex: service },
      { action: 'keep', source_labels: ['__meta_kubernetes_endpointslice_port_name'], regex: 'https' },
      copy('__meta_kubernetes_namespace', 'namespace'),
      copy('__meta_kubernetes_service_name', 'service'),
      copy('__meta_kubernetes_pod_name', 'pod'),
      // prometheus-operator's default job label: the Service's name.
      copy('__meta_kubernetes_service_name', 'job'),
    ],
  };
}
