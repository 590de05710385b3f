/**
 * The plain scrape config (infra/monitoring/scrape-config.ts): what it keeps, relabels and
 * verifies, refusals naming the settings, and Prometheus' own `promtool check config` accepting
 * it (Debian's prometheus package, installed when missing). The live test scrapes with it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { plainScrapeConfig } from '../../infra/monitoring/scrape-config.js';
import { resolveEchoperatorProps } from '../../infra/props.js';
import { ensureDebianPackages } from '../../scripts/testbed/controlplane/node/host.js';
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

  it("is accepted by Prometheus' promtool check config (with a file SD for the kubernetes SD)", (t) => {
    ensureDebianPackages({ prometheus: 'promtool, to check the plain scrape config' }, (l) => t.diagnostic(l));
    const dir = mkdtempSync(join(tmpdir(), 'scrape-config-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const files = { tokenFile: join(dir, 'token'), caFile: join(dir, 'ca.crt') };
    for (const f of Object.values(files)) writeFileSync(f, 'x');
    const file = join(dir, 'prometheus.yml');
    // Debian's Prometheus is built without the kubernetes SD: the rest of the job is checked with a
    // file SD in its place (the live test does the same, scripts/lab/pictures/discovery.ts).
    const { kubernetes_sd_configs: _kubernetesSd, ...rest } = plainScrapeConfig(r, files);
    writeFileSync(file, stringify({ scrape_configs: [{ ...rest, file_sd_configs: [{ files: [join(dir, 'targets.json')] }] }] }));
    const checked = spawnSync('promtool', ['check', 'config', '--syntax-only', file], { encoding: 'utf8' });
    assert.equal(checked.status, 0, `promtool: ${checked.stdout}${checked.stderr}`);
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
