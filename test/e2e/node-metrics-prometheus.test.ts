/**
 * A real scraper against the in-cluster operator: the install as a user makes it (synthesized,
 * applied, the operator image loaded into the node), serving its metrics over HTTPS with a
 * certificate from a kubernetes.io/tls Secret (metrics.certSecret), and Debian's Prometheus
 * (installed with apt-get when missing) scraping the Service's endpoint from the node's network
 * namespace, where the pod network is routed:
 *
 * - job `reader`: a ServiceAccount token bound to the install's metrics-reader ClusterRole, the
 *   certificate verified against the Secret's: the target is up and controller-runtime's series
 *   (controller_runtime_reconcile_total, workqueue_depth) are stored;
 * - job `nobody`: a token without the right: the target is down, its lastError says 403.
 *
 * The opt-in NetworkPolicy is applied too and accepted by the API server; the node's CNI bridge
 * does not enforce NetworkPolicies, so this checks the object, not its enforcement. Prometheus is
 * stopped and its data folder removed at the end, and the cluster with it.
 */
import type { V1EndpointSlice } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { synthesize } from '../../infra/chart.js';
import { ensureDebianPackages } from '../../scripts/ship/apt.js';
import { startPrometheus, type ActiveTarget, type InstantSample } from '../../scripts/lab/pictures/prometheus.js';
import { loadOperatorImage } from '../../scripts/testbed/operator-image.js';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { startPrivateControlPlane } from '../support/faults.js';
import { eventually } from '../support/kube.js';

const NS = 'echoperator';
const CERT_SECRET = 'echoperator-metrics-tls';
const SERVICE_DNS = `echoperator-metrics.${NS}.svc`;

