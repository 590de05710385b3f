/**
 * A flood of random tokens (issue 44, item 2) at the operator's secure metrics endpoint, while a
 * scraper with a valid token keeps scraping.
 *
 * The bench makes a ServiceAccount bound to a ClusterRole that may `get` /metrics, and a token
 * for it. Each build runs as a fresh operator (secure metrics, its self-signed certificate); once
 * the valid token is answered 200, FLOOD_CONNECTIONS keep-alive connections, from SOURCES
 * loopback addresses (127.0.0.2 and on), each send scrapes with a new random bearer token one
 * after another for FLOOD_MS; the scraper scrapes with the valid token every SCRAPE_EVERY_MS from
 * 127.0.0.1, during the flood and AFTER_SCRAPES times after it. Each random token is new, and a
 * 401 for it can only come from a TokenReview, so the 401s are the reviews the flood caused.
 * BASELINE_CMD runs the same against another build, as a row of its own.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:https';
import { baseline, ours, type Contestant } from './contestants.js';
import { createNamespace, deleteNamespace, log, now, onCleanup, sleep, startOperator, table, waitReady, type BenchEnv } from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';

export interface TokensOptions {
  /** Length of the flood. */
  floodMs: number;
}

const SOURCES = 4;
const FLOOD_CONNECTIONS = 8;
const SCRAPE_EVERY_MS = 1_000;
const AFTER_SCRAPES = 10;
const READY_WITHIN_MS = 60_000;

interface Outcome {
  build: string;
  command: string;
  /** Flood answers by status. */
  flood: Map<number, number>;
  /** The scraper's answers during the flood and after it, by status. */
  during: Map<number, number>;
  after: Map<number, number>;
}

export async function tokens(env: BenchEnv, opts: TokensOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const ns = await createNamespace(env, 'bench-tokens');
  const role = `${ns}-metrics-reader`;
  const undo = onCleanup(() => removeReader(env, role));
  const outcomes: Outcome[] = [];
  try {
    const token = await scraperToken(env, ns, role);
    const builds = [ours(env), baseline(env)].filter((c): c is Contestant => c !== undefined);
    for (const build of builds) outcomes.push(await runBuild(build, ns, token, opts));
  } finally {
    await removeReader(env, role);
    undo();
    await deleteNamespace(env, ns, { wait: false });
  }
  return [{ id: 'tokens', markdown: report(env, m, load, opts, outcomes) }];
}

/** A ServiceAccount in `ns` that may get /metrics (ClusterRole and binding named `role`), and a token for it. */
async function scraperToken(env: BenchEnv, ns: string, role: string): Promise<string> {
  await env.rest.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: 'scraper' } } });
  await env.rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    body: { metadata: { name: role }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
  });
  await env.rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      metadata: { name: role },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }],
    },
  });
  const tr = await env.rest.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/scraper/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return tr.status.token;
}

async function removeReader(env: BenchEnv, role: string): Promise<void> {
  for (const kind of ['clusterrolebindings', 'clusterroles']) {
    await env.rest.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${role}`).catch(() => undefined);
  }
}

async function runBuild(build: Contestant, ns: string, token: string, opts: TokensOptions): Promise<Outcome> {
  const op = await startOperator(build.env, { WATCH_NAMESPACES: ns, NAMESPACE: ns, METRICS_INSECURE_PLAIN_HTTP: 'false' });
  const scraper = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  try {
    await waitReady(op);
    const deadline = now() + READY_WITHIN_MS;
    while ((await scrape(op.metricsPort, token, scraper)) !== 200) {
      if (now() > deadline) throw new Error(`${build.name}: the valid token was not answered 200 within ${READY_WITHIN_MS} ms`);
      await sleep(500);
    }
    const flood = new Map<number, number>();
    const during = new Map<number, number>();
    const ends = now() + opts.floodMs;
    const flooders = Array.from({ length: FLOOD_CONNECTIONS }, async (_, i) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false, localAddress: `127.0.0.${2 + (i % SOURCES)}` });
      try {
        while (now() < ends) count(flood, await scrape(op.metricsPort, randomBytes(24).toString('base64url'), agent));
      } finally {
        agent.destroy();
      }
    });
    const scraping = (async () => {
      while (now() < ends) {
        count(during, await scrape(op.metricsPort, token, scraper));
        await sleep(SCRAPE_EVERY_MS);
      }
    })();
    await Promise.all([...flooders, scraping]);
    const afterwards = new Map<number, number>();
    for (let i = 0; i < AFTER_SCRAPES; i++) {
      count(afterwards, await scrape(op.metricsPort, token, scraper));
      await sleep(SCRAPE_EVERY_MS);
    }
    const outcome = { build: build.name, command: build.env.operator.describe, flood, during, after: afterwards };
    log(`  ${build.name}: flood ${statuses(flood)}; valid token during ${statuses(during)}, after ${statuses(afterwards)}`);
    return outcome;
  } finally {
    scraper.destroy();
    await op.stop('SIGTERM');
  }
}

/** One GET /metrics with `token`; its status, 0 when it failed or took over 10 s (Prometheus' default timeout). */
function scrape(port: number, token: string, agent: Agent): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/metrics', headers: { authorization: `Bearer ${token}` }, agent, timeout: 10_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end();
  });
}

function count(tally: Map<number, number>, status: number): void {
  tally.set(status, (tally.get(status) ?? 0) + 1);
}

function statuses(tally: Map<number, number>): string {
  return [...tally.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n} × ${status || 'no answer'}`)
    .join(', ');
}

function report(env: BenchEnv, m: ReturnType<typeof machine>, load: string, opts: TokensOptions, outcomes: Outcome[]): string {
  const seconds = opts.floodMs / 1000;
  const rows = outcomes.map((o) => {
    const reviews = (o.flood.get(401) ?? 0) + (o.flood.get(403) ?? 0);
    return [o.build, statuses(o.flood), `${reviews} (${(reviews / seconds).toFixed(1)}/s)`, statuses(o.during), statuses(o.after)];
  });
  return `## Tokens: a flood of random tokens at the metrics endpoint

${provenance(env, m, '', load)}

${outcomes.map((o) => `- ${o.build}: ${o.command}`).join('\n')}

Each build runs as a fresh operator with secure metrics. For ${seconds} s, ${FLOOD_CONNECTIONS} keep-alive HTTPS connections from ${SOURCES} loopback addresses (127.0.0.2 to 127.0.0.${1 + SOURCES}) scrape /metrics one request after another, each with a new random bearer token; a scraper whose ServiceAccount is bound to a ClusterRole that may get /metrics scrapes every ${SCRAPE_EVERY_MS / 1000} s from 127.0.0.1 during the flood and ${AFTER_SCRAPES} times after it. A 401 for a token never seen can only come from a TokenReview: the 401s are the reviews the flood made the operator send. Goals (issue 44): the valid scrape gets 200 throughout, and the reviews stay under the limit (src/observability/reviewrate.ts: 5/s overall with a burst of 10, 1/s with a burst of 5 per address).

${table(['build', 'flood answers', 'TokenReviews the flood caused', 'valid token during the flood', 'valid token after it'], rows)}`;
}
