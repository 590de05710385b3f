/**
 * Transport: what one request costs the client and kube-apiserver over HTTP/1.1 (Node's https
 * keep-alive agent, what RestClient uses) and over HTTP/2 (node:http2, one multiplexed session:
 * client-go's default), and what RestClient adds over the bare https call. Same requests, same
 * concurrency, alternating order per round, in this bench process (no operator runs): a GET of a
 * Namespace and a dry-run POST of a ConfigMap (a body, admission, no storage).
 *
 * This is the HTTP/2 lever of issue 16 measured on its own: the operator's work per Echo is
 * two or three such requests, so the per-request CPU decides whether a transport is worth it.
 * undici (the HTTP/1.1 client inside Node's own fetch, a pool of keep-alive connections) is the
 * next lever issue 22 names: it is a devDependency for this row only until it earns its place.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import * as esbuild from 'esbuild';
import { Pool } from 'undici';
import { pemAsStrings, type RestClient } from '../../../src/kube/rest.js';
import { BUNDLE_OPTIONS, ROOT } from '../../ship/build.js';
import { log, median, minMax, pool, processCpuSeconds, table, type BenchEnv } from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';

export interface TransportOptions {
  /** Requests per measured run (after a warm-up of a tenth as many). */
  requests: number;
  rounds: number;
  concurrency: number;
}

type Send = (method: 'GET' | 'POST', path: string, body?: string) => Promise<unknown>;

interface Transport {
  send: Send;
  close(): void;
}

interface Contender {
  name: string;
  open(): Transport;
}

interface Cost {
  wallUs: number;
  clientUs: number;
  apiserverUs: number;
}

const GET_PATH = '/api/v1/namespaces/default';
const POST_PATH = '/api/v1/namespaces/default/configmaps?dryRun=All';

let serial = 0;
function configMap(): string {
  const name = `bench-transport-${serial++}`;
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'bench' } },
    data: { message: 'x'.repeat(800) },
  });
}

/** The kubeconfig's TLS material and headers, PEM as strings (as RestClient hands them over). */
async function credentials(env: BenchEnv): Promise<{ tls: ConnectionOptions; headers: Record<string, string> }> {
  const o: RequestOptions = { headers: {} };
  await env.kc.applyToHTTPSOptions(o);
  pemAsStrings(o);
  return { tls: { ca: o.ca, cert: o.cert, key: o.key }, headers: o.headers as Record<string, string> };
}

