/**
 * The metrics endpoint as a security review reads it, on the real API server with the install's
 * RBAC: the operator (the bundle, out of cluster) runs as the install's ServiceAccount, serves
 * HTTPS with a certificate from a folder laid out as a mounted Secret, and lets in only bearer
 * tokens that a TokenReview accepts and a SubjectAccessReview allows to `get` the metrics path:
 * plain HTTP is refused, no token 401, a token without the right 403, a token bound to the
 * install's metrics-reader ClusterRole 200 with controller-runtime's series. A rotated certificate
 * is served without a restart, and 100 scrapes with one token cost the API server 2 reviews.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { get, metricSample, servedFingerprint, type Reply } from '../support/http.js';
import { installEchoperator } from '../support/install.js';
import { tlsSecretVolume } from '../support/secretvolume.js';
import { eventually, kubectl, kubectlOk } from '../support/kube.js';
import { startOperator, waitReady } from '../support/operator.js';

/** A scrape over HTTPS, with the bearer token when one is given. */
function scrape(port: number, token?: string): Promise<Reply> {
  return get(port, '/metrics', { tls: true, headers: token ? { Authorization: `Bearer ${token}` } : {} });
}

/** A plain HTTP request to the TLS port: rejects when the connection is dropped without an answer. */
function plainHttp(port: number): Promise<number> {
  return get(port, '/metrics', { fresh: true, timeoutMs: 10_000 }).then((r) => r.status);
}

test(
  'metrics over HTTPS: plain HTTP refused, no token 401, no right 403, metrics-reader 200; a rotated certificate served without a restart; 100 scrapes cost 2 reviews',
  { timeout: 180_000 },
  async (t) => {
    const install = installEchoperator(t, {}, { workload: false });
    const ns = install.namespace;
    const reader = install.echoperator.metricsReaderRoleName!;
    assert.equal(reader, `echoperator-${ns}-metrics-reader`);

    // A scraper bound to the install's metrics-reader ClusterRole, and an account without it.
    kubectlOk(['create', 'serviceaccount', 'scraper'], { namespace: ns });
    kubectlOk(['create', 'serviceaccount', 'nobody'], { namespace: ns });
    const binding = `${ns}-scraper`;
    kubectlOk(['create', 'clusterrolebinding', binding, `--clusterrole=${reader}`, `--serviceaccount=${ns}:scraper`]);
    t.after(() => kubectl(['delete', 'clusterrolebinding', binding, '--ignore-not-found', '--wait=false']));
    const token = (sa: string): string => kubectlOk(['create', 'token', sa, '-n', ns, '--duration=1h']).trim();
    // The authorizer sees a new binding through its informers; a 403 before that would be cached for 30 s.
    await eventually(
      'the scraper may get /metrics',
      () => kubectl(['auth', 'can-i', 'get', '/metrics', `--as=system:serviceaccount:${ns}:scraper`]).stdout.trim() === 'yes',
    );

    const first = selfSignedCertificate({ hosts: ['127.0.0.1'], commonName: 'first' });
    const volume = tlsSecretVolume(t, first);
    const op = await startOperator(t, {
      KUBECONFIG: install.kubeconfig,
      NAMESPACE: ns,
      WATCH_NAMESPACES: ns,
      METRICS_INSECURE_PLAIN_HTTP: 'false',
      METRICS_CERT_DIR: volume.dir,
    });
    await waitReady(op);
    assert.match(op.output(), /serving over HTTPS to authorized callers, with the certificate of METRICS_CERT_DIR/);

    await assert.rejects(plainHttp(op.metricsPort), 'a plain HTTP request gets no answer');
    assert.equal((await scrape(op.metricsPort)).status, 401);
    assert.equal((await scrape(op.metricsPort, 'not-a-token')).status, 401);
    const forbidden = await scrape(op.metricsPort, token('nobody'));
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.body, new RegExp(`system:serviceaccount:${ns}:nobody" may not get /metrics`));
    const scraperToken = token('scraper');
    const ok = await scrape(op.metricsPort, scraperToken);
    assert.equal(ok.status, 200, ok.body);
    for (const series of [
      'controller_runtime_reconcile_total',
      'workqueue_depth',
      'controller_runtime_active_workers',
      'rest_client_requests_total',
    ]) {
      assert.match(ok.body, new RegExp(`^${series}\\{`, 'm'), series);
    }

    // Scrape cost: a fresh token, 100 scrapes; the operator's own POSTs (TokenReviews and
    // SubjectAccessReviews: it watches an empty namespace, so it writes nothing else).
    const posts = async (): Promise<number> =>
      metricSample((await scrape(op.metricsPort, scraperToken)).body, 'rest_client_requests_total', { method: 'POST' });
    const before = await posts();
    const fresh = token('scraper');
    for (let i = 0; i < 100; i++) assert.equal((await scrape(op.metricsPort, fresh)).status, 200);
    const cost = (await posts()) - before;
    t.diagnostic(`API server requests for 100 scrapes with one token: ${cost}`);
    assert.ok(cost <= 2, `100 scrapes cost ${cost} reviews`);

    // Rotation: a new pair swapped in as the kubelet does it is served without a restart.
    assert.equal(await servedFingerprint(op.metricsPort), new X509Certificate(first.cert).fingerprint256);
    const second = selfSignedCertificate({ hosts: ['127.0.0.1'], commonName: 'second' });
    volume.rotate(second);
    const want = new X509Certificate(second.cert).fingerprint256;
    await eventually('the rotated certificate to be served', async () => (await servedFingerprint(op.metricsPort)) === want, 30_000, 500);
    assert.equal(op.proc.exitCode, null, 'no restart');
    assert.equal((await scrape(op.metricsPort, scraperToken)).status, 200);
    assert.match(op.output(), /metrics certificate: reloaded/);
    assert.doesNotMatch(op.output(), new RegExp(`${scraperToken}|${fresh}`), 'no token in the log');
    assert.equal(await op.stop(), 0);
  },
);
