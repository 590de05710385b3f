/**
 * The ServiceMonitor against prometheus-operator itself (v0.85.0, built from its Go module by
 * ensurePrometheusOperator), on a private cluster with a node:
 *
 * 1. prometheus-operator's own CRDs (from its module) are applied; the install, synthesized with
 *    monitoring.enabled and metrics.certSecret (a kubernetes.io/tls Secret with ca.crt, as
 *    cert-manager writes it), is applied: the API server accepts the ServiceMonitor and keeps its
 *    spec field for field (nothing pruned), and refuses a copy with a wrong scheme or an unknown
 *    field, so the CRD's schema really validated it.
 * 2. The install's ClusterRoleBinding lets the scraper's ServiceAccount read the metrics.
 * 3. prometheus-operator runs as a host process (the admin kubeconfig) with a Prometheus CR
 *    selecting the ServiceMonitor, and writes the scrape config (Secret `prometheus-<name>`,
 *    prometheus.yaml.gz) and its TLS assets. Its Prometheus pod cannot run here (its images cannot
 *    be pulled), so Debian's Prometheus runs exactly that config from the node's network
 *    namespace, with the files it names at their paths (the ServiceAccount token under
 *    /var/run/secrets, the TLS assets under /etc/prometheus/certs) in a private mount namespace,
 *    `$(VAR)`s expanded as its config-reloader does, and its kubernetes SD replaced by a file_sd
 *    stand-in (Debian's Prometheus is built without it; see runnableConfig). The target is up,
 *    over HTTPS with the token and the certificate verified, and controller_runtime_reconcile_total
 *    is stored.
 *
 * prometheus-operator and Prometheus are stopped (the mounts go with Prometheus' namespace), then
 * the cluster; also when an assertion fails.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';
import type { V1Secret } from '@kubernetes/client-node';
import { synthesize, type Manifest } from '../../infra/chart.js';
import { metricsServiceDns, metricsServiceName } from '../../infra/monitoring/scrape-config.js';
import type { ServiceMonitorSpec } from '../../infra/monitoring/service-monitor.js';
import { ensurePrometheusOperator } from '../../scripts/testbed/controlplane/assets.js';
import { ensureDebianPackages } from '../../scripts/ship/apt.js';
import { endpointSliceFileSd } from '../../scripts/lab/pictures/discovery.js';
import { startPrometheus } from '../../scripts/lab/pictures/prometheus.js';
import { loadOperatorImage } from '../../scripts/testbed/operator-image.js';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { manifestsOf } from '../support/manifests.js';
import { freePort } from '../../scripts/testbed/controlplane/cluster.js';
import { startPrivateControlPlane } from '../support/faults.js';
import { eventually } from '../support/eventually.js';
import { addOnsReady } from '../support/addons.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const NS = 'echoperator';
const CERT_SECRET = 'echoperator-metrics-tls';
const SCRAPER = 'prometheus';
/** The label the Prometheus CR's serviceMonitorSelector asks for. */
const SELECTED = { 'monitoring.example/scraped-by': 'test-prometheus' };
const PROMETHEUS_CR = 'k8s';

type ServiceMonitor = Manifest & { spec: ServiceMonitorSpec };

/**
 * prometheus-operator's config as its Prometheus pod runs it: its config-reloader first expands
 * `$(VAR)` from the pod's environment (SHARD, the shard's number, keeps the targets of shard 0;
 * POD_NAME the replica label). Only discovery differs: Debian's Prometheus is built without the
 * kubernetes SD (promtool: "field kubernetes_sd_configs not found"), so each job's
 * kubernetes_sd_configs becomes a file_sd of `targetsFile` (scripts/lab/pictures/discovery.ts).
 */
function runnableConfig(config: string, targetsFile: string): Record<string, unknown> {
  const env: Record<string, string> = { SHARD: '0', POD_NAME: `prometheus-${PROMETHEUS_CR}-0` };
  const expanded = config.replace(/\$\(([A-Z_]+)\)/g, (whole, name: string) => env[name] ?? whole);
  const parsed = parse(expanded) as { scrape_configs: Record<string, unknown>[] };
  for (const job of parsed.scrape_configs) {
    assert.ok(job.kubernetes_sd_configs, `${String(job.job_name)} discovers through the kubernetes SD`);
    delete job.kubernetes_sd_configs;
    job.file_sd_configs = [{ files: [targetsFile] }];
  }
  return parsed;
}

