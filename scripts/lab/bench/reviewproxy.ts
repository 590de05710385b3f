/**
 * A fault-injecting HTTPS proxy in front of the API server, for the scrapes benchmark: it holds
 * every TokenReview and SubjectAccessReview POST without answering (an API server whose reviews
 * hang) and passes everything else at once, and it timestamps what passes.
 *
 * The operator reaches it with a kubeconfig of its own (HTTPS, so the operator's requests take
 * its keep-alive socket pool exactly as against a real API server; a self-signed certificate it
 * does not verify; a dummy token). The proxy forwards over HTTPS as the bench's admin, the
 * User-Agent kept, through a pool without a socket cap, so the proxy is never the bottleneck.
 *
 * Timestamps are wall-clock milliseconds (Date.now()), taken when the answer has been handed to
 * the operator's socket: a Lease's renewTime (written by the operator's elector just before its
 * PUT, by the same machine's clock) can then be compared with them.
 */
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, createServer, request as httpsRequest, type RequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { selfSignedCertificate } from '../../../src/observability/selfsigned.js';
import { onCleanup } from './cleanup.js';
import type { BenchEnv } from './env.js';

/** One request that passed, as the operator saw its answer. */
export interface Passed {
  method: string;
  path: string;
  status: number;
  /** Date.now() when the whole answer was written to the operator's socket. */
  answeredAt: number;
  /** The request body, for Lease writes only (small; the others are streamed). */
  body?: string;
}

export interface ReviewProxy {
  /** A kubeconfig whose server is this proxy. */
  kubeconfig: string;
  /** Reviews held now (their connections still open). */
  held(): number;
  /** Reviews that arrived, in all. */
  reviews(): number;
  /** Called for each request that passed. */
  onPassed(fn: ((p: Passed) => void) | undefined): void;
  close(): void;
}

const REVIEW = /^\/apis\/(authentication\.k8s\.io\/v1\/tokenreviews|authorization\.k8s\.io\/v1\/subjectaccessreviews)(\?|$)/;
const LEASE_WRITE = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/[^/]+\/leases\//;
/** Headers the proxy sets itself (or that describe the hop, not the request). */
const HOP = new Set(['host', 'authorization', 'connection', 'keep-alive', 'transfer-encoding', 'proxy-authorization']);

export async function reviewProxy(env: BenchEnv, dir: string): Promise<ReviewProxy> {
  const upstream = new URL(env.kc.getCurrentCluster()!.server);
  const admin: RequestOptions = { headers: {} };
  await env.kc.applyToHTTPSOptions(admin);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, ca: admin.ca, cert: admin.cert, key: admin.key });
  const adminAuth = (admin.headers as Record<string, string>).Authorization;
  let held = 0;
  let reviews = 0;
  let passed: ((p: Passed) => void) | undefined;
  const sockets = new Set<Socket>();

  const forward = (req: IncomingMessage, res: ServerResponse, body?: Buffer): void => {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    if (adminAuth) headers.authorization = adminAuth;
    const up = httpsRequest(
      { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
        res.once('finish', () =>
          passed?.({
            method: req.method ?? '',
            path: req.url ?? '',
            status: answer.statusCode ?? 0,
            answeredAt: Date.now(),
            body: body?.toString('utf8'),
          }),
        );
      },
    );
    up.on('error', () => res.destroy());
    res.once('close', () => up.destroy());
    if (body) up.end(body);
    else req.pipe(up);
  };

  const { cert, key } = selfSignedCertificate({ hosts: ['127.0.0.1'] });
  const server = createServer({ cert, key }, (req, res) => {
    const path = req.url ?? '';
    if (req.method === 'POST' && REVIEW.test(path)) {
      // Held: read and never answered, until the operator gives up on it (its review deadline).
      reviews++;
      held++;
      req.resume();
      res.once('close', () => held--);
      return;
    }
    if (req.method === 'PUT' && LEASE_WRITE.test(path)) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.once('end', () => forward(req, res, Buffer.concat(chunks)));
      return;
    }
    forward(req, res);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const kubeconfig = join(dir, 'review-proxy.kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'proxy', cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'bench', user: { token: 'the-proxy-authenticates-upstream' } }],
      contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'bench' } }],
      'current-context': 'proxy',
    }),
    { mode: 0o600 },
  );
  const close = (): void => {
    for (const s of sockets) s.destroy();
    server.close();
    agent.destroy();
  };
  onCleanup(close);
  return {
    kubeconfig,
    held: () => held,
    reviews: () => reviews,
    onPassed: (fn) => (passed = fn),
    close,
  };
}
