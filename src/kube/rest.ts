/**
 * A small JSON REST transport to the API server.
 *
 * Why not client-node's generated clients for the hot path: client-node 1.4.0 builds a new TLS
 * agent for every request (no connection reuse, a TLS handshake per call), and its watch neither
 * asks for bookmarks nor exposes the stream's lifecycle an informer needs. So client-node does
 * what it is good at (loading kubeconfig, authentication incl. exec plugins and token refresh,
 * the API types) and this file moves bytes over ONE keep-alive agent, through the proxy that
 * client-go would use (proxy.ts: the kubeconfig's proxy-url, else HTTPS_PROXY / NO_PROXY; the
 * tunnels are dial.ts's), for requests and watches alike.
 *
 * Guarantees: every request has a deadline (timeoutMs, or the caller's signal for streams), which
 * also bounds its retries; an answer asking to come back later (429, or a 5xx with Retry-After)
 * is retried as client-go does (see retry.ts), sleeping as told, the sleep cut short by the
 * deadline or the caller's signal; a non-2xx answer becomes an ApiError carrying the server's
 * Status; a transport failure becomes an ApiError with code 0, so callers classify both with the
 * same helpers. Every answer and every retry is counted (RestClientMetrics), every call but a
 * watch has its latency observed, and whether the server answers at all is kept in
 * `reachability` (for a liveness check).
 *
 * Deadlines hold through proxies: a request's deadline (or a watch's signal) reaches the dial of
 * its tunnel (dial.ts), so a proxy that accepts and never answers fails the request at its
 * deadline with an error naming the proxy, and the tunnel is closed; a request stopped while it
 * waits for a socket settles at once. A watch must get its response headers within 30 s.
 */
import { Agent, request as httpsRequest, type AgentOptions, type RequestOptions } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { basicProxyAuth, DeadlineExceeded, DIAL_OPTION, ProxyAgent, ProxyStalled, tunnel, type Dial, type Stopped } from './dial.js';
import { ApiError, type StatusBody } from './errors.js';
import { ExecCredentialPlugin, type ExecConfig, type ExecPluginOptions } from './execcredential.js';
import { readList } from './listdecode.js';
import { proxyFor } from './proxy.js';
import { Reachability } from './reachability.js';
import { redactUrl } from './redact.js';
import { RequestAbort } from './requestabort.js';
import { MAX_RETRIES, nopRestClientMetrics, retryAfterMs, type RestClientMetrics } from './retry.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOpts {
  query?: Query;
  body?: unknown;
  /** Defaults to application/json; server-side apply uses application/apply-patch+yaml. */
  contentType?: string;
  signal?: AbortSignal;
  /** Deadline of the whole request; default 30 s. */
  timeoutMs?: number;
  /**
   * Called just before each attempt is sent: the first, and each retry after a Retry-After. The
   * server acts, if at all, on the attempt that succeeds, and never before its onSend.
   */
  onSend?: () => void;
}

export interface RestClientOptions {
  /** Sockets kept per host; default 100 (controllers fan out, the server's APF is the limit). */
  maxSockets?: number;
  /** Sent as User-Agent, so audit logs and APF flow schemas can tell us apart. */
  userAgent?: string;
  metrics?: RestClientMetrics;
  /** Waits before a retry; rejects when signal aborts. Injectable for tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read; default process.env. */
  env?: Record<string, string | undefined>;
  /** A monotonic clock in ms for `reachability` and the requests' latency; default performance.now. */
  now?: () => number;
  /** How an exec credential plugin is run (deadline, kill grace, where its stderr goes). */
  exec?: Pick<ExecPluginOptions, 'timeoutMs' | 'killGraceMs' | 'log'>;
}

interface Answer {
  status: number;
  text: string;
  retryAfter?: string | string[];
}