test(
  "prometheus-operator's CRD accepts the ServiceMonitor (and refuses a wrong one); prometheus-operator turns it into a scrape that is up",
  { timeout: 900_000 },
  async (t) => {
    const log = (l: string): void => t.diagnostic(l);
    ensureDebianPackages({ prometheus: 'runs the scrape config prometheus-operator writes (node-servicemonitor test)' }, log);
    const po = await ensurePrometheusOperator(log);
    const cp = await startPrivateControlPlane({ node: true });
    t.after(() => cp.stop());
    const k = cp.kubectl;
    await loadOperatorImage(cp.state);
    const work = mkdtempSync(join(tmpdir(), 'echoperator-servicemonitor-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));

    k.ok(['apply', '--server-side', '-f', po.crds]);
    // Polled: kubectl wait fails outright on a CRD whose status has no conditions yet.
    const crds = ['crd/servicemonitors.monitoring.coreos.com', 'crd/prometheuses.monitoring.coreos.com'];
    await eventually(
      "prometheus-operator's CRDs Established",
      () => k.run(['wait', '--for=condition=Established', '--timeout=5s', ...crds]).code === 0,
      60_000,
      500,
    );

    // The install, monitored; its ServiceMonitor selected by the test's Prometheus.
    const props = {
      namespace: NS,
      metrics: { certSecret: CERT_SECRET },
      monitoring: { enabled: true, interval: '2s', labels: SELECTED, prometheusServiceAccount: { name: SCRAPER, namespace: NS } },
    };
    const { yaml, objects, echoperator } = synthesize(props);
    const r = echoperator.config;
    const [synthesized] = manifestsOf<ServiceMonitor>(objects, 'ServiceMonitor');
    assert.ok(synthesized, 'the install has a ServiceMonitor');
    writeFileSync(join(work, 'echoperator.k8s.yaml'), yaml);
    k.ok(['apply', '--server-side', '-f', join(work, 'echoperator.k8s.yaml')]);

    // 1. Accepted as written: the server prunes what its schema does not know, so equality means every field is the CRD's.
    const stored = k.json<ServiceMonitor>(['get', 'servicemonitor', r.name, '-n', NS]);
    assert.deepEqual(stored.spec, synthesized.spec);
    assert.deepEqual(stored.metadata.labels, synthesized.metadata.labels);
    const refused = (what: string, edit: (endpoint: Record<string, unknown>) => void): string => {
      // A new name: the create is refused by the schema alone, never by a conflict with the stored one.
      const copy = structuredClone(synthesized) as unknown as {
        metadata: { name: string };
        spec: { endpoints: Record<string, unknown>[] };
      };
      copy.metadata.name = `${r.name}-wrong`;
      edit(copy.spec.endpoints[0]!);
      const res = k.run(['create', '--dry-run=server', '--validate=strict', '-f', '-'], { input: JSON.stringify(copy) });
      assert.notEqual(res.code, 0, `${what}: the API server must refuse it`);
      t.diagnostic(`${what}: ${res.stderr.trim()}`);
      return res.stderr;
    };
    assert.match(
      refused('scheme ftp', (e) => (e.scheme = 'ftp')),
      /Unsupported value: "ftp"/,
    );
    assert.match(
      refused('unknown field', (e) => (e.bearerTokenPath = '/token')),
      /unknown field "spec\.endpoints\[0\]\.bearerTokenPath"/,
    );

    // The metrics certificate as cert-manager writes it: tls.crt, tls.key and ca.crt (self-signed: itself).
    const dns = metricsServiceDns(r);
    const cert = selfSignedCertificate({ hosts: [dns, `${dns}.cluster.local`], commonName: dns });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    k.ok(['apply', '--server-side', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/tls',
        metadata: { name: CERT_SECRET, namespace: NS },
        data: { 'tls.crt': b64(cert.cert), 'tls.key': b64(cert.key), 'ca.crt': b64(cert.cert) },
      }),
    });
    k.ok(['rollout', 'status', `deployment/${r.name}`, '-n', NS, '--timeout=180s'], { timeoutMs: 200_000 });

    // 2. The scraper: the install binds it to metrics-reader.
    k.ok(['create', 'serviceaccount', SCRAPER, '-n', NS]);
    await eventually(
      "the install's binding to let the scraper read the metrics",
      () => k.run(['auth', 'can-i', 'get', r.metrics.path, `--as=system:serviceaccount:${NS}:${SCRAPER}`]).stdout.trim() === 'yes',
    );

    // 3. prometheus-operator, as a host process watching the install's namespace.
    const operatorLog: string[] = [];
    const operator = spawn(
      po.operator,
      [`--web.listen-address=127.0.0.1:${await freePort()}`, `--namespaces=${NS}`, '--log-format=logfmt'],
      { env: { ...process.env, KUBECONFIG: cp.state.kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (d: Buffer): void => {
      operatorLog.push(...d.toString('utf8').split('\n').filter(Boolean));
      operatorLog.splice(0, Math.max(0, operatorLog.length - 200));
    };
    operator.stdout.on('data', keep);
    operator.stderr.on('data', keep);
    const operatorExited = new Promise<void>((resolve) => operator.on('close', () => resolve()));
    const stopOperator = async (): Promise<void> => {
      if (operator.exitCode === null && operator.signalCode === null) operator.kill('SIGTERM');
      await operatorExited;
    };
    t.after(stopOperator);

    k.ok(['apply', '--server-side', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'Prometheus',
        metadata: { name: PROMETHEUS_CR, namespace: NS },
        spec: {
          // Debian's, which runs the config: the operator writes only what this version knows.
          version: 'v2.42.0',
          replicas: 1,
          serviceAccountName: SCRAPER,
          serviceDiscoveryRole: 'EndpointSlice',
          serviceMonitorSelector: { matchLabels: SELECTED },
          scrapeInterval: '2s',
        },
      }),
    });
    const scrapePool = `serviceMonitor/${NS}/${r.name}/0`;
    const config = await eventually(
      `prometheus-operator to write the scrape job ${scrapePool}`,
      () => {
        if (operator.exitCode !== null)
          throw new Error(`prometheus-operator exited ${operator.exitCode}:\n${operatorLog.slice(-30).join('\n')}`);
        const res = k.run(['get', 'secret', `prometheus-${PROMETHEUS_CR}`, '-n', NS, '-o', 'json']);
        if (res.code !== 0) throw new Error(`no config Secret yet; operator log:\n${operatorLog.slice(-10).join('\n')}`);
        const gz = (JSON.parse(res.stdout) as V1Secret).data?.['prometheus.yaml.gz'];
        const text = gz ? gunzipSync(Buffer.from(gz, 'base64')).toString('utf8') : '';
        if (!text.includes(`job_name: ${scrapePool}`))
          throw new Error(`config without ${scrapePool}:\n${text}\n${operatorLog.slice(-10).join('\n')}`);
        return text;
      },
      120_000,
      1_000,
    );
    t.diagnostic(`prometheus-operator's scrape config:\n${config}`);

    // The files that config names, where a Prometheus pod of prometheus-operator's has them.
    const sa = join(work, 'serviceaccount');
    const certs = join(work, 'certs');
    mkdirSync(sa);
    mkdirSync(certs);
    writeFileSync(join(sa, 'token'), k.ok(['create', 'token', SCRAPER, '-n', NS, '--duration=1h']).trim(), { mode: 0o600 });
    const tlsAssets = k
      .json<{ items: V1Secret[] }>(['get', 'secrets', '-n', NS])
      .items.filter((s) => s.metadata?.name?.startsWith(`prometheus-${PROMETHEUS_CR}-tls-assets`));
    for (const [key, value] of tlsAssets.flatMap((s) => Object.entries(s.data ?? {}))) {
      writeFileSync(join(certs, key), Buffer.from(value, 'base64'));
    }
    assert.ok(config.includes(`/etc/prometheus/certs/`) && config.includes(`server_name: ${dns}`), 'the config verifies the certificate');

    // Debian's Prometheus has no kubernetes SD: the stand-in writes the same targets and meta labels.
    const targetsFile = join(work, 'targets.json');
    const discovery = endpointSliceFileSd({ kubeconfig: cp.state.kubeconfig, namespace: NS, file: targetsFile, log });
    t.after(() => discovery.stop());
    const prometheus = await startPrometheus({
      netns: cp.state.node!.netns,
      dir: work,
      config: runnableConfig(config, targetsFile),
      privateMounts: {
        tmpfs: ['/run', '/etc/prometheus'],
        binds: { '/run/secrets/kubernetes.io/serviceaccount': sa, '/etc/prometheus/certs': certs },
      },
    });
    t.after(() => prometheus.stop());
    try {
      const target = await eventually(
        `the ${scrapePool} target up`,
        () => {
          const mine = prometheus.targets().filter((a) => a.labels.job === metricsServiceName(r));
          if (mine.length === 1 && mine[0]!.health === 'up') return mine[0]!;
          throw new Error(`targets: ${JSON.stringify(prometheus.targets().map((a) => [a.labels, a.health, a.lastError]))}`);
        },
        120_000,
        1_000,
      );
      t.diagnostic(`target ${JSON.stringify(target.labels)} health=${target.health} lastError=${JSON.stringify(target.lastError)}`);
      assert.equal(target.labels.namespace, NS);
      const series = await eventually('controller_runtime_reconcile_total stored', () => {
        const found = prometheus.query(`controller_runtime_reconcile_total{job="${metricsServiceName(r)}",namespace="${NS}"}`);
        return found.length > 0 && found;
      });
      t.diagnostic(`stored: ${series.map((s) => `${s.metric.controller}/${s.metric.result}=${s.value[1]}`).join(', ')}`);
    } finally {
      await prometheus.stop();
      await discovery.stop();
      await stopOperator();
    }
    assert.equal(spawnSync('pgrep', ['-f', '--', `--storage.tsdb.path=${prometheus.dataDir}`]).status, 1, 'Prometheus stopped');
    assert.equal(spawnSync('pgrep', ['-f', '--', po.operator]).status, 1, 'prometheus-operator stopped');
  },
);
