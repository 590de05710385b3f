/**
 * The metrics endpoint as the settings ask for it (kubebuilder's scaffold, with its three cases):
 *
 *   default                        HTTPS with a self-signed certificate made at start (logged);
 *                                  callers authenticated and authorized (metricsauth.ts)
 *   METRICS_CERT_DIR=<dir>         HTTPS with <dir>/tls.crt and tls.key, reloaded on rotation;
 *                                  callers authenticated and authorized
 *   METRICS_INSECURE_PLAIN_HTTP    plain HTTP, anyone who reaches the port (a warning at start).
 *                                  Both go together: bearer tokens over plain HTTP would leak.
 *
 * Guarantees: a cert dir that cannot be loaded at start fails start() with a CertificateError
 * naming METRICS_CERT_DIR and the file (main exits 2, as for any invalid setting); later
 * rotations are watched (servingcert.ts); close() stops the watcher and the server. With
 * authentication, metrics_auth_refused_total{reason} counts the scrapes refused at once, because
 * every access review slot was taken (busy) or past the review rate (rate) (metricsauth.ts), and
 * metrics_auth_reviews_in_flight shows the slots in use.
 * Over HTTPS, echoperator_metrics_certificate_expiry_timestamp_seconds is the notAfter of the
 * certificate new connections get (set at start, and again on each rotation that is served), so
 * an alert sees a certificate that stopped rotating before scrapes start failing.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { type Clock, type Logger, nopLogger, realClock } from '../runtime/index.js';
import { MetricsAuth, type ReviewApi } from './metricsauth.js';
import { MetricsServer } from './metricsserver.js';
import { selfSignedCertificate } from './selfsigned.js';
import {
  CertificateError,
  CertificateWatcher,
  certificateNotAfterSeconds,
  describeCertificate,
  loadCertificateDir,
} from './servingcert.js';

export interface MetricsEndpointOptions {
  registry: Registry;
  port: number;
  path: string;
  /** '' = self-signed. */
  certDir: string;
  insecurePlainHttp: boolean;
  /**
   * The API server, for the reviews: a RestClient with connections of its own
   * (RestClient.withOwnConnections, MAX_REVIEWS_IN_FLIGHT sockets), so reviews never share the
   * pool of reconciles and the Lease.
   */
  api: ReviewApi;
  /** Names for the self-signed certificate's subjectAltName (default localhost and loopback). */
  hosts?: string[];
  logger?: Logger;
  clock?: Clock;
}

export class MetricsEndpoint {
  private server: MetricsServer | undefined;
  private watcher: CertificateWatcher | undefined;
  private readonly log: Logger;

  constructor(private readonly options: MetricsEndpointOptions) {
    this.log = options.logger ?? nopLogger;
  }

  /** The bound port once started. */
  get port(): number {
    return this.server?.port ?? 0;
  }

  async start(): Promise<void> {
    const o = this.options;
    const clock = o.clock ?? realClock;
    const base = { registry: o.registry, port: o.port, path: o.path };
    if (o.insecurePlainHttp) {
      this.server = new MetricsServer(base);
      await this.server.start();
      this.log.warn(
        'metrics: serving over plain HTTP WITHOUT authentication (METRICS_INSECURE_PLAIN_HTTP=true): anyone who reaches the port can read them',
        { port: this.server.port, path: o.path },
      );
      return;
    }
    const pair = o.certDir ? loadNamed(o.certDir) : selfSignedCertificate({ hosts: o.hosts });
    const refused = new Counter({
      name: 'metrics_auth_refused_total',
      help: 'Scrapes of the metrics refused at once, by reason: busy (503, every access review slot was taken) or rate (429, past the rate of reviews of new tokens).',
      labelNames: ['reason'],
      registers: [o.registry],
    });
    const auth = new MetricsAuth({
      api: o.api,
      path: o.path,
      now: () => clock.now(),
      logger: this.log,
      onRefused: (reason) => refused.inc({ reason }),
    });
    new Gauge({
      name: 'metrics_auth_reviews_in_flight',
      help: 'Tokens whose access reviews are in flight now (at most the review slots).',
      registers: [o.registry],
      collect() {
        this.set(auth.reviewsInFlight);
      },
    });
    const expiry = new Gauge({
      name: 'echoperator_metrics_certificate_expiry_timestamp_seconds',
      help: 'When the certificate the metrics endpoint serves now expires (its notAfter), in seconds since the Unix epoch.',
      registers: [o.registry],
    });
    expiry.set(certificateNotAfterSeconds(pair.cert));
    this.server = new MetricsServer({ ...base, tls: pair, auth });
    await this.server.start();
    const fields = { port: this.server.port, path: o.path, ...describeCertificate(pair.cert) };
    if (o.certDir) {
      const server = this.server;
      this.watcher = new CertificateWatcher({
        dir: o.certDir,
        current: pair,
        clock,
        logger: this.log,
        onChange: (next) => {
          server.setCertificate(next);
          expiry.set(certificateNotAfterSeconds(next.cert));
        },
      });
      this.watcher.start();
      this.log.info('metrics: serving over HTTPS to authorized callers, with the certificate of METRICS_CERT_DIR', {
        certDir: o.certDir,
        ...fields,
      });
    } else {
      this.log.info(
        'metrics: serving over HTTPS to authorized callers, with a SELF-SIGNED certificate made at start (set METRICS_CERT_DIR to serve a real one)',
        fields,
      );
    }
  }

  async close(): Promise<void> {
    this.watcher?.stop();
    await this.server?.close();
  }
}

function loadNamed(dir: string): ReturnType<typeof loadCertificateDir> {
  try {
    return loadCertificateDir(dir);
  } catch (err) {
    if (!(err instanceof CertificateError)) throw err;
    throw new CertificateError(
      `invalid METRICS_CERT_DIR (--metrics-cert-dir) ${JSON.stringify(dir)}: ${err.message}; expected a folder holding tls.crt and the matching tls.key (PEM), or empty for a self-signed certificate`,
    );
  }
}