/**
 * How long one authentication serves later requests. client-node builds it anew on every call
 * (it decodes the kubeconfig's certificates and makes an https.Agent each time: ~3% of the
 * operator's CPU while it reconciled 1,000 new Echos); its token caches (exec plugins, token
 * files) decide when a credential changes, and a second is far below their refresh margins.
 */
const AUTH_REUSE_MS = 1_000;

/** `work`, or a rejection with the signal's reason as soon as it aborts (work goes on unobserved). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** A watch's response headers (after its tunnel and TLS handshake) must come within this. */
const STREAM_HEADERS_TIMEOUT_MS = 30_000;
const TCP_KEEPALIVE_MS = 30_000;

/**
 * A response body as a string, decoded chunk by chunk (LIST pages are read item by item instead:
 * listdecode.ts). Not Buffer.concat: a large malloc'd Buffer per answer left the heap of the C
 * allocator fragmented (measured by the memory benchmark when LIST pages went through here: ~20 MB
 * more RSS after the initial LIST of 10,000 Echos and 10,000 Jobs); strings live in V8's heap,
 * which the garbage collector compacts.
 */
function readText(res: IncomingMessage): Promise<string> {
  // Listeners, not `for await`: an async iterator per response cost ~5% of a request's CPU.
  return new Promise((resolve, reject) => {
    res.setEncoding('utf8');
    let text = '';
    res.on('data', (chunk: string) => (text += chunk));
    res.once('end', () => resolve(text));
    res.once('error', reject);
    res.once('close', () => {
      if (!res.complete) reject(new Error('the connection closed before the response was complete'));
    });
  });
}

const ok = (status: number | undefined): boolean => status !== undefined && status >= 200 && status < 300;

/**
 * PEM certificates and keys as strings: https.Agent keys its socket pool by the TLS options,
 * twice per request, and a Buffer in there is decoded to a string each time (~5 KB per request
 * for a kubeconfig's CA, certificate and key). A string goes in as it is.
 */
export function pemAsStrings(options: RequestOptions): RequestOptions {
  for (const k of ['ca', 'cert', 'key'] as const) {
    const v = options[k];
    if (Buffer.isBuffer(v) && v.subarray(0, 11).toString('latin1') === '-----BEGIN ') options[k] = v.toString('latin1');
  }
  return options;
}

export class RestClient {
  /** The API server's URL as messages and logs show it: a password in it is redacted (redact.ts). */
  readonly server: string;
  private readonly url: URL;
  /** The server URL's own path (a server behind a path prefix), without its trailing slash. */
  private readonly basePath: string;
  private readonly agent: Agent;
  /**
   * Watches hold their socket for minutes: they get an agent of their own without a socket cap,
   * so that many watches (4 per watched namespace) can never starve requests of connections.
   */
  private readonly streamAgent: Agent;
  private readonly userAgent: string;
  /** The proxy every request and watch goes through (proxy.ts decides, as client-go does); none: direct. */
  readonly proxy: URL | undefined;
  /** Whether the API server answers at all (see reachability.ts). */
  readonly reachability: Reachability;
  private readonly metrics: RestClientMetrics;
  /** Monotonic ms, for the requests' latency and `reachability`. */
  private readonly now: () => number;
  /** The authentication in flight, shared by the requests that wait for it (see authenticate). */
  private auth: Promise<RequestOptions> | undefined;
  /** The last authentication's result, reused for AUTH_REUSE_MS. */
  private authenticated: { at: number; options: RequestOptions } | undefined;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The user's exec credential plugin, run by us (execcredential.ts) rather than by client-node. */
  private readonly exec: ExecCredentialPlugin | undefined;
  /** What client-node applies (TLS, tokens, token files, impersonation): the kubeconfig without the exec plugin. */
  private readonly kc: KubeConfig;
  /** What this client was made from, for withOwnConnections. */
  private readonly origin: { kc: KubeConfig; options: RestClientOptions };
  /** A client made by withOwnConnections authenticates through the one it was made from. */
  private credentialsFrom: RestClient | undefined;

