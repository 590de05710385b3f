/**
 * The metrics endpoint's TLS minimum survives a certificate rotation (issue 32, item 6a). Node's
 * setSecureContext() resets every option it is not given to the process defaults, and a process
 * may run with lowered ones (`node --tls-min-v1.0 --tls-cipher-list=DEFAULT@SECLEVEL=0`, as this
 * file sets them): before, the rotated certificate was served to TLS 1.1 clients.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { createMetrics } from '../../src/observability/metrics.js';
import { MetricsEndpoint } from '../../src/observability/metricsendpoint.js';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';
import { servedFingerprint } from '../support/http.js';
import { tlsSecretVolume } from '../support/secretvolume.js';

/** How a handshake capped at `maxVersion` ends: the protocol agreed on, or the error's code. */
function handshake(port: number, maxVersion: tls.SecureVersion): Promise<string> {
  return new Promise((resolve) => {
    const socket = tls.connect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, minVersion: 'TLSv1', maxVersion, ciphers: 'DEFAULT@SECLEVEL=0' },
      () => {
        resolve(socket.getProtocol() ?? 'unknown');
        socket.destroy();
      },
    );
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

const REFUSED = 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION';

describe('metrics over HTTPS, with the process TLS defaults lowered', () => {
  const defaults = { min: tls.DEFAULT_MIN_VERSION, ciphers: tls.DEFAULT_CIPHERS };
  before(() => {
    tls.DEFAULT_MIN_VERSION = 'TLSv1';
    tls.DEFAULT_CIPHERS = 'DEFAULT@SECLEVEL=0';
  });
  after(() => {
    tls.DEFAULT_MIN_VERSION = defaults.min;
    tls.DEFAULT_CIPHERS = defaults.ciphers;
  });

  it('refuses a TLS 1.1 handshake before and after a certificate rotation, and agrees TLS 1.2 and 1.3', async (t) => {
    const clock = new FakeClock();
    const { dir, rotate } = tlsSecretVolume(t, selfSignedCertificate());
    const endpoint = new MetricsEndpoint({
      registry: createMetrics({ defaultMetrics: false }).registry,
      port: 0,
      path: '/metrics',
      certDir: dir,
      insecurePlainHttp: false,
      api: { request: () => Promise.reject(new Error('no API server in this test')) },
      clock,
    });
    await endpoint.start();
    t.after(() => endpoint.close());
    assert.equal(await handshake(endpoint.port, 'TLSv1.1'), REFUSED, 'TLS 1.1 refused at start');

    const rotated = selfSignedCertificate();
    rotate(rotated);
    await clock.step(5_000);
    assert.equal(await servedFingerprint(endpoint.port), new X509Certificate(rotated.cert).fingerprint256, 'the rotation happened');
    assert.equal(await handshake(endpoint.port, 'TLSv1.1'), REFUSED, 'TLS 1.1 refused after the rotation');
    assert.equal(await handshake(endpoint.port, 'TLSv1'), REFUSED, 'TLS 1.0 too');
    assert.equal(await handshake(endpoint.port, 'TLSv1.2'), 'TLSv1.2');
    assert.equal(await handshake(endpoint.port, 'TLSv1.3'), 'TLSv1.3');
  });
});
