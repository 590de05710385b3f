/**
 * Talking to the operator's own HTTP(S) endpoints (probes, metrics) from tests: one request helper
 * for both schemes, the certificate a TLS port presents, and reading a sample out of the
 * Prometheus text format.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:tls';

export interface Reply {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

export interface GetOptions {
  /** HTTPS (the test certificates are self-signed: what is served is checked by fingerprint instead). */
  tls?: boolean;
  method?: string;
  headers?: Record<string, string>;
  /** A connection of its own instead of the global agent's pool. */
  fresh?: boolean;
  /** Fails the request when no answer came in time; default none. */
  timeoutMs?: number;
}

/** One request to 127.0.0.1:port; resolves with whatever answer came, rejects when none did. */
export function get(port: number, path: string, options: GetOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const base = { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {} };
    const own = options.fresh ? { agent: false as const } : {};
    const onResponse = (res: import('node:http').IncomingMessage): void => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    };
    const req = options.tls
      ? httpsRequest({ ...base, ...own, rejectUnauthorized: false }, onResponse)
      : httpRequest({ ...base, ...own }, onResponse);
    if (options.timeoutMs !== undefined) req.setTimeout(options.timeoutMs, () => req.destroy(new Error('no answer')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The plain-HTTP /metrics text of the server on `port`, over a connection of its own: a pooled
 * keep-alive connection that the server closes as idle (Node's 5 s) fails a request sent on it at
 * that moment ("other side closed"), which a loaded machine makes likely.
 */
export async function scrape(port: number): Promise<string> {
  const reply = await get(port, '/metrics', { fresh: true });
  if (reply.status !== 200) throw new Error(`/metrics answered ${reply.status}: ${reply.body}`);
  return reply.body;
}

/** SHA-256 fingerprint of the certificate the server presents to a new connection. */
export function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.on('error', reject);
  });
}

/** Sum of a metric's samples (Prometheus text format) whose labels include every given pair. */
export function metricSample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