  constructor(kc: KubeConfig, options: RestClientOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const user = kc.getCurrentUser();
    const exec = user?.exec as ExecConfig | undefined;
    this.kc = kc;
    this.origin = { kc, options };
    if (user && exec) {
      this.exec = new ExecCredentialPlugin(exec, {
        ...options.exec,
        cluster: {
          server: cluster.server,
          'certificate-authority-data': cluster.caData,
          'insecure-skip-tls-verify': cluster.skipTLSVerify || undefined,
          'tls-server-name': cluster.tlsServerName,
          'proxy-url': cluster.proxyUrl,
        },
      });
      this.kc = new KubeConfig();
      this.kc.loadFromClusterAndUser(cluster, { ...user, exec: undefined });
    }
    const server = cluster.server.replace(/\/+$/, '');
    this.url = new URL(server);
    this.server = redactUrl(server);
    this.basePath = this.url.pathname.replace(/\/$/, '');
    this.userAgent = options.userAgent ?? 'echoperator';
    this.metrics = options.metrics ?? nopRestClientMetrics;
    this.sleep = options.sleep ?? abortableSleep;
    this.proxy = proxyFor(this.url, cluster.proxyUrl, options.env ?? process.env);
    this.now = options.now ?? (() => performance.now());
    this.reachability = new Reachability(this.now);
    const agent = (o: AgentOptions): Agent => (this.proxy ? new ProxyAgent(this.proxy, o) : new Agent(o));
    this.agent = agent({ keepAlive: true, maxSockets: options.maxSockets ?? 100, maxFreeSockets: 32 });
    this.streamAgent = agent({ keepAlive: false, maxSockets: Infinity });
  }

  /**
   * A client to the same server, through the same proxy, with the same credentials (this client
   * authenticates for it: one exec plugin, one cached authentication) but with connections of its
   * own: a pool of `maxSockets` that no other client uses, and its own `reachability`. For
   * requests that must never wait for a socket behind this client's, nor hold one of its
   * sockets while they wait (a request that hangs holds at most one socket of the new pool).
   * Answers are counted in this client's metrics unless others are given. close() closes only
   * the new client's sockets.
   */
  withOwnConnections(options: Pick<RestClientOptions, 'maxSockets' | 'userAgent' | 'metrics'>): RestClient {
    const child = new RestClient(this.origin.kc, { ...this.origin.options, exec: undefined, ...options });
    child.credentialsFrom = this.credentialsFrom ?? this;
    return child;
  }

  /** Sends one request and parses the JSON answer. */
  request<T = unknown>(method: string, path: string, opts: RequestOpts = {}): Promise<T> {
    return this.exchange<T>(method, path, opts, readText);
  }

  /**
   * GETs a list and decodes it as it arrives (listdecode.ts): `onItem` gets each element of
   * `items`, parsed alone, in order, while the rest of the page is still being read; the answer
   * resolves with everything else (metadata with resourceVersion and continue) and `items: []`.
   * Same deadline, retries and errors as request(); if it rejects, items already handed out
   * belong to a failed page (a non-2xx answer hands out none).
   */
  list<L = unknown>(path: string, opts: Omit<RequestOpts, 'body' | 'contentType'>, onItem: (item: unknown) => void): Promise<L> {
    return this.exchange<L>('GET', path, opts, (res) => (ok(res.statusCode) ? readList(res, onItem) : readText(res)));
  }

