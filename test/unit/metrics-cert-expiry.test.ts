/**
 * echoperator_metrics_certificate_expiry_timestamp_seconds: the notAfter of the certificate the
 * metrics endpoint serves now, read back from a TLS handshake, for a self-signed certificate and
 * for a METRICS_CERT_DIR one across a rotation; absent over plain HTTP (there is no certificate).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';
import { startedMetricsEndpoint } from '../support/metricsendpoint.js';
import { tlsSecretVolume } from '../support/secretvolume.js';

const GAUGE = 'echoperator_metrics_certificate_expiry_timestamp_seconds';

/** The notAfter of the certificate a new connection to `port` gets, in Unix seconds. */
function servedNotAfter(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(Date.parse(socket.getPeerCertificate().valid_to) / 1000);
      socket.end();
    });
    socket.on('error', reject);
  });
}

async function gauge(registry: Registry): Promise<number | undefined> {
  const metric = await registry.getSingleMetric(GAUGE)?.get();
  return metric?.values[0]?.value;
}

describe(GAUGE, () => {
  it('is the notAfter of the self-signed certificate made at start', async (t) => {
    const { metrics, endpoint } = await startedMetricsEndpoint(t);
    const { registry } = metrics;
    const served = await servedNotAfter(endpoint.port);
    assert.equal(await gauge(registry), served);
    // A year ahead (selfsigned.ts' default validity), not a placeholder.
    assert.ok(Math.abs(served - (Date.now() / 1000 + 365 * 86_400)) < 3_600, `notAfter ${served}`);
  });

  it("follows METRICS_CERT_DIR's certificate through a rotation", async (t) => {
    const clock = new FakeClock();
    const first = selfSignedCertificate({ validityDays: 10 });
    const { dir, rotate } = tlsSecretVolume(t, first);
    const { metrics, endpoint } = await startedMetricsEndpoint(t, { certDir: dir, clock });
    const { registry } = metrics;
    const before = await servedNotAfter(endpoint.port);
    assert.equal(await gauge(registry), before);
    assert.ok(Math.abs(before - (Date.now() / 1000 + 10 * 86_400)) < 3_600, 'the 10-day certificate');

    rotate(selfSignedCertificate({ validityDays: 90 }));
    await clock.step(5_000); // the watcher's poll
    const after = await servedNotAfter(endpoint.port);
    assert.ok(after > before + 79 * 86_400, 'the rotated certificate is served');
    assert.equal(await gauge(registry), after, 'the gauge follows the rotation');
  });

  it('is absent over plain HTTP', async (t) => {
    const { registry } = (await startedMetricsEndpoint(t, { insecurePlainHttp: true })).metrics;
    assert.equal(registry.getSingleMetric(GAUGE), undefined);
  });
});
