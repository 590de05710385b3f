/**
 * The metrics endpoint's transport: HTTPS that refuses plain HTTP, the access check in front of
 * the registry, the self-signed certificate, and a certificate directory laid out as a mounted
 * Secret (`..data` swapped on rotation) reloaded without a restart, a broken pair kept out.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createMetrics } from '../../src/observability/metrics.js';
import type { AuthOutcome } from '../../src/observability/metricsauth.js';
import { MetricsEndpoint } from '../../src/observability/metricsendpoint.js';
import { MetricsServer } from '../../src/observability/metricsserver.js';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { CertificateError, CertificateWatcher, loadCertificateDir } from '../../src/observability/servingcert.js';
import type { Logger } from '../../src/runtime/log.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';
import { get, servedFingerprint } from '../support/http.js';
import { tlsSecretVolume } from '../support/secretvolume.js';

const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (msg: string, fields?: Record<string, unknown>): void => void lines.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  const logger = { lines, debug: log, info: log, warn: log, error: log, child: () => logger };
  return logger;
}

/** The endpoint serving HTTPS from the cert dir `dir`; every access review fails with `apiError`. */
function endpointOver(dir: string, apiError: string, clock?: FakeClock): MetricsEndpoint {
  return new MetricsEndpoint({
    registry: createMetrics({ defaultMetrics: false }).registry,
    port: 0,
    path: '/metrics',
    certDir: dir,
    insecurePlainHttp: false,
    api: { request: () => Promise.reject(new Error(apiError)) },
    clock,
  });
}

describe('metrics over HTTPS', () => {
  const pair = selfSignedCertificate();

  async function server(check: () => AuthOutcome): Promise<{ port: number; checks: number }> {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.controller.setMaxConcurrency('echo', 2);
    const state = { port: 0, checks: 0 };
    const s = new MetricsServer({
      registry: metrics.registry,
      port: 0,
      tls: pair,
      auth: {
        check: async () => {
          state.checks++;
          return check();
        },
      },
    });
    await s.start();
    after(() => s.close());
    state.port = s.port;
    return state;
  }

  it('refuses plain HTTP on the port: the connection is dropped without an HTTP answer', async () => {
    const s = await server(() => ({ status: 200, message: 'OK' }));
    await assert.rejects(get(s.port, '/metrics', { fresh: true, timeoutMs: 5_000 }));
    assert.equal(s.checks, 0);
  });

  it('serves the metrics when the check allows, and its status and message otherwise (401 with WWW-Authenticate)', async () => {
    let outcome: AuthOutcome = { status: 401, message: 'Unauthorized: a bearer token is required' };
    const s = await server(() => outcome);
    const unauthorized = await get(s.port, '/metrics', { tls: true });
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.headers['www-authenticate'], 'Bearer');
    assert.doesNotMatch(unauthorized.body, /controller_runtime/);
    outcome = { status: 403, message: 'Forbidden: no' };
    assert.deepEqual(
      [(await get(s.port, '/metrics', { tls: true })).status, (await get(s.port, '/metrics', { tls: true })).body],
      [403, 'Forbidden: no\n'],
    );
    outcome = { status: 503, message: 'Service Unavailable' };
    assert.equal((await get(s.port, '/metrics', { tls: true })).status, 503);
    outcome = { status: 200, message: 'OK' };
    const ok = await get(s.port, '/metrics', { tls: true, headers: { Authorization: 'Bearer x' } });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /^controller_runtime_max_concurrent_reconciles\{controller="echo"\} 2$/m);
    const checks = s.checks;
    assert.equal((await get(s.port, '/other', { tls: true })).status, 404);
    assert.equal(s.checks, checks, 'another path costs no review');
  });
});