  private async exchange<T>(method: string, path: string, opts: RequestOpts, read: (res: IncomingMessage) => Promise<string>): Promise<T> {
    // Not AbortSignal.any: on Node 20 it leaves an entry on the caller's long-lived signal per
    // request, a leak of one entry per API call. RequestAbort lets go of the caller's in finally.
    const abort = new RequestAbort(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, opts.signal);
    const startedAt = this.now();
    try {
      for (let retries = 0; ; retries++) {
        opts.onSend?.();
        const { status, text, retryAfter } = await this.counted(method, this.send(method, path, opts, abort, this.agent, read));
        if (status >= 200 && status < 300) return (text ? JSON.parse(text) : undefined) as T;
        const err = toApiError(method, path, status, text);
        const waitMs = retries < MAX_RETRIES ? retryAfterMs(status, retryAfter, err.retryAfterSeconds) : undefined;
        if (waitMs === undefined) throw err;
        this.metrics.retried(String(status), method);
        // Cut short by the deadline or the caller: then the server's answer is the error.
        await this.sleep(waitMs, abort.signal).catch(() => {
          throw err;
        });
      }
    } finally {
      abort.dispose();
      this.metrics.requestLatency?.(method, (this.now() - startedAt) / 1000);
    }
  }

  /**
   * Opens a streaming GET (a watch) and hands each newline-delimited line to onLine. Resolves when
   * the server ends the stream; rejects on transport errors; aborting the signal ends it quietly.
   */
  async stream(path: string, query: Query, signal: AbortSignal, onLine: (line: string) => void): Promise<void> {
    // The caller's signal, plus a deadline on the response headers (the tunnel and TLS included),
    // as client-go's dial and TLS handshake timeouts bound a watch's start.
    const abort = new RequestAbort(STREAM_HEADERS_TIMEOUT_MS, signal);
    try {
      await this.streamUntil(path, query, abort, onLine);
    } finally {
      abort.dispose();
    }
  }

  private async streamUntil(path: string, query: Query, abort: RequestAbort, onLine: (line: string) => void): Promise<void> {
    const { status, text } = await this.counted(
      'GET',
      this.send('GET', path, { query }, abort, this.streamAgent, async (res) => {
        abort.stopDeadline();
        if ((res.statusCode ?? 0) >= 300) return readText(res);
        let pending = '';
        res.setEncoding('utf8');
        try {
          for await (const chunk of res) {
            this.reachability.answered();
            pending += chunk as string;
            let nl: number;
            while ((nl = pending.indexOf('\n')) >= 0) {
              const line = pending.slice(0, nl);
              pending = pending.slice(nl + 1);
              if (line.trim()) onLine(line);
            }
          }
        } catch (err) {
          if (abort.aborted) return '';
          throw err;
        }
        if (pending.trim()) onLine(pending);
        return '';
      }),
    );
    if (status >= 300) throw toApiError('GET', path, status, text);
  }

  /**
   * TLS material and auth headers: client-node's (certificates, tokens, token files) and the exec
   * credential plugin's (execcredential.ts: killed at its own deadline), bounded by `signal`: a
   * plugin that never answers fails the request at the request's deadline, as client-go's
   * request context does, instead of blocking it (and a standby's acquire loop). Concurrent
   * requests share one authentication, so a hung plugin is one process, not one per request. A
   * result serves the requests of the next AUTH_REUSE_MS too. Resolves with a copy the caller
   * may change.
   */
  private async authenticate(method: string, path: string, abort: RequestAbort): Promise<RequestOptions> {
    if (this.credentialsFrom) return this.credentialsFrom.authenticate(method, path, abort);
    const now = Date.now();
    const reuse = this.authenticated;
    if (reuse && now - reuse.at < AUTH_REUSE_MS)
      return { ...reuse.options, headers: { ...(reuse.options.headers as Record<string, string>) } };
    if (!this.auth) {
      const entry = this.authenticateOnce();
      this.auth = entry;
      const clear = (): void => {
        if (this.auth === entry) this.auth = undefined;
      };
      entry.then((o) => {
        clear();
        this.authenticated = { at: Date.now(), options: o };
      }, clear);
    }
    try {
      const options = await untilAborted(this.auth, abort.signal);
      return { ...options, headers: { ...(options.headers as Record<string, string>) } };
    } catch (err) {
      throw this.transportError(method, path, err, abort);
    }
  }