test(
  'Prometheus scrapes the in-cluster operator over HTTPS: up with a metrics-reader token (controller-runtime series stored), down with 403 without',
  { timeout: 600_000 },
  async (t) => {
    ensureDebianPackages({ prometheus: 'a real scraper of the metrics endpoint (node-metrics-prometheus test)' }, (l) => t.diagnostic(l));
    const cp = await startPrivateControlPlane({ node: true });
    t.after(() => cp.stop());
    const k = cp.kubectl;
    await loadOperatorImage(cp.state);
    const work = mkdtempSync(join(tmpdir(), 'echoperator-prometheus-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));

    // The install, with the metrics certificate from a Secret and the opt-in NetworkPolicy.
    const { yaml, echoperator } = synthesize({ namespace: NS, metrics: { certSecret: CERT_SECRET, networkPolicy: { enabled: true } } });
    const manifests = join(work, 'echoperator.k8s.yaml');
    writeFileSync(manifests, yaml);
    k.ok(['apply', '--server-side', '-f', manifests]);
    const cert = selfSignedCertificate({ hosts: [SERVICE_DNS, `${SERVICE_DNS}.cluster.local`], commonName: SERVICE_DNS });
    writeFileSync(join(work, 'tls.crt'), cert.cert);
    writeFileSync(join(work, 'tls.key'), cert.key, { mode: 0o600 });
    k.ok(['create', 'secret', 'tls', CERT_SECRET, '-n', NS, `--cert=${join(work, 'tls.crt')}`, `--key=${join(work, 'tls.key')}`]);
    k.ok(['rollout', 'status', 'deployment/echoperator', '-n', NS, '--timeout=180s']);
    const logs = k.ok(['logs', 'deployment/echoperator', '-n', NS]);
    assert.match(logs, /serving over HTTPS to authorized callers, with the certificate of METRICS_CERT_DIR/);

    // The wire's field names: client-node's V1NetworkPolicyIngressRule calls `from` `_from`.
    const policy = k.json<{ spec: { policyTypes: string[]; ingress: { from: unknown }[] } }>([
      'get',
      'networkpolicy',
      'echoperator-allow-metrics-traffic',
      '-n',
      NS,
    ]);
    assert.deepEqual(policy.spec.policyTypes, ['Ingress']);
    assert.deepEqual(policy.spec.ingress[0]!.from, [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }]);

    // The scrapers' identities: one bound to metrics-reader, one with no binding.
    for (const sa of ['prometheus', 'nobody']) k.ok(['create', 'serviceaccount', sa, '-n', NS]);
    k.ok([
      'create',
      'clusterrolebinding',
      'prometheus-metrics',
      `--clusterrole=${echoperator.metricsReaderRoleName!}`,
      `--serviceaccount=${NS}:prometheus`,
    ]);
    await eventually(
      'the binding to take effect',
      () => k.run(['auth', 'can-i', 'get', '/metrics', `--as=system:serviceaccount:${NS}:prometheus`]).stdout.trim() === 'yes',
    );
    for (const sa of ['prometheus', 'nobody']) {
      writeFileSync(join(work, `${sa}.token`), k.ok(['create', 'token', sa, '-n', NS, '--duration=1h']).trim(), { mode: 0o600 });
    }

    // The Service's endpoints, as Prometheus' kubernetes_sd (role: endpoints) finds them: the pod's
    // address. (The node's namespace routes the pod network; ClusterIPs only from inside pods.)
    const slices = k.json<{ items: V1EndpointSlice[] }>([
      'get',
      'endpointslices',
      '-n',
      NS,
      '-l',
      'kubernetes.io/service-name=echoperator-metrics',
    ]).items;
    const slice = slices.find((e) => e.endpoints?.some((p) => p.conditions?.ready));
    assert.ok(slice, 'a ready endpoint behind the metrics Service');
    const port = slice.ports?.[0];
    assert.equal(port?.name, 'https');
    const target = `${slice.endpoints?.find((p) => p.conditions?.ready)?.addresses[0]}:${port?.port}`;
    const job = (name: string, token: string) => ({
      job_name: name,
      scheme: 'https',
      metrics_path: '/metrics',
      authorization: { type: 'Bearer', credentials_file: join(work, token) },
      tls_config: { ca_file: join(work, 'tls.crt'), server_name: SERVICE_DNS },
      static_configs: [{ targets: [target] }],
    });
    // Prometheus in the node's network namespace (the Service's address is routed there), on loopback.
    const prometheus = await startPrometheus({
      netns: cp.state.node!.netns,
      dir: work,
      config: {
        global: { scrape_interval: '2s', scrape_timeout: '2s' },
        scrape_configs: [job('reader', 'prometheus.token'), job('nobody', 'nobody.token')],
      },
    });
    // Before the cluster (and its network namespace) goes, also when an assertion fails.
    t.after(() => prometheus.stop());
    try {
      await scrapedAsExpected();
    } finally {
      await prometheus.stop();
    }
    assert.equal(spawnSync('pgrep', ['-f', '--', `--storage.tsdb.path=${prometheus.dataDir}`]).status, 1, 'Prometheus stopped');

    async function scrapedAsExpected(): Promise<void> {
      const targets = await eventually(
        'both targets scraped (reader up, nobody down)',
        () => {
          const active = prometheus.targets();
          const byJob: Record<string, ActiveTarget> = Object.fromEntries(
            active.map((a): [string, ActiveTarget] => [a.labels.job ?? '', a]),
          );
          const { reader, nobody } = byJob;
          if (reader?.health === 'up' && nobody?.health === 'down') return { reader, nobody };
          // eventually() reports the last error: the targets as Prometheus last saw them.
          throw new Error(`targets: ${JSON.stringify(active.map((a) => [a.labels.job, a.health, a.lastError]))}`);
        },
        120_000,
        1_000,
      );
      t.diagnostic(
        `Prometheus: reader health=${targets.reader.health} lastError=${JSON.stringify(targets.reader.lastError)}; ` +
          `nobody health=${targets.nobody.health} lastError=${JSON.stringify(targets.nobody.lastError)}`,
      );
      assert.equal(targets.reader.lastError, '');
      assert.match(targets.nobody.lastError, /403/);

      const up = (q: string): InstantSample[] => prometheus.query(q);
      assert.deepEqual(
        up('up')
          .map((r) => `${r.metric.job}=${r.value[1]}`)
          .sort(),
        ['nobody=0', 'reader=1'],
      );
      for (const series of ['controller_runtime_reconcile_total', 'workqueue_depth']) {
        const found = up(`${series}{job="reader"}`);
        assert.ok(found.length > 0, `${series} stored by Prometheus`);
        assert.equal(up(`${series}{job="nobody"}`).length, 0, `${series} not readable without the right`);
      }
      t.diagnostic(
        `controller-runtime series via Prometheus: ${up('controller_runtime_reconcile_total{job="reader"}')
          .map((r) => `${r.metric.controller}/${r.metric.result}`)
          .join(', ')}`,
      );
    }
  },
);
