/**
 * Connections to the API server through a proxy (see proxy.ts for which one): a tunnel, then
 * TLS to the API server inside it, so the proxy sees only which host and port we connect to.
 *
 *  - http:// and https:// proxies: an HTTP CONNECT request (Node's own HTTP client sends it and
 *    parses the answer); an https proxy is reached over TLS first, its certificate checked
 *    against the cluster's CA when the kubeconfig has one (Go's transport does the same: it
 *    reuses the client TLS config for the proxy). Credentials in the URL go as Basic
 *    Proxy-Authorization.
 *  - socks5:// proxies: the `socks` package (a SOCKS5 CONNECT by host name, so the proxy
 *    resolves it, as Go's socks5 dialer does); credentials in the URL as SOCKS5 user/password.
 *
 * ProxyAgent puts this under Node's https.Agent, so HTTP/1.1 keeps its connection pool and
 * keep-alive through the proxy; dialTls gives the TLS socket itself (for an HTTP/2 session).
 *
 * Guarantee: every dial ends with its Dial's signal. When the signal aborts, the socket to the
 * proxy is destroyed, whatever the dial was waiting for (the TCP connection, the CONNECT answer,
 * the SOCKS5 handshake, the TLS handshake inside the tunnel), and `Dial.waitingOn` says which,
 * so the request's error can name the proxy that did not answer. The signal reaches
 * ProxyAgent.createConnection through a request option of our own (DIAL_OPTION), not
 * http.request's `signal` (see rest.ts for its cost).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest, type AgentOptions, type RequestOptions } from 'node:https';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';

export interface DialTarget {
  host: string;
  port: number;
}

/** One connection being made: the signal that ends it, and what it waits on meanwhile. */
export interface Dial {
  signal: AbortSignal;
  /** While the dial waits on the proxy: what has not happened yet (e.g. "proxy h:p did not answer CONNECT"). */
  waitingOn?: string;
}

/** The request option that hands a Dial to ProxyAgent.createConnection. */
export const DIAL_OPTION = 'echoperatorDial';

/** A request's deadline passed: the reason its signal aborts with ("within N ms" in messages). */
export class DeadlineExceeded extends Error {
  override readonly name = 'TimeoutError';
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** Whether and why a request or dial was stopped: an AbortSignal, or a request's RequestAbort. */
export type Stopped = Pick<AbortSignal, 'aborted' | 'reason'>;

/** A dial stopped while it waited on the proxy; its message names the proxy and what it did not do. */
export class ProxyStalled extends Error {
  override readonly name = 'ProxyStalled';
  constructor(waitingOn: string, stopped: Stopped) {
    const reason: unknown = stopped.reason;
    super(
      reason instanceof DeadlineExceeded
        ? `${waitingOn} within ${reason.ms} ms`
        : `${waitingOn} before the request was stopped (${(reason as Error)?.message ?? String(reason)})`,
    );
  }
}

function proxyPort(proxy: URL): number {
  if (proxy.port) return Number(proxy.port);
  return proxy.protocol === 'https:' ? 443 : proxy.protocol === 'http:' ? 80 : 1080;
}

/** The TLS server name (SNI) for a host: names only, never an address (RFC 6066). */
export function sniName(host: string): string | undefined {
  return isIP(host) ? undefined : host;
}

/** `host:port`, brackets around an IPv6 host (the CONNECT request-target's authority form). */
export function authority(target: DialTarget): string {
  return `${target.host.includes(':') && !target.host.startsWith('[') ? `[${target.host}]` : target.host}:${target.port}`;
}

export function basicProxyAuth(proxy: URL): string | undefined {
  if (!proxy.username && !proxy.password) return undefined;
  const user = decodeURIComponent(proxy.username);
  const pass = decodeURIComponent(proxy.password);
  return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
}

function connectTunnel(proxy: URL, target: DialTarget, ca: ConnectionOptions['ca'], dial: Dial): Promise<Socket> {
  const { signal } = dial;
  return new Promise((resolve, reject) => {
    const auth = basicProxyAuth(proxy);
    const hostPort = authority(target);
    const secure = proxy.protocol === 'https:';
    dial.waitingOn = `proxy ${proxy.host} did not answer CONNECT`;
    // http.request's `signal` is fine here: one per new tunnel, not one per request. On abort it
    // destroys the request and its socket, so the proxy sees the connection close.
    const req = (secure ? httpsRequest : httpRequest)({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxyPort(proxy),
      method: 'CONNECT',
      path: hostPort,
      headers: { host: hostPort, ...(auth ? { 'proxy-authorization': auth } : {}) },
      agent: false,
      signal,
      ...(secure ? { servername: proxy.hostname, ...(ca ? { ca } : {}) } : {}),
    });
    req.once('connect', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (signal.aborted) {
        socket.destroy();
        reject(new ProxyStalled(dial.waitingOn!, signal));
        return;
      }
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`proxy ${proxy.host} refused CONNECT ${hostPort}: ${res.statusCode} ${res.statusMessage ?? ''}`.trim()));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.once('error', (err) =>
      reject(signal.aborted ? new ProxyStalled(dial.waitingOn!, signal) : new Error(`proxy ${proxy.host}: ${err.message}`, { cause: err })),
    );
    req.end();
  });
}