  private async authenticateOnce(): Promise<RequestOptions> {
    const options: RequestOptions = { headers: {} };
    await this.kc.applyToHTTPSOptions(options);
    if (this.exec) {
      const cred = await this.exec.credential();
      const headers = options.headers as Record<string, string>;
      // A token in the kubeconfig itself wins, as client-node applies it.
      if (cred.token && !headers.Authorization) headers.Authorization = `Bearer ${cred.token}`;
      if (cred.clientCertificateData) options.cert = cred.clientCertificateData;
      if (cred.clientKeyData) options.key = cred.clientKeyData;
    }
    return pemAsStrings(options);
  }

  /**
   * The server refused our credentials (401): an exec plugin's token is asked for anew, as
   * client-go's exec authenticator does, instead of being reused until its expiry.
   */
  private refused(headers: Record<string, string>): void {
    if (this.credentialsFrom) return this.credentialsFrom.refused(headers);
    if (!this.exec) return;
    this.exec.invalidate(headers.Authorization?.replace(/^Bearer /, ''));
    this.authenticated = undefined;
  }

  /** Counts the answer's code, or '<error>' when none came (client-go's label for that). */
  private async counted(method: string, sent: Promise<Answer>): Promise<Answer> {
    try {
      const answer = await sent;
      this.metrics.requestDone(String(answer.status), method);
      return answer;
    } catch (err) {
      this.metrics.requestDone('<error>', method);
      throw err;
    }
  }

  private transportError(method: string, path: string, err: unknown, abort: Stopped): ApiError {
    return transportError(method, path, err, abort, this.proxy);
  }

  /** Closes idle keep-alive sockets and stops a running credential plugin, so the process can exit. */
  close(): void {
    this.agent.destroy();
    this.streamAgent.destroy();
    this.exec?.stop();
  }

  private async send(
    method: string,
    path: string,
    opts: RequestOpts,
    abort: RequestAbort,
    agent: Agent,
    read: (res: IncomingMessage) => Promise<string>,
  ): Promise<Answer> {
    // Not a URL object per request: parsing one cost ~15 us of a ~150 us request.
    let target = this.basePath + path;
    let sep = '?';
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined) continue;
      target += `${sep}${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`;
      sep = '&';
    }
    const options: RequestOptions = { ...(await this.authenticate(method, path, abort)), method };
    const headers = options.headers as Record<string, string>;
    headers['Accept'] = 'application/json';
    headers['User-Agent'] = this.userAgent;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const isHttps = this.url.protocol === 'https:';
    // What the tunnel's dial (dial.ts) waits on, so that an abort names the proxy that did not answer.
    const dial: Dial | undefined = this.proxy ? { signal: abort.signal } : undefined;
    const reqOptions: RequestOptions & { [DIAL_OPTION]?: Dial } = {
      ...options,
      hostname: this.url.hostname.replace(/^\[|\]$/g, ''),
      port: this.url.port,
      path: target,
      // One agent for all requests: the TLS material is per cluster, so reusing sockets is safe.
      agent: isHttps ? agent : undefined,
      headers,
      ...(!isHttps && this.proxy && dial ? plainHttpThroughProxy(this.proxy, this.url, target, headers, dial) : {}),
      // Read by ProxyAgent.createConnection: the agent passes request options on to it.
      ...(dial ? { [DIAL_OPTION]: dial } : {}),
    };
    return await new Promise((resolve, reject) => {
      if (abort.aborted) return reject(this.transportError(method, path, abort.reason, abort));
      const reachability = this.reachability;
      reachability.started();
      let answered = false;
      let settled = false;
      const req = (isHttps ? httpsRequest : httpRequest)(reqOptions, (res) => {
        answered = true;
        reachability.answered();
        if (res.statusCode === 401) this.refused(headers);
        read(res).then(
          (text) => {
            if (settled) return;
            settled = true;
            reachability.ended();
            abort.onAbort(undefined);
            resolve({ status: res.statusCode ?? 0, text, retryAfter: res.headers['retry-after'] });
          },
          (err) => fail(err),
        );
      });
      // Not http.request's `signal` option: it wires the signal through addAbortSignal and an
      // end-of-stream watcher per request (~4% of RestClient's CPU per GET, measured). The
      // promise settles here, not on the request's 'error': a request still waiting for a socket
      // (the pool is full, or its tunnel is being dialled) emits nothing until it gets one.
      // Destroyed without an error: the reason settles the promise (fail), and an error given to
      // destroy() would be emitted on the socket too, where nothing listens once the response is
      // complete (a watch that ends right after the ERROR event that aborted it crashed so).
      const onAbort = (): void => {
        fail(dial?.waitingOn ? new ProxyStalled(dial.waitingOn, abort) : abort.reason);
        req.destroy();
      };
      const fail = (err: unknown): void => {
        if (settled) return;
        settled = true;
        reachability.ended();
        abort.onAbort(undefined);
        const error = this.transportError(method, path, err, abort);
        // No response at all, and not because the caller stopped asking: the server did not answer.
        if (!answered && !(abort.aborted && !(abort.reason instanceof DeadlineExceeded))) reachability.failed(error.message);
        reject(error);
      };
      abort.onAbort(onAbort);
      // client-go's dialer: TCP keep-alive probes after 30 s idle, so a watch whose peer vanished
      // (a NAT or load balancer dropped the flow) ends in an error instead of waiting forever.
      if (agent === this.streamAgent) req.on('socket', (socket) => socket.setKeepAlive(true, TCP_KEEPALIVE_MS));
      req.on('error', fail);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }
}

