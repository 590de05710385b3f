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
 * Both settle within `signal`: an unanswered proxy fails the request at its deadline.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest, type AgentOptions, type RequestOptions } from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';

export interface DialTarget {
  host: string;
  port: number;
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

function connectTunnel(proxy: URL, target: DialTarget, ca: ConnectionOptions['ca'], signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const auth = basicProxyAuth(proxy);
    const hostPort = authority(target);
    const secure = proxy.protocol === 'https:';
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
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`proxy ${proxy.host} refused CONNECT ${hostPort}: ${res.statusCode} ${res.statusMessage ?? ''}`.trim()));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.once('error', (err) => reject(new Error(`proxy ${proxy.host}: ${err.message}`, { cause: err })));
    req.end();
  });
}

async function socksTunnel(proxy: URL, target: DialTarget, signal: AbortSignal): Promise<Socket> {
  // Loaded on first use: most clusters have no SOCKS proxy, and the bundle pays nothing for it.
  const { SocksClient } = await import('socks');
  const connecting = SocksClient.createConnection({
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
  if (signal.aborted) throw signal.reason;
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    connecting.then(
      ({ socket }) => {
        signal.removeEventListener('abort', onAbort);
        // Aborted meanwhile: nobody will use it.
        if (signal.aborted) socket.destroy();
        else resolve(socket);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(new Error(`socks5 proxy ${proxy.host}: ${err.message}`, { cause: err }));
      },
    );
  });
}

/** TCP keep-alive probes after 30 s idle, as client-go's dialer sets on every connection. */
const TCP_KEEPALIVE_MS = 30_000;

/** A raw tunnel to `target` through `proxy`. */
export async function tunnel(proxy: URL, target: DialTarget, ca: ConnectionOptions['ca'], signal: AbortSignal): Promise<Socket> {
  const socket = proxy.protocol.startsWith('socks')
    ? await socksTunnel(proxy, target, signal)
    : await connectTunnel(proxy, target, ca, signal);
  socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
  return socket;
}

/** TLS to `target` inside a tunnel through `proxy`; resolves once the handshake is done. */
export async function dialTls(proxy: URL, target: DialTarget, tls: ConnectionOptions, signal: AbortSignal): Promise<TLSSocket> {
  const socket = await tunnel(proxy, target, tls.ca, signal);
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({ ...tls, socket, servername: tls.servername ?? sniName(target.host) });
    const fail = (err: Error): void => {
      signal.removeEventListener('abort', onAbort);
      secure.destroy();
      reject(err);
    };
    const onAbort = (): void => fail(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    secure.once('error', fail);
    secure.once('secureConnect', () => {
      signal.removeEventListener('abort', onAbort);
      secure.removeListener('error', fail);
      resolve(secure);
    });
  });
}

/**
 * An https.Agent whose connections go through `proxy`: pooling and keep-alive as usual, each
 * new socket a tunnel. A tunnel that cannot be made fails the request that asked for it.
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
    dialTls(this.proxy, target, options as ConnectionOptions, options.signal ?? new AbortController().signal).then(
      (socket) => callback?.(null, socket),
      (err: Error) => callback?.(err, undefined as never),
    );
    return undefined;
  }
}