async function socksTunnel(proxy: URL, target: DialTarget, dial: Dial): Promise<Socket> {
  // Loaded on first use: most clusters have no SOCKS proxy, and the bundle pays nothing for it.
  const { SocksClient } = await import('socks');
  const { signal } = dial;
  if (signal.aborted) throw signal.reason;
  dial.waitingOn = `socks5 proxy ${proxy.host} did not answer`;
  const client = new SocksClient({
    proxy: {
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxyPort(proxy),
      type: 5,
      userId: proxy.username ? decodeURIComponent(proxy.username) : undefined,
      password: proxy.password ? decodeURIComponent(proxy.password) : undefined,
    },
    command: 'connect',
    destination: { host: target.host, port: target.port },
  });
  // Our own socket, handed to the SOCKS client: SocksClient.createConnection takes no signal and
  // gives no handle on the socket it makes, so an abort could not close it. Writes wait in the
  // socket until it is connected.
  const socket = netConnect({ host: proxy.hostname.replace(/^\[|\]$/g, ''), port: proxyPort(proxy) });
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      socket.destroy();
      reject(new ProxyStalled(dial.waitingOn!, signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    client.once('established', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    client.once('error', (err: Error) => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      reject(new Error(`socks5 proxy ${proxy.host}: ${err.message}`, { cause: err }));
    });
    client.connect(socket);
  });
}

/** TCP keep-alive probes after 30 s idle, as client-go's dialer sets on every connection. */
const TCP_KEEPALIVE_MS = 30_000;

/** A raw tunnel to `target` through `proxy`; `dial.waitingOn` is cleared once it is made. */
export async function tunnel(proxy: URL, target: DialTarget, ca: ConnectionOptions['ca'], dial: Dial): Promise<Socket> {
  const socket = proxy.protocol.startsWith('socks') ? await socksTunnel(proxy, target, dial) : await connectTunnel(proxy, target, ca, dial);
  dial.waitingOn = undefined;
  socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
  return socket;
}

/** TLS to `target` inside a tunnel through `proxy`; resolves once the handshake is done. */
export async function dialTls(proxy: URL, target: DialTarget, tls: ConnectionOptions, dial: Dial): Promise<TLSSocket> {
  const { signal } = dial;
  const socket = await tunnel(proxy, target, tls.ca, dial);
  if (signal.aborted) {
    socket.destroy();
    throw signal.reason;
  }
  dial.waitingOn = `the TLS handshake with ${authority(target)} through proxy ${proxy.host} did not complete`;
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({ ...tls, socket, servername: tls.servername ?? sniName(target.host) });
    const fail = (err: Error): void => {
      signal.removeEventListener('abort', onAbort);
      secure.destroy();
      reject(err);
    };
    const onAbort = (): void => fail(new ProxyStalled(dial.waitingOn!, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    secure.once('error', fail);
    secure.once('secureConnect', () => {
      signal.removeEventListener('abort', onAbort);
      secure.removeListener('error', fail);
      dial.waitingOn = undefined;
      resolve(secure);
    });
  });
}

/**
 * An https.Agent whose connections go through `proxy`: pooling and keep-alive as usual, each
 * new socket a tunnel. A tunnel that cannot be made fails the request that asked for it, and
 * ends with that request's Dial (DIAL_OPTION); a request without one dials unbounded.
 */
export class ProxyAgent extends Agent {
  constructor(
    private readonly proxy: URL,
    options: AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: RequestOptions, callback?: (err: Error | null, socket: Duplex) => void): undefined {
    const target = { host: options.host ?? 'localhost', port: Number(options.port ?? 443) };
    const dial = (options as { [DIAL_OPTION]?: Dial })[DIAL_OPTION] ?? { signal: options.signal ?? new AbortController().signal };
    dialTls(this.proxy, target, options as ConnectionOptions, dial).then(
      (socket) => callback?.(null, socket),
      (err: Error) => callback?.(err, undefined as never),
    );
    return undefined;
  }
}
