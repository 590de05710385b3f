/**
 * The ServiceMonitor (infra/monitoring/service-monitor.ts) as synthesized: none unless
 * monitoring.enabled; then one selecting only the metrics Service of the install's namespace,
 * scraping `https` with the scraper's token and a CA-verified TLS config when metrics.certSecret
 * is set, insecureSkipVerify only when allowed, `http` with neither token nor TLS over plain HTTP;
 * and the binding of the metrics-reader ClusterRole to the scraper's ServiceAccount.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ClusterRoleBinding, V1Service } from '@kubernetes/client-node';
import { synthesize, type Manifest } from '../../infra/chart.js';
import type { EchoperatorProps } from '../../infra/echoperator.js';
import { SERVICE_ACCOUNT_TOKEN_FILE, type ServiceMonitorSpec } from '../../infra/monitoring/service-monitor.js';
import { manifestsOf } from '../support/manifests.js';

type ServiceMonitor = Manifest & { spec: ServiceMonitorSpec };

function install(props: EchoperatorProps): { objects: Manifest[]; monitors: ServiceMonitor[]; bindings: V1ClusterRoleBinding[] } {
  const { objects } = synthesize(props);
  const monitors = manifestsOf<ServiceMonitor>(objects, 'ServiceMonitor');
  const bindings = manifestsOf<V1ClusterRoleBinding>(objects, 'ClusterRoleBinding').filter((b) =>
    b.roleRef.name.endsWith('-metrics-reader'),
  );
  return { objects, monitors, bindings };
}

const withCert: EchoperatorProps = {
  namespace: 'ops',
  metrics: { certSecret: 'echoperator-metrics-tls' },
  monitoring: { enabled: true, labels: { release: 'kube-prometheus' }, interval: '15s' },
};

describe('ServiceMonitor', () => {
  it('is not synthesized by default, nor is the scraper bound', () => {
    const { monitors, bindings } = install({});
    assert.deepEqual(monitors, []);
    assert.deepEqual(bindings, []);
  });

  it('with metrics.certSecret: https, the token file, the CA from the Secret and the Service DNS name', () => {
    const { objects, monitors } = install(withCert);
    assert.equal(monitors.length, 1);
    const sm = monitors[0]!;
    assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(sm.metadata.name, 'echoperator');
    assert.equal(sm.metadata.namespace, 'ops');
    assert.equal(sm.metadata.labels?.release, 'kube-prometheus');
    assert.equal(sm.metadata.labels?.['app.kubernetes.io/name'], 'echoperator');
    assert.deepEqual(sm.spec.namespaceSelector, { matchNames: ['ops'] });
    assert.deepEqual(sm.spec.endpoints, [
      {
        port: 'https',
        path: '/metrics',
        interval: '15s',
        scheme: 'https',
        bearerTokenFile: SERVICE_ACCOUNT_TOKEN_FILE,
        tlsConfig: {
          ca: { secret: { name: 'echoperator-metrics-tls', key: 'ca.crt' } },
          serverName: 'echoperator-metrics.ops.svc',
        },
      },
    ]);
    // It selects exactly the metrics Service of the install, by its labels and port name.
    const services = manifestsOf<V1Service>(objects, 'Service');
    const selected = services.filter((s) => Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => s.metadata?.labels?.[k] === v));
    assert.deepEqual(
      selected.map((s) => [s.metadata?.name, s.spec?.ports?.map((p) => p.name)]),
      [['echoperator-metrics', ['https']]],
    );
  });

  it('binds the metrics-reader ClusterRole to the scraper, default kube-prometheus prometheus-k8s', () => {
    const { objects, bindings } = install(withCert);
    const role = manifestsOf(objects, 'ClusterRole', 'echoperator-ops-metrics-reader');
    assert.equal(role.length, 1, 'the metrics-reader ClusterRole the binding names exists');
    assert.deepEqual(
      bindings.map((b) => [b.metadata?.name, b.roleRef, b.subjects]),
      [
        [
          'echoperator-ops-metrics-reader',
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'echoperator-ops-metrics-reader' },
          [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }],
        ],
      ],
    );
    const custom = install({ ...withCert, monitoring: { enabled: true, prometheusServiceAccount: { name: 'prom', namespace: 'obs' } } });
    assert.deepEqual(custom.bindings[0]?.subjects, [{ kind: 'ServiceAccount', name: 'prom', namespace: 'obs' }]);
  });

  it('without a certSecret: refused unless monitoring.insecureSkipVerify, then insecureSkipVerify', () => {
    assert.throws(() => install({ monitoring: { enabled: true } }), /monitoring\.insecureSkipVerify/);
    const { monitors } = install({ monitoring: { enabled: true, insecureSkipVerify: true } });
    const ep = monitors[0]!.spec.endpoints[0]!;
    assert.equal(ep.scheme, 'https');
    assert.equal(ep.bearerTokenFile, SERVICE_ACCOUNT_TOKEN_FILE);
    assert.deepEqual(ep.tlsConfig, { insecureSkipVerify: true });
  });

  it('over plain HTTP: port http, no token, no TLS, no binding (there is no metrics-reader role)', () => {
    const { monitors, bindings } = install({ metrics: { insecurePlainHttp: true }, monitoring: { enabled: true } });
    assert.deepEqual(monitors[0]!.spec.endpoints, [{ port: 'http', path: '/metrics', interval: '30s', scheme: 'http' }]);
    assert.deepEqual(bindings, []);
  });

  it('in another namespace than the install: allowed without a certSecret, refused with one (its CA must be readable)', () => {
    const { monitors } = install({ monitoring: { enabled: true, insecureSkipVerify: true, namespace: 'monitoring' } });
    assert.equal(monitors[0]!.metadata.namespace, 'monitoring');
    assert.deepEqual(monitors[0]!.spec.namespaceSelector, { matchNames: ['echoperator'] });
    assert.throws(() => install({ ...withCert, monitoring: { enabled: true, namespace: 'monitoring' } }), /monitoring\.namespace must be/);
  });

  it('follows metrics.path', () => {
    const { monitors } = install({ ...withCert, metrics: { ...withCert.metrics, path: '/internal/metrics' } });
    assert.equal(monitors[0]!.spec.endpoints[0]!.path, '/internal/metrics');
  });
});