/**
 * An http:// server behind a proxy (rare: an API server without TLS): to an http:// proxy, the
 * request itself with the absolute URL as its target, as Go's transport sends it; to an https://
 * or SOCKS5 proxy, through a tunnel.
 */
function plainHttpThroughProxy(proxy: URL, server: URL, pathAndQuery: string, headers: Record<string, string>, dial: Dial): RequestOptions {
  if (proxy.protocol !== 'http:') {
    const port = Number(server.port || 80);
    return {
      createConnection: (_opts, cb) => {
        tunnel(proxy, { host: server.hostname.replace(/^\[|\]$/g, ''), port }, undefined, dial).then(
          (socket) => cb(null, socket),
          (err: Error) => cb(err, undefined as never),
        );
        return undefined;
      },
    };
  }
  const auth = basicProxyAuth(proxy);
  if (auth) headers['Proxy-Authorization'] = auth;
  headers['Host'] = server.host;
  return { hostname: proxy.hostname.replace(/^\[|\]$/g, ''), port: Number(proxy.port || 80), path: server.origin + pathAndQuery };
}

/**
 * A request that got no answer, as an ApiError with code 0. `proxy`: named when the message does
 * not name it already, so a log line says which way the request went.
 */
function transportError(method: string, path: string, err: unknown, stopped: Stopped, proxy?: URL): ApiError {
  const reason = stopped.reason as { name?: string; message?: string } | undefined;
  let why =
    !(err instanceof ProxyStalled) && stopped.aborted && reason?.name === 'TimeoutError'
      ? (reason.message ?? 'timed out')
      : ((err as Error)?.message ?? String(err));
  if (proxy && !why.includes(proxy.host)) why += ` (through proxy ${proxy.host})`;
  return new ApiError(0, 'TransportError', `${method} ${path}: ${why}`, undefined, { cause: err });
}

function toApiError(method: string, path: string, status: number, text: string): ApiError {
  let body: StatusBody | undefined;
  try {
    body = JSON.parse(text) as StatusBody;
  } catch {
    body = undefined;
  }
  const message = body?.message ?? (text.trim().slice(0, 300) || `HTTP ${status}`);
  return new ApiError(status, body?.reason ?? `HTTP${status}`, `${method} ${path}: ${message}`, body);
}
