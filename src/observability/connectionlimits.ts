/**
 * How long and how many connections a client may hold on the metrics and probe servers, so that
 * nobody who can reach a port can pin the operator's memory (an idle TLS connection costs about
 * 30 KiB; 3,000 of them took the process from 82 to 172 MiB, and Node closed none of them).
 *
 *   limit                          value   counted from
 *   the first request's headers    10 s    the accept (the TLS handshake included)
 *   the TLS handshake              10 s    the accept (Node's own timer)
 *   a later request's headers      10 s    that request's first byte
 *   a whole request                30 s    that request's first byte
 *   idle between requests          90 s    the end of the last response (keep-alive)
 *   open connections per server    64      past it a new connection is closed at accept
 *   open connections per address   8       per client IP; past it likewise
 *
 * Why the first deadline is our own timer: Node's headersTimeout and requestTimeout start at a
 * request's first byte (its parser joins the checked list on message begin), so a connection
 * that sends nothing, or a TLS one that never sends a ClientHello, was never checked. Go's
 * net/http, which controller-runtime's servers use, starts its deadlines at the accept; so does
 * this one. The timer sits on the raw TCP socket and is cleared when the first request's headers
 * have been parsed; destroying the raw socket ends its TLS socket too.
 *
 * Why these values: a probe or a scrape sends its request within milliseconds of connecting;
 * 10 s (Prometheus' default scrape timeout, and ten times the kubelet's default probe timeout)
 * leaves room for a loaded node while an idle connection holds its slot for 10 s at most. The
 * idle timeout is controller-runtime's (90 s, Go's http.DefaultTransport's), so a Prometheus
 * scraping at any interval under 90 s keeps one TLS connection instead of a handshake a scrape.
 * The caps bound what the connections can cost (128 idle TLS connections, handshakes done, took
 * 7.5 MiB, 8 % of an idle process; 64 leave room under the 10 % goal) while leaving far more
 * than the real callers use (the kubelet's probes, one connection each, three at most at once;
 * one or two Prometheus, or all of them through one sidecar's address). The per-address cap
 * keeps one flooding client from taking every slot, so the kubelet (the node's address) still
 * gets its probes through; a flood from 8 addresses or more can fill the server's cap, and then
 * probes are refused too until the flood's connections reach their deadline. That is the trade: a bounded process, whose probes a
 * large distributed flood can fail for as long as it lasts, against an unbounded one.
 *
 * These are constants, as controller-runtime's are: no real caller needs other values, and a
 * setting would only let a user turn the protection off. Tests pass shorter ones.
 */
import type { Server, Socket } from 'node:net';

export interface ConnectionLimits {
  /** From the accept to the first request's headers (the TLS handshake included). */
  firstRequestMs: number;
  /** From the accept to the end of the TLS handshake. */
  handshakeMs: number;
  /** From a later request's first byte to the end of its headers. */
  headersMs: number;
  /** From a request's first byte to its end. */
  requestMs: number;
  /** Between the end of a response and the next request on the connection. */
  idleMs: number;
  /** Open connections of the server. */
  maxConnections: number;
  /** Open connections from one remote address. */
  maxConnectionsPerAddress: number;
}

export const CONNECTION_LIMITS: Readonly<ConnectionLimits> = Object.freeze({
  firstRequestMs: 10_000,
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 30_000,
  idleMs: 90_000,
  maxConnections: 64,
  maxConnectionsPerAddress: 8,
});

/** How often Node checks headersMs and requestMs (its default, 30 s, would let a slow request live 40 s). */
export const DEADLINE_CHECK_INTERVAL_MS = 1_000;

/** The limits with `overrides` applied, checked: every value a positive integer, headers within the request. */
export function connectionLimits(overrides: Partial<ConnectionLimits> = {}): ConnectionLimits {
  const limits = { ...CONNECTION_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits))
    if (!Number.isInteger(value) || value < 1) throw new Error(`connection limit ${name} must be a positive integer, got ${value}`);
  if (limits.headersMs > limits.requestMs) throw new Error('connection limit headersMs must not exceed requestMs');
  return limits;
}

/**
 * Guards a server's connections with the first-request deadline and the per-address cap (the
 * server's own options carry the rest: see HttpListener). Call before listen().
 *
 * Guarantees: every accepted connection either sees its first request's headers parsed within
 * firstRequestMs of the accept or is destroyed; a connection past maxConnectionsPerAddress is
 * destroyed at once, and the open ones are kept; closeWaiting() destroys the connections still waiting for a first request (which
 * the HTTP server does not track while a TLS handshake is pending), so close() is not held by them.
 */
export class ConnectionGuard {
  /** Connections that have not sent a first request, by "address|port", with their deadline timers. */
  private readonly waiting = new Map<string, { socket: Socket; timer: NodeJS.Timeout }>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    server: Server,
    private readonly limits: ConnectionLimits,
  ) {
    server.maxConnections = limits.maxConnections;
    // The server's own connection listeners (the TLS wrap, the HTTP parser) run only for a socket
    // admitted here: a refused socket then costs a net.Socket, not a TLS session and a parser. A
    // flood of 3,000 refused TLS connections took 37 MiB when the TLS wrap ran for each first.
    const serve = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (this.admitted(socket)) for (const listener of serve) listener.call(server, socket);
    });
    server.on('request', (req: { socket: Socket }) => this.firstRequest(req.socket));
  }

  closeWaiting(): void {
    for (const { socket } of this.waiting.values()) socket.destroy();
  }

  private admitted(socket: Socket): boolean {
    const address = socket.remoteAddress;
    // No address: the client is gone already (reset before we got to it).
    const fromAddress = address === undefined ? Infinity : (this.perAddress.get(address) ?? 0) + 1;
    if (address === undefined || fromAddress > this.limits.maxConnectionsPerAddress) {
      socket.destroy();
      return false;
    }
    this.perAddress.set(address, fromAddress);
    const key = connectionKey(socket);
    const timer = setTimeout(() => socket.destroy(), this.limits.firstRequestMs);
    // A connection waiting for its deadline must not keep the process alive on its own.
    timer.unref();
    this.waiting.set(key, { socket, timer });
    socket.once('close', () => {
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
      this.forget(key, socket);
    });
    return true;
  }

  /** The request's socket is the TLS one for HTTPS; it has the raw socket's remote address and port. */
  private firstRequest(socket: Socket): void {
    this.forget(connectionKey(socket));
  }

  private forget(key: string, socket?: Socket): void {
    const entry = this.waiting.get(key);
    if (!entry || (socket && entry.socket !== socket)) return;
    clearTimeout(entry.timer);
    this.waiting.delete(key);
  }
}

function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
