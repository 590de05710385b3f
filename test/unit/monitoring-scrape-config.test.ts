/**
 * The plain scrape config (infra/monitoring/scrape-config.ts): what it keeps, relabels and
 * verifies, and refusals naming the settings. Prometheus' own `promtool check config` accepting it
 * is test/e2e/scrape-config-promtool.test.ts; the live test scrapes with it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { plainScrapeConfig } from '../../infra/monitoring/scrape-config.js';
import { resolveEchoperatorProps } from '../../infra/props.js';
import { substitutePanelVariables } from '../../scripts/lab/pictures/panels.js';

const FILES = {
  tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
  caFile: '/etc/prometheus/secrets/echoperator-metrics-tls/ca.crt',
};

describe('plainScrapeConfig', () => {
  const r = resolveEchoperatorProps({ name: 'echo', namespace: 'ops', metrics: { certSecret: 'echo-metrics-tls' } });
  const config = plainScrapeConfig(r, FILES);

  it('keeps the metrics Service https port of the install namespace and labels job/namespace/pod as prometheus-operator does', () => {
    assert.equal(config.job_name, 'echo-metrics');
    assert.deepEqual(config.kubernetes_sd_configs, [{ role: 'endpointslice', namespaces: { names: ['ops'] } }]);
    const keep = config.relabel_configs.filter((c) => c.action === 'keep').map((c) => [c.source_labels[0], c.regex]);
    assert.deepEqual(keep, [
      ['__meta_kubernetes_service_name', 'echo-metrics'],
      ['__meta_kubernetes_endpointslice_port_name', 'https'],
    ]);
    const targets = Object.fromEntries(
      config.relabel_configs.filter((c) => c.target_label).map((c) => [c.target_label!, c.source_labels[0]!]),
    );
    assert.deepEqual(targets, {
      job: '__meta_kubernetes_service_name',
      namespace: '__meta_kubernetes_namespace',
      pod: '__meta_kubernetes_pod_name',
      service: '__meta_kubernetes_service_name',
    });
  });

  it("scrapes over HTTPS with the scraper's token, verifying the certificate for the Service's DNS name", () => {
    assert.equal(config.scheme, 'https');
    assert.deepEqual(config.authorization, { type: 'Bearer', credentials_file: FILES.tokenFile });
    assert.deepEqual(config.tls_config, { ca_file: FILES.caFile, server_name: 'echo-metrics.ops.svc' });
  });

  it('refuses an install whose certificate nothing can verify, naming both ways out', () => {
    const selfSigned = resolveEchoperatorProps({});
    assert.throws(() => plainScrapeConfig(selfSigned, FILES), /metrics\.certSecret.*monitoring\.insecureSkipVerify: true/);
    const skip = plainScrapeConfig(resolveEchoperatorProps({ monitoring: { insecureSkipVerify: true } }), FILES);
    assert.deepEqual(skip.tls_config, { insecure_skip_verify: true });
    assert.throws(() => plainScrapeConfig(r, { tokenFile: FILES.tokenFile }), /caFile/);
  });
});

describe('docs/monitoring.md', () => {
  it('prints the scrape config plainScrapeConfig() makes for the default install with a certSecret, exactly', () => {
    const doc = readFileSync('docs/monitoring.md', 'utf8');
    const block = /<!-- scrape-config begin -->\n```yaml\n([\s\S]*?)```\n<!-- scrape-config end -->/.exec(doc);
    assert.ok(block, 'the scrape-config block in docs/monitoring.md');
    const r = resolveEchoperatorProps({ metrics: { certSecret: 'echoperator-metrics-tls' } });
    assert.equal(block[1], stringify({ scrape_configs: [plainScrapeConfig(r, FILES)] }));
  });
});

describe('substitutePanelVariables', () => {
  const v = { namespace: 'ops', job: 'echo-metrics', rateInterval: '1m', interval: '2s', range: '5m' };

  it("fills Grafana's variables, the longer names before their prefixes", () => {
    assert.equal(
      substitutePanelVariables('increase(x{namespace="$namespace", job="$job"}[$__range]) / rate(y[$__rate_interval]) + z[$__interval]', v),
      'increase(x{namespace="ops", job="echo-metrics"}[5m]) / rate(y[1m]) + z[2s]',
    );
  });

  it('refuses a variable it does not know, naming it', () => {
    assert.throws(() => substitutePanelVariables('up{pod="$pod"}', v), /unknown variable \$pod/);
  });
});
