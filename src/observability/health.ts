/**
 * The probe server: /healthz (liveness) and /readyz (readiness) with named checks, answered the
 * way kube-apiserver answers its own.
 *
 *   GET /healthz            200 "ok", or 500 with one line per check
 *   GET /healthz?verbose    200 or 500, always one line per check:
 *                             [+]ping ok
 *                             [-]informers-synced failed
 *                             healthz check failed
 *   GET /healthz?exclude=a  skips check a (repeatable)
 *   GET /healthz/<name>     one check alone: 200 "ok", or 500 "[-]<name> failed"
 *
 * The probe port answers anyone who can reach it, without authentication, so an answer says which
 * checks fail and never why: a reason can carry a server address, a proxy, an error from the API
 * server. The reasons go to the log instead, once per change of a check's state (see logChange).
 *
 * /readyz runs the liveness checks too: a process that is not alive is not ready either.
 *
 * A check is a synchronous read of state other parts keep up to date (a flag set when caches
 * synced, a timestamp of the last renewal), so a probe never waits on the network and a slow
 * API server cannot make the kubelet restart the pod. It returns true when healthy, and false or
 * a reason (string) when not; a check that throws fails with the error's message.
 *
 * Always registered: "ping" (liveness, always passes) and, unless disabled, "eventloop"
 * (liveness, fails after a stalled event loop: see watchdog.ts for the threshold).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Logger, nopLogger } from '../runtime/index.js';
import type { ConnectionLimits } from './connectionlimits.js';
import { HttpListener } from './http.js';
import { EventLoopWatchdog, type WatchdogOptions } from './watchdog.js';

export type HealthCheck = () => boolean | string;

export interface HealthServerOptions {
  /**
   * 0 = any free port (tests); read the bound one from `port`. Note HEALTH_PORT=0 means "no probe
   * server": the caller then does not construct one at all.
   */
  port: number;
  /** Default: every address, IPv6 and IPv4 (`::`, dual-stack). */
  host?: string;
  logger?: Logger;
  /** Options of the event-loop watchdog, or false for none. */
  watchdog?: WatchdogOptions | false;
  /** For error messages; default "HEALTH_PORT (--health-port)". */
  setting?: string;
  /** Shorter connection limits for tests; default CONNECTION_LIMITS (connectionlimits.ts). */
  connectionLimits?: Partial<ConnectionLimits>;
}

interface Named {
  name: string;
  check: HealthCheck;
}

interface Outcome {
  name: string;
  ok: boolean;
  reason?: string;
}

const CHECK_NAME = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/;

export class HealthServer {
  private readonly liveness: Named[] = [];
  private readonly readiness: Named[] = [];
  private readonly listener: HttpListener;
  private readonly logger: Logger;
  private readonly watchdog: EventLoopWatchdog | undefined;
  /** Last logged state per endpoint and check, so a failing check is logged on change, not per probe. */
  private readonly lastFailed = new Map<string, string>();

  constructor(private readonly options: HealthServerOptions) {
    this.logger = options.logger ?? nopLogger;
    this.listener = new HttpListener((req, res) => this.handle(req, res), undefined, options.connectionLimits);
    this.addLivenessCheck('ping', () => true);
    if (options.watchdog !== false) {
      this.watchdog = new EventLoopWatchdog(options.watchdog || {});
      this.addLivenessCheck('eventloop', this.watchdog.check);
    }
  }

  /** Adds a check to /healthz (and so to /readyz). Names are unique across both. */
  addLivenessCheck(name: string, check: HealthCheck): void {
    this.add(this.liveness, name, check);
  }

  /** Adds a check to /readyz only. */
  addReadinessCheck(name: string, check: HealthCheck): void {
    this.add(this.readiness, name, check);
  }

  /** The bound port once started. */
  get port(): number {
    return this.listener.port;
  }

  async start(): Promise<void> {
    await this.listener.listen({
      port: this.options.port,
      host: this.options.host,
      setting: this.options.setting ?? 'HEALTH_PORT (--health-port)',
      what: 'health probe server',
    });
    this.watchdog?.start();
  }

  /** Stops the server and the watchdog. */
  async close(): Promise<void> {
    this.watchdog?.stop();
    await this.listener.close();
  }

  /** Runs the checks of an endpoint without HTTP: for logs and tests. */
  evaluate(endpoint: 'healthz' | 'readyz', exclude: readonly string[] = []): { ok: boolean; checks: Outcome[] } {
    const checks = this.checksOf(endpoint)
      .filter((c) => !exclude.includes(c.name))
      .map(run);
    return { ok: checks.every((c) => c.ok), checks };
  }

  private add(list: Named[], name: string, check: HealthCheck): void {
    if (!CHECK_NAME.test(name))
      throw new Error(`health check name ${JSON.stringify(name)} must be lower case letters, digits, "-", "_" or "."`);
    if ([...this.liveness, ...this.readiness].some((c) => c.name === name)) throw new Error(`health check ${name} is already registered`);
    list.push({ name, check });
  }

  private checksOf(endpoint: 'healthz' | 'readyz'): Named[] {
    return endpoint === 'healthz' ? this.liveness : [...this.liveness, ...this.readiness];
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://probe');
    const match = /^\/(healthz|readyz)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (!match) return reply(res, 404, 'not found: use /healthz or /readyz\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return reply(res, 405, 'method not allowed\n');
    }
    const endpoint = match[1] as 'healthz' | 'readyz';
    const single = match[2];
    if (single !== undefined) {
      const named = this.checksOf(endpoint).find((c) => c.name === decodeURIComponent(single));
      if (!named) return reply(res, 404, `no check named ${single} in /${endpoint}\n`);
      const outcome = run(named);
      this.logChange(endpoint, [outcome]);
      return outcome.ok ? reply(res, 200, 'ok') : reply(res, 500, `[-]${outcome.name} failed\n`);
    }
    const { ok, checks } = this.evaluate(endpoint, url.searchParams.getAll('exclude'));
    this.logChange(endpoint, checks);
    const verbose = url.searchParams.has('verbose');
    if (ok && !verbose) return reply(res, 200, 'ok');
    const lines = checks.map((c) => (c.ok ? `[+]${c.name} ok` : `[-]${c.name} failed`));
    lines.push(`${endpoint} check ${ok ? 'passed' : 'failed'}`);
    reply(res, ok ? 200 : 500, lines.join('\n') + '\n');
  }

  private logChange(endpoint: string, checks: Outcome[]): void {
    for (const c of checks) {
      const key = `${endpoint}/${c.name}`;
      const previous = this.lastFailed.get(key);
      if (!c.ok && previous !== c.reason) {
        this.logger.warn('health check failing', { endpoint, check: c.name, reason: c.reason });
        this.lastFailed.set(key, c.reason ?? '');
      } else if (c.ok && previous !== undefined) {
        this.logger.info('health check passing again', { endpoint, check: c.name });
        this.lastFailed.delete(key);
      }
    }
  }
}

function run(named: Named): Outcome {
  try {
    const result = named.check();
    if (result === true) return { name: named.name, ok: true };
    return { name: named.name, ok: false, reason: typeof result === 'string' && result !== '' ? oneLine(result) : 'check failed' };
  } catch (err) {
    return { name: named.name, ok: false, reason: oneLine((err as Error)?.message ?? String(err)) };
  }
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ');
}

function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  });
  res.end(body);
}
