/**
 * The plain scrape config (infra/monitoring/scrape-config.ts), checked by Prometheus' own tool:
 * `promtool check config` accepts the job plainScrapeConfig() makes. promtool is Debian's
 * prometheus package, installed with apt-get when missing (an outside binary: this tier, not the
 * unit tier). What the config holds is test/unit/monitoring-scrape-config.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { plainScrapeConfig } from '../../infra/monitoring/scrape-config.js';
import { resolveEchoperatorProps } from '../../infra/props.js';
import { ensureDebianPackages } from '../../scripts/ship/apt.js';

describe('plainScrapeConfig, through promtool', () => {
  const r = resolveEchoperatorProps({ name: 'echo', namespace: 'ops', metrics: { certSecret: 'echo-metrics-tls' } });

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
