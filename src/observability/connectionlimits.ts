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
 *   open connections per server    32      past it a new connection is closed at accept (or
 *                                          takes the place of another, below)
 *   open connections per address   8       per client IP; past it likewise
 *   requests at once per connection 1      a request that arrives while the response to the
 *                                          previous one is unfinished closes the connection
 *   request headers                16 KiB  Node's default, set here so no flag changes it
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
 * 7.5 MiB, 8 % of an idle process; 32 leave room for the refused connections' own cost under
 * the 10 % goal) while leaving far more than the real callers use (the kubelet's probes, one
 * connection each, three at most at once; one or two Prometheus, or all of them through one
 * sidecar's address). Pausing sockets at accept keeps a refused one from ever reading.
 *
 * Why a full server still admits a newcomer: the per-address cap alone keeps one flooding client
 * from taking every slot, but a flood from 8 addresses or more filled the server's cap, and the
 * kubelet's probes (from the node's address, holding no connection) were refused for as long as
 * the flood lasted: 98 of 117 /readyz failed under a 30-address flood. So when the server is full,
 * a connection from an address holding at least two fewer connections than the address holding
 * the most is admitted, and the oldest connection of that address that is not in a request
 * (still waiting for its first one, or idle between two) is closed to make room; failing that, a
 * client's new connection takes the place of its own idle one. A request in flight is never
 * cut. The trade: to refuse the kubelet now takes idle connections from 32 addresses or more,
 * one each; a flood from fewer, however large, cannot keep a probe out, and its own connections
 * only trade places, so the count, and what they cost, stays at the cap.
 *
 * Why pipelining is refused: Node parses a whole read (64 KiB, about 1,800 `GET /healthz`) and
 * answers every request in it before it pauses a socket whose client does not read, so 32
 * connections pipelining and never reading took the process from 72 to 527 MiB (over the
 * Deployment's 512Mi limit) and stalled the event loop for seconds at a time. The kubelet and
 * Prometheus never pipeline: each waits for a response before it sends the next request. So a
 * request that arrives while the previous response on its connection is unfinished (its
 * 'finish' not yet emitted: not yet written to the kernel in full, which Node reports after the
 * read it parsed the request from) closes the connection and is never handed to the handler, and
 * Node's parser stops there (see refusePipeliningEarly). A connection so buffers at most one read, one
 * request's headers (16 KiB), the part of a body Node's stream buffer takes (the handlers read no
 * body) and one response.
 *
 * "In a request" runs from the parsed headers of a request to the end of writing its response:
 * Node reports nothing earlier through its public API, so a connection still sending its next
 * request's headers counts as idle (a probe or a scrape sends them in one write).
 *
 * These are constants, as controller-runtime's are: no real caller needs other values, and a
 * setting would only let a user turn the protection off. Tests pass shorter ones.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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
  /** Bytes of one request's headers (request line included). */
  maxHeaderBytes: number;
}

