/**
 * A small HTTP listener shared by the metrics and probe servers: binds, reports the bound port,
 * explains a failed bind in terms of the setting to change, and closes completely.
 *
 * Guarantees: listen() resolves only once the port is bound (port 0 = a free port, reported by
 * `port`); a bind failure rejects with a ListenError naming the setting; close() stops accepting,
 * drops idle keep-alive connections (a scraper's connection would otherwise hold the server open
 * for up to its keep-alive timeout) and resolves when the server is fully closed. Idempotent.
 * With a certificate it serves HTTPS only (a plain HTTP request fails the TLS handshake and is
 * dropped), HTTP/1.1 only (node:https has no HTTP/2, so HTTP/2 Rapid Reset does not apply), and
 * setCertificate() swaps the certificate for new connections without a restart.
 *
 * No client can hold its connections for long or open many (connectionlimits.ts has the values
 * and why): the first request's headers must arrive within 10 s of the accept (the TLS handshake
 * included), a later request's headers within 10 s of its first byte and the whole request
 * within 30 s; a keep-alive connection idle for 90 s is closed; past 32 open connections, or
 * 8 from one address, a new connection is closed at accept or takes the place of one not in a
 * request; a pipelined request (sent before the previous response was written) closes its
 * connection, so a connection buffers one request and one response at most.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { checkDeadlinesOnlyWithConnections } from './connectionchecks.js';
import { ConnectionGuard, connectionLimits, DEADLINE_CHECK_INTERVAL_MS, type ConnectionLimits } from './connectionlimits.js';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** A PEM certificate (chain) and its key. */
export interface TlsPair {
  cert: string;
  key: string;
}

export interface ListenOptions {
  port: number;
  /** Default: every address, IPv6 and IPv4 (probes and scrapes come from the kubelet and Prometheus, not loopback). */
  host?: string;
  /** How the user sets this port, for error messages, e.g. "METRICS_PORT (--metrics-port)". */
  setting: string;
  /** What listens, for error messages, e.g. "metrics server". */
  what: string;
}

export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The TLS context options of an HTTPS listener besides its certificate, given again on every
 * rotation: setSecureContext() resets whatever it is not given to Node's defaults, which a
 * process may have lowered (--tls-min-v1.0).
 */
const TLS_CONTEXT = { minVersion: 'TLSv1.2' } as const;

export class HttpListener {
  private server: Server | HttpsServer | undefined;
  private guard: ConnectionGuard | undefined;
  private closing: Promise<void> | undefined;
  private boundPort = 0;
  private readonly limits: ConnectionLimits;

  constructor(
    private readonly handler: Handler,
    /** Serve HTTPS with this certificate; none: plain HTTP. */
    private readonly tls?: TlsPair,
    /** Shorter limits for tests; default CONNECTION_LIMITS. */
    limits?: Partial<ConnectionLimits>,
  ) {
    this.limits = connectionLimits(limits);
  }

  /** Whether this listener serves HTTPS. */
  get secure(): boolean {
    return this.tls !== undefined;
  }

  /** New TLS connections get this certificate; open ones keep theirs. Only for an HTTPS listener. */
  setCertificate(pair: TlsPair): void {
    if (!this.tls) throw new Error('setCertificate on a plain HTTP listener');
    (this.server as HttpsServer | undefined)?.setSecureContext({ ...TLS_CONTEXT, cert: pair.cert, key: pair.key });
  }

  /** The bound port (the real one when 0 was asked); 0 before listen(). */
  get port(): number {
    return this.boundPort;
  }

  async listen(options: ListenOptions): Promise<void> {
    if (this.server) throw new Error(`${options.what} is already listening`);
    // No host: Node listens on :: dual-stack (IPv4 clients too) where IPv6 exists, else on
    // 0.0.0.0; so IPv6 single-stack pods pass their probes and IPv4-only nodes still work.
    const host = options.host;
    const handle = (req: IncomingMessage, res: ServerResponse): void => {
      Promise.resolve()
        .then(() => this.handler(req, res))
        .catch((err: unknown) => {
          if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end(`internal error: ${(err as Error)?.message ?? String(err)}\n`);
        });
    };
    const limits = this.limits;
    const deadlines = {
      headersTimeout: limits.headersMs,
      requestTimeout: limits.requestMs,
      keepAliveTimeout: limits.idleMs,
      maxHeaderSize: limits.maxHeaderBytes,
      connectionsCheckingInterval: Math.min(DEADLINE_CHECK_INTERVAL_MS, limits.headersMs),
    };
    const server: Server | HttpsServer = this.tls
      ? createHttpsServer({ ...this.tls, ...TLS_CONTEXT, handshakeTimeout: limits.handshakeMs, ...deadlines }, handle)
      : createServer(deadlines, handle);
    this.guard = new ConnectionGuard(server, limits);
    checkDeadlinesOnlyWithConnections(server, deadlines.connectionsCheckingInterval);
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => reject(listenError(err, options, host));
      server.once('error', onError);
      server.listen(options.port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    this.closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // Those have sent no request (some are mid TLS handshake, which the HTTP server does not see).
      this.guard?.closeWaiting();
      // A request in flight gets a moment to finish; after that nothing may keep the process up.
      const force = setTimeout(() => server.closeAllConnections(), 1_000);
      force.unref();
      server.once('close', () => clearTimeout(force));
    });
    return this.closing;
  }
}

function listenError(err: NodeJS.ErrnoException, options: ListenOptions, chosenHost?: string): ListenError {
  const host = chosenHost ?? 'all addresses';
  const where = chosenHost ? `${chosenHost}:${options.port}` : `port ${options.port} of all addresses`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new ListenError(
        `${options.what}: port ${options.port} is already in use on ${host}; set ${options.setting} to a free port`,
        err.code,
        { cause: err },
      );
    case 'EACCES':
      return new ListenError(
        `${options.what}: not allowed to listen on ${where} (ports below 1024 need privileges); set ${options.setting} to 1024 or above`,
        err.code,
        { cause: err },
      );
    case 'EADDRNOTAVAIL':
      return new ListenError(`${options.what}: address ${host} is not available on this machine`, err.code, { cause: err });
    default:
      return new ListenError(`${options.what}: cannot listen on ${where} (${options.setting}): ${err.message}`, err.code, { cause: err });
  }
}
