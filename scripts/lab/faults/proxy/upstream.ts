/**
 * How the fault proxy reaches the API server: over HTTPS as the admin kubeconfig's user (client
 * certificate or token, the CA verified), impersonating one replica's identity, through one
 * keep-alive pool without a socket cap (a replica's watches hold their sockets for minutes, and
 * must never starve its requests).
 *
 * Guarantees: whatever Authorization or Impersonate-* headers the client sent are dropped (a
 * replica cannot step out of its identity); Impersonate-User, one Impersonate-Group per group and
 * Impersonate-Extra-Replica are set, so RBAC is the impersonated user's and the audit log's
 * impersonatedUser.extra.replica names the replica; User-Agent and the other end-to-end headers
 * pass unchanged.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { ClientRequest } from 'node:http';
import { loadKubeConfig, pemAsStrings } from '../../../../src/kube/index.js';

export interface Identity {
  user: string;
  groups: string[];
  replica: string;
}

export interface Upstream {
  /** Starts the request `req` asks for (method, path, headers; the caller sends the body). */
  request(req: IncomingMessage, opts: { watch: boolean }): ClientRequest;
  close(): void;
}

/** Headers that describe the hop, not the request, and those the proxy sets itself. */
const HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const isOwnedByProxy = (name: string): boolean => HOP.has(name) || name === 'authorization' || name.startsWith('impersonate-');

/** The headers of a response, without the hop's (the proxy's own connection frames the body). */
export function endToEndHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
}

export async function impersonatingUpstream(adminKubeconfig: string, identity: Identity): Promise<Upstream> {
  const kc = loadKubeConfig(adminKubeconfig);
  const server = new URL(kc.getCurrentCluster()!.server);
  const basePath = server.pathname.replace(/\/$/, '');
  const admin: RequestOptions = { headers: {} };
  await kc.applyToHTTPSOptions(admin);
  pemAsStrings(admin);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, ca: admin.ca, cert: admin.cert, key: admin.key });
  const adminHeaders = admin.headers as Record<string, string>;
  const credential = adminHeaders.Authorization ?? adminHeaders.authorization;
  return {
    request: (req, { watch }) => {
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !isOwnedByProxy(k)) headers[k] = v;
      if (watch) {
        // The watch faults act on JSON lines: a client that asked for protobuf (controller-runtime
        // does for built-in kinds) gets JSON, which client-go decodes by the response's Content-Type.
        if (/protobuf/.test(String(headers.accept ?? ''))) headers.accept = 'application/json';
        delete headers['accept-encoding'];
      }
      if (credential) headers.authorization = credential;
      headers['impersonate-user'] = identity.user;
      if (identity.groups.length) headers['impersonate-group'] = identity.groups;
      headers['impersonate-extra-replica'] = identity.replica;
      return httpsRequest({
        protocol: 'https:',
        hostname: server.hostname,
        port: server.port,
        method: req.method,
        path: basePath + (req.url ?? '/'),
        headers,
        agent,
      });
    },
    close: () => agent.destroy(),
  };
}