function http1(server: URL, tls: ConnectionOptions, headers: Record<string, string>): Transport {
  const agent = new Agent({ keepAlive: true, maxSockets: 100, ...tls });
  return {
    send: (method, path, body) =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          {
            hostname: server.hostname,
            port: server.port,
            path,
            method,
            agent,
            headers: { ...headers, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => (res.statusCode! < 300 ? resolve(JSON.parse(text)) : reject(new Error(`${res.statusCode}: ${text}`))));
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}

function http2(server: URL, tls: ConnectionOptions, headers: Record<string, string>): Transport {
  const session: ClientHttp2Session = http2Connect(server.origin, tls);
  return {
    send: (method, path, body) =>
      new Promise((resolve, reject) => {
        const stream = session.request({
          ...headers,
          ':method': method,
          ':path': path,
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/json' } : {}),
        });
        let status = 0;
        let text = '';
        stream.setEncoding('utf8');
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (d: string) => (text += d));
        stream.on('end', () => (status < 300 ? resolve(JSON.parse(text)) : reject(new Error(`${status}: ${text}`))));
        stream.on('error', reject);
        stream.end(body);
      }),
    close: () => session.close(),
  };
}

function undici(server: URL, tls: ConnectionOptions, headers: Record<string, string>): Transport {
  const pool = new Pool(server.origin, { connections: 100, connect: tls });
  return {
    send: async (method, path, body) => {
      const res = await pool.request({
        path,
        method,
        headers: { ...headers, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
        body,
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${res.statusCode}: ${text}`);
      return JSON.parse(text) as unknown;
    },
    close: () => void pool.destroy(),
  };
}

/**
 * RestClient as the operator runs it: bundled by esbuild (minified, as scripts/ship/build.ts does), not
 * through tsx, whose keepNames wrappers would add their own cost to every closure it creates.
 */
async function bundledRestClient(): Promise<typeof RestClient> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-transport-'));
  const outfile = join(dir, 'rest.cjs');
  try {
    await esbuild.build({
      entryPoints: [join(ROOT, 'src/kube/rest.ts')],
      outfile,
      ...BUNDLE_OPTIONS,
      plugins: [...BUNDLE_OPTIONS.plugins],
    });
    return (createRequire(import.meta.url)(outfile) as { RestClient: typeof RestClient }).RestClient;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function restClient(env: BenchEnv, Client: typeof RestClient): Transport {
  const rest = new Client(env.kc, { userAgent: 'echoperator-bench-transport' });
  return {
    send: (method, path, body) => {
      const [p, q] = path.split('?');
      const query = q ? Object.fromEntries(new URLSearchParams(q)) : undefined;
      return rest.request(method, p!, { body, query });
    },
    close: () => rest.close(),
  };
}

async function measure(env: BenchEnv, t: Transport, method: 'GET' | 'POST', opts: TransportOptions): Promise<Cost> {
  const path = method === 'GET' ? GET_PATH : POST_PATH;
  const one = (): Promise<unknown> => t.send(method, path, method === 'POST' ? configMap() : undefined);
  const run = (n: number): Promise<void> =>
    pool(Array(n).keys(), opts.concurrency, async () => {
      await one();
    });
  await run(Math.ceil(opts.requests / 10));
  const pid = env.controlPlanePids['kube-apiserver'];
  const api0 = pid ? (processCpuSeconds(pid) ?? NaN) : NaN;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(opts.requests);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const api = pid ? (processCpuSeconds(pid) ?? NaN) - api0 : NaN;
  return {
    wallUs: (wall * 1000) / opts.requests,
    clientUs: (cpu.user + cpu.system) / opts.requests,
    apiserverUs: (api * 1e6) / opts.requests,
  };
}

export async function transport(env: BenchEnv, opts: TransportOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const server = new URL(env.kc.getCurrentCluster()!.server);
  const { tls, headers } = await credentials(env);
  const Client = await bundledRestClient();
  const rows: string[][] = [];
  for (const method of ['GET', 'POST'] as const) {
    const make: Contender[] = [
      { name: 'HTTP/1.1, https.Agent (keep-alive)', open: () => http1(server, tls, headers) },
      { name: 'HTTP/2, one node:http2 session', open: () => http2(server, tls, headers) },
      { name: 'HTTP/1.1, undici Pool (keep-alive)', open: () => undici(server, tls, headers) },
      { name: 'RestClient (ours, bundled: HTTP/1.1 + deadline, retries)', open: () => restClient(env, Client) },
    ];
    const costs: Cost[][] = make.map(() => []);
    for (let r = 0; r < opts.rounds; r++) {
      // Rotate who goes first: the apiserver warms up and the machine's load drifts within a round.
      for (let k = 0; k < make.length; k++) {
        const i = (k + r) % make.length;
        const t = make[i]!.open();
        try {
          costs[i]!.push(await measure(env, t, method, opts));
        } finally {
          t.close();
        }
      }
    }
    make.forEach(({ name }, i) => {
      const c = costs[i]!;
      const us = (xs: number[]): string => `**${median(xs).toFixed(0)} us** ${minMax(xs, (x) => x.toFixed(0))}`.trim();
      rows.push([
        method === 'GET' ? 'GET a Namespace' : 'POST a ConfigMap, dry run',
        name,
        us(c.map((x) => x.clientUs)),
        us(c.map((x) => x.apiserverUs)),
        us(c.map((x) => x.wallUs)),
      ]);
      log(
        `transport ${method} ${name}: client ${median(c.map((x) => x.clientUs)).toFixed(0)} us, kube-apiserver ${median(c.map((x) => x.apiserverUs)).toFixed(0)} us per request`,
      );
    });
  }
  return [
    {
      id: 'transport',
      markdown: `## Transport: HTTP/1.1, HTTP/2 or undici to the API server

${provenance(env, m, `${opts.rounds} rounds of ${opts.requests} requests per transport, ${opts.concurrency} in flight, the order rotated per round. `, load)}

CPU per request, medians over the rounds (min .. max): the client's (this process, process.cpuUsage) and
kube-apiserver's (/proc/<pid>/stat) over the same requests, and wall time per request. Credentials: the admin
kubeconfig's client certificate.

${table(['request', 'transport', 'client CPU / request', 'kube-apiserver CPU / request', 'wall / request'], rows)}`,
    },
  ];
}
