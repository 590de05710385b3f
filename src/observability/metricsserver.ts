/**
 * Serves a prom-client Registry in the Prometheus text format at one path.
 *
 * Guarantees: GET and HEAD on the path answer 200 with the current values (collect() hooks,
 * such as the work queues' in-flight gauges, run per scrape); another path is 404; a collector
 * that throws makes that scrape 500 instead of a partial page; close() releases the port.
 * With `tls`, HTTPS only; with `auth`, a request to the path gets the metrics only when auth
 * says 200, and otherwise its status and message (metricsauth.ts), before anything is collected.
 */
import type { Registry } from 'prom-client';
import type { ConnectionLimits } from './connectionlimits.js';
import { HttpListener, type TlsPair } from './http.js';
import type { MetricsAuth } from './metricsauth.js';

export interface MetricsServerOptions {
  registry: Registry;
  /** 0 = any free port (tests); read the bound one from `port`. */
  port: number;
  /** Default /metrics. */
  path?: string;
  /** Default: every address, IPv6 and IPv4 (`::`, dual-stack). */
  host?: string;
  /** For error messages; default "METRICS_PORT (--metrics-port)". */
  setting?: string;
  /** Serve HTTPS with this certificate (see setCertificate); none: plain HTTP. */
  tls?: TlsPair;
  /** Who may read the metrics; none: anyone who reaches the port. */
  auth?: Pick<MetricsAuth, 'check'>;
  /** Shorter connection limits for tests; default CONNECTION_LIMITS (connectionlimits.ts). */
  connectionLimits?: Partial<ConnectionLimits>;
}

export class MetricsServer {
  private readonly path: string;
  private readonly listener: HttpListener;

  constructor(private readonly options: MetricsServerOptions) {
    this.path = options.path ?? '/metrics';
    this.listener = new HttpListener(
      async (req, res) => {
        const pathname = new URL(req.url ?? '/', 'http://scrape').pathname;
        if (pathname !== this.path) {
          res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end(`not found: metrics are served at ${this.path}\n`);
          return;
        }
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'GET, HEAD' });
          res.end('method not allowed\n');
          return;
        }
        if (options.auth) {
          const outcome = await options.auth.check(req);
          if (outcome.status !== 200) {
            res.writeHead(outcome.status, {
              'Content-Type': 'text/plain; charset=utf-8',
              ...(outcome.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {}),
              ...(outcome.retryAfterSeconds !== undefined ? { 'Retry-After': String(outcome.retryAfterSeconds) } : {}),
            });
            res.end(`${outcome.message}\n`);
            return;
          }
        }
        let body: string;
        try {
          body = await options.registry.metrics();
        } catch (err) {
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end(`collecting metrics failed: ${(err as Error)?.message ?? String(err)}\n`);
          return;
        }
        res.writeHead(200, { 'Content-Type': options.registry.contentType, 'Cache-Control': 'no-store' });
        res.end(body);
      },
      options.tls,
      options.connectionLimits,
    );
  }

  /** Whether it serves HTTPS. */
  get secure(): boolean {
    return this.listener.secure;
  }

  /** Serves `pair` to new connections (a rotated certificate), without a restart. */
  setCertificate(pair: TlsPair): void {
    this.listener.setCertificate(pair);
  }

  /** The bound port once started. */
  get port(): number {
    return this.listener.port;
  }

  start(): Promise<void> {
    return this.listener.listen({
      port: this.options.port,
      host: this.options.host,
      setting: this.options.setting ?? 'METRICS_PORT (--metrics-port)',
      what: 'metrics server',
    });
  }

  close(): Promise<void> {
    return this.listener.close();
  }
}