describe('the self-signed certificate', () => {
  it('is an X.509 v3 ECDSA P-256 server certificate for the given names, signed by its own key, valid now', () => {
    const now = new Date();
    const { cert, key } = selfSignedCertificate({ hosts: ['op-1', 'localhost', '127.0.0.1', '::1'], now });
    const x = new X509Certificate(cert);
    assert.equal(x.subject, 'CN=echoperator');
    assert.equal(x.issuer, 'CN=echoperator');
    assert.equal(x.subjectAltName, 'DNS:op-1, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    assert.ok(x.verify(x.publicKey), 'self-signed');
    assert.ok(x.checkPrivateKey(createPrivateKey(key)));
    assert.equal(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(x.ca, false);
    assert.ok(new Date(x.validFrom) <= now && new Date(x.validTo) > new Date(now.getTime() + 300 * 86_400_000));
    assert.ok(x.checkHost('op-1') && x.checkIP('127.0.0.1'));
    assert.notEqual(selfSignedCertificate().cert, cert, 'a new key and serial each time');
    const v6 = new X509Certificate(selfSignedCertificate({ hosts: ['fd00::10:2', '::ffff:10.0.0.1'] }).cert);
    assert.equal(v6.subjectAltName, 'IP Address:FD00:0:0:0:0:0:10:2, IP Address:0:0:0:0:0:FFFF:A00:1');
  });
});

describe('the self-signed certificate, for every first byte of its random serial', () => {
  it("always parses: its serial is encoded in DER's shortest form (a leading zero byte is refused)", () => {
    // Only the serial's first byte decides its encoding. The rest zero is the worst case: a
    // leading 0x00 kept as is would be followed by another. (1,000 random serials found a bad
    // first byte with some probability; these 256 find it every time.)
    for (let first = 0; first < 256; first++) {
      const serial = Buffer.alloc(16);
      serial[0] = first;
      const { cert } = selfSignedCertificate({ randomBytes: () => serial });
      assert.doesNotThrow(() => new X509Certificate(cert), `a random serial starting 0x${first.toString(16).padStart(2, '0')}`);
    }
  });
});

describe('the certificate directory (cert-manager / Secret volume layout)', () => {
  it('loads tls.crt and tls.key, and refuses a missing file or a key of another certificate, naming the file', (t) => {
    const a = selfSignedCertificate();
    const b = selfSignedCertificate();
    const { dir } = tlsSecretVolume(t, a);
    assert.deepEqual(loadCertificateDir(dir), a);
    const mixed = tlsSecretVolume(t, { cert: a.cert, key: b.key });
    assert.throws(
      () => loadCertificateDir(mixed.dir),
      (e: unknown) => e instanceof CertificateError && /tls\.key does not fit/.test(e.message),
    );
    assert.throws(() => loadCertificateDir(join(dir, 'nope')), /cannot read .*nope\/tls\.crt/);
  });

  it('hands a rotated pair over once, keeps the old one while the new one is broken, and logs that once', async (t) => {
    const clock = new FakeClock();
    const logger = recordingLogger();
    const first = selfSignedCertificate();
    const { dir, rotate } = tlsSecretVolume(t, first);
    const seen: string[] = [];
    const watcher = new CertificateWatcher({ dir, current: first, clock, logger, onChange: (p) => seen.push(fingerprint(p.cert)) });
    watcher.start();
    t.after(() => watcher.stop());

    await clock.step(5_000);
    assert.deepEqual(seen, [], 'no change, no reload');

    const second = selfSignedCertificate();
    rotate(second);
    await clock.step(5_000);
    assert.deepEqual(seen, [fingerprint(second.cert)]);
    await clock.step(15_000);
    assert.equal(seen.length, 1, 'handed over once');

    rotate({ cert: selfSignedCertificate().cert, key: second.key }); // a key that does not fit
    await clock.step(15_000);
    assert.equal(seen.length, 1, 'a broken pair is not served');
    assert.equal(logger.lines.filter((l) => /not valid; serving the previous one/.test(l)).length, 1, 'logged once');

    const third = selfSignedCertificate();
    rotate(third);
    await clock.step(5_000);
    assert.deepEqual(seen, [fingerprint(second.cert), fingerprint(third.cert)]);
    watcher.stop();
    assert.equal(clock.timerCount, 0, 'stop() leaves no timer');
  });

  it('the endpoint serves a rotated certificate to new connections without a restart', async (t) => {
    const clock = new FakeClock();
    const first = selfSignedCertificate();
    const { dir, rotate } = tlsSecretVolume(t, first);
    const endpoint = endpointOver(dir, 'no API server in this test', clock);
    await endpoint.start();
    t.after(() => endpoint.close());
    assert.equal(await servedFingerprint(endpoint.port), fingerprint(first.cert));
    const second = selfSignedCertificate();
    rotate(second);
    await clock.step(5_000);
    assert.equal(await servedFingerprint(endpoint.port), fingerprint(second.cert));
    assert.equal(
      (await get(endpoint.port, '/metrics', { tls: true, headers: { Authorization: 'Bearer x' } })).status,
      500,
      'a failed review is never a 200',
    );
  });

  it('the endpoint fails to start on a broken cert dir, naming the file', async (t) => {
    const { dir } = tlsSecretVolume(t, { cert: 'not a certificate', key: selfSignedCertificate().key });
    const endpoint = endpointOver(dir, 'unused');
    await assert.rejects(
      endpoint.start(),
      /^CertificateError: invalid METRICS_CERT_DIR \(--metrics-cert-dir\) ".*": .*tls\.crt is not a PEM certificate/,
    );
    await endpoint.close();
  });
});