export const CONNECTION_LIMITS: Readonly<ConnectionLimits> = Object.freeze({
  firstRequestMs: 10_000,
  handshakeMs: 10_000,
  headersMs: 10_000,
  requestMs: 30_000,
  idleMs: 90_000,
  maxConnections: 32,
  maxConnectionsPerAddress: 8,
  maxHeaderBytes: 16 * 1024,
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

interface Connection {
  readonly socket: Socket;
  readonly address: string;
  /** Requests served so far; 0 while it waits for its first. */
  served: number;
  /** Whether the response to its latest request has not emitted 'finish' (or 'close') yet. */
  answering: boolean;
  /** The first-request deadline; cleared once the first request's headers are parsed. */
  timer: NodeJS.Timeout | undefined;
}

/** Whether the connection's latest request is still being answered: such a one is never closed to make room. */
function inRequest(connection: Connection): boolean {
  return connection.answering;
}

/** Whether the connection has been served and is between two requests. */
function idle(connection: Connection): boolean {
  return connection.served > 0 && !connection.answering;
}

/**
 * Guards a server's connections with the first-request deadline and the caps (the server's own
 * options carry the rest: see HttpListener). Call before listen().
 *
 * Guarantees: every accepted connection either sees its first request's headers parsed within
 * firstRequestMs of the accept or is destroyed; at most maxConnections are open, at most
 * maxConnectionsPerAddress from one address; past a cap a new connection is destroyed at once,
 * except that a full server admits a connection from an address holding two or more fewer than
 * the most-holding address by closing that address's oldest connection not in a request, or a
 * connection from an address with an idle one in its place (see roomFor); a request that arrives
 * while the response to the previous one on its connection is unfinished destroys the connection
 * and never reaches the server's request listeners; closeWaiting() destroys the connections still
 * waiting for a first request (which the HTTP server does not track while a TLS handshake is
 * pending), so close() is not held by them.
 */
export class ConnectionGuard {
  /**
   * Open connections by "address|port" (the raw socket's and its TLS socket's, alike).
   * Invariant: a connection is here from its admission until its socket closes or is evicted,
   * and in `byAddress` under its address exactly as long.
   */
  private readonly open = new Map<string, Connection>();
  /** The open connections of each address, oldest first; no empty sets. */
  private readonly byAddress = new Map<string, Set<Connection>>();

  constructor(
    server: Server,
    private readonly limits: ConnectionLimits,
  ) {
    // The cap is counted here, where a full server can still make room; Node's own, twice as
    // high, is a backstop that closes a connection before any JavaScript sees it.
    server.maxConnections = 2 * limits.maxConnections;
    // The server's own connection listeners (the TLS wrap, the HTTP parser) run only for a socket
    // admitted here: a refused socket then costs a net.Socket, not a TLS session and a parser. A
    // flood of 3,000 refused TLS connections took 37 MiB when the TLS wrap ran for each first.
    // Sockets are accepted paused, and reading starts only for an admitted one: a refused socket
    // then never gets a read buffer for the bytes its client sent (a TLS ClientHello at once).
    // (`pauseOnConnect` is net.Server's option, read from this property at each accept.)
    (server as Server & { pauseOnConnect: boolean }).pauseOnConnect = true;
    const serve = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (!this.admitted(socket)) return;
      socket.resume();
      for (const listener of serve) listener.call(server, socket);
      this.refusePipeliningEarly(socket);
    });
    // Over TLS, the HTTP parser is given the TLS socket once its handshake is done.
    server.on('secureConnection', (socket: Socket) => this.refusePipeliningEarly(socket));
    // Likewise the request listeners (the handler) run only for a request that is not pipelined
    // (where refusePipeliningEarly could not hook in, this is where a pipelined one is refused).
    const handle = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const connection = this.open.get(connectionKey(req.socket));
      if (connection) {
        if (inRequest(connection)) {
          req.socket.destroy();
          return;
        }
        const served = ++connection.served;
        connection.answering = true;
        const answered = (): void => {
          // A late event of an earlier response must not end the answer of this one.
          if (connection.served === served) connection.answering = false;
        };
        res.once('finish', answered);
        res.once('close', answered);
        clearTimeout(connection.timer);
        connection.timer = undefined;
      }
      for (const listener of handle) listener.call(server, req, res);
    });
  }

  /**
   * Refuses a pipelined request on `socket` as soon as Node's HTTP parser has its headers, and
   * stops the parser there. Node parses the whole read it is in (64 KiB: about 1,800 pipelined
   * `GET /healthz`, an IncomingMessage and a ServerResponse each) before any request of it
   * reaches a listener, also after the socket is destroyed; 32 such reads at once took the RSS up
   * by 32 MiB. The parser hands each request's headers to its `onIncoming`, whose answer goes back
   * to llhttp as on_headers_complete's: 2 ends the parse as an upgrade does, which drops the rest
   * of the read. Neither is public API, so where they are missing (another runtime, another
   * Node) nothing is hooked and the request listener refuses the pipelined requests instead.
   */
  private refusePipeliningEarly(socket: Socket): void {
    const parser = (socket as Socket & { parser?: { onIncoming?: unknown } | null }).parser;
    const onIncoming = parser?.onIncoming;
    if (!parser || typeof onIncoming !== 'function') return;
    parser.onIncoming = (...args: unknown[]): unknown => {
      const connection = this.open.get(connectionKey(socket));
      if (connection && inRequest(connection)) {
        socket.destroy();
        return STOP_PARSING;
      }
      return (onIncoming as (...a: unknown[]) => unknown).apply(parser, args);
    };
  }

  closeWaiting(): void {
    for (const connection of this.open.values()) if (connection.served === 0) connection.socket.destroy();
  }

  private admitted(socket: Socket): boolean {
    const address = socket.remoteAddress;
    // No address: the client is gone already (reset before we got to it).
    const held = address === undefined ? Infinity : (this.byAddress.get(address)?.size ?? 0);
    if (address === undefined || held >= this.limits.maxConnectionsPerAddress || !this.roomFor(address, held)) {
      socket.destroy();
      return false;
    }
    const connection: Connection = { socket, address, served: 0, answering: false, timer: undefined };
    connection.timer = setTimeout(() => socket.destroy(), this.limits.firstRequestMs);
    // A connection waiting for its deadline must not keep the process alive on its own.
    connection.timer.unref();
    const key = connectionKey(socket);
    this.open.set(key, connection);
    const same = this.byAddress.get(address);
    if (same) same.add(connection);
    else this.byAddress.set(address, new Set([connection]));
    socket.once('close', () => this.forget(key, connection));
    return true;
  }

  /**
   * True when a connection from `address`, which holds `held`, fits; on a full server after
   * closing one to make room: the oldest not in a request of the address holding the most, when
   * that is at least held + 2, else the newcomer's own oldest idle one (its client opened a new
   * connection instead of reusing it; a kubelet's last probe connection may not have closed yet).
   */
  private roomFor(address: string, held: number): boolean {
    if (this.open.size < this.limits.maxConnections) return true;
    let evictable: Connection | undefined;
    let most = held + 1;
    for (const connections of this.byAddress.values()) {
      if (connections.size <= most) continue;
      for (const connection of connections) {
        if (inRequest(connection)) continue;
        evictable = connection;
        most = connections.size;
        break;
      }
    }
    evictable ??= [...(this.byAddress.get(address) ?? [])].find(idle);
    if (!evictable) return false;
    this.forget(connectionKey(evictable.socket), evictable);
    evictable.socket.destroy();
    return true;
  }

  private forget(key: string, connection: Connection): void {
    if (this.open.get(key) !== connection) return;
    clearTimeout(connection.timer);
    this.open.delete(key);
    const same = this.byAddress.get(connection.address);
    same?.delete(connection);
    if (same?.size === 0) this.byAddress.delete(connection.address);
  }
}

/** What on_headers_complete answers llhttp to end the parse as for an upgrade (llhttp.h). */
const STOP_PARSING = 2;

function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
