/**
 * Scrapes cannot starve the work (issue 32, item 4): a flood of scrapes with random bearer tokens
 * against an API server whose access reviews hang, and what it does to the operator's own
 * requests: a Lease renewal's PUT and a reconcile's first write, unloaded and under the flood.
 *
 * The operator (HA on, secure metrics) reaches the API server through reviewproxy.ts: TokenReview
 * and SubjectAccessReview POSTs are held unanswered, everything else passes at once and is
 * timestamped when its answer is handed to the operator's socket. What is measured, both from
 * the operator's side of its own requests (a request that waits for a socket in the operator's
 * pool is counted from before that wait, which is what the flood changed):
 *
 *  - Lease renewal: answer time minus the renewTime the elector wrote into the PUT just before
 *    sending it (same machine, same wall clock).
 *  - reconcile: a probe Echo is created (by the bench, directly, not through the proxy) once a
 *    second; the latency is from just before its POST to the answer of the operator's first
 *    request about it (the status write that claims the run; the reconciler's first API call).
 *    This includes the watch delivery and the queue, which the flood does not touch, so it is a
 *    conservative ratio for the request itself.
 *
 * The unloaded phase and the flood phase last equally long; the flood sends `scrapes` scrapes
 * at an even rate over it, each on a new TLS connection with a random token. Afterwards the
 * Lease must still name the same holder with unchanged leaseTransitions, and the process must
 * still run (a lost lease makes it exit). BASELINE_CMD runs the same against another build
 * (e.g. the commit before the change), as its own row.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { V1Lease } from '@kubernetes/client-node';
import { ECHOS } from '../../../src/api/echo.js';
import { LEASES, resourcePath } from '../../../src/kube/resources.js';
import { commandFromEnv } from '../../testbed/command-env.js';
import {
  createNamespace,
  customCommand,
  deleteNamespace,
  log,
  median,
  now,
  onCleanup,
  processCpuSeconds,
  quantile,
  ratio,
  sleep,
  startOperator,
  table,
  waitReady,
  withRetry,
  type BenchEnv,
  type OperatorCommand,
} from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { reviewProxy, type Passed } from './reviewproxy.js';
import { echoBody } from './workload.js';

export interface ScrapesOptions {
  /** Scrapes in the flood. */
  scrapes: number;
  /** Length of each phase (unloaded, flood). */
  phaseMs: number;
  /** A probe Echo every this many ms. */
  probeEveryMs: number;
}

const LEASE_NAME = 'echoperator-scrapes';
const IDENTITY = 'bench-scrapes';
/** The goal: each latency under the flood within this factor of its unloaded figure. */
const GOAL = 2;

type Phase = 'unloaded' | 'flood';

interface Run {
  build: string;
  lease: Record<Phase, number[]>;
  reconcile: Record<Phase, number[]>;
  /** Scrape answers by status (0: no answer). */
  answers: Map<number, number>;
  /** Median ms from a scrape's start to its answer. */
  scrapeMedianMs: number;
  reviewsAtServer: number;
  /** The operator's CPU (cores) in each phase. */
  cpu: Partial<Record<Phase, number>>;
  /** p99 event-loop delay of the bench's main thread (the proxy's) in each phase. */
  proxyLoopP99Ms: Partial<Record<Phase, number>>;
  /** The machine's 1-minute load average at the end of each phase. */
  load: Partial<Record<Phase, number>>;
  kept: { alive: boolean; sameHolder: boolean; transitionsBefore: number; transitionsAfter: number };
}

/**
 * The flood, in a worker thread of its own: its TLS handshakes and answers never hold up the
 * proxy's event loop (the main thread), which would delay the operator's requests for reasons of
 * the bench's own. Plain JavaScript (eval): a worker does not inherit tsx's loader.
 */
const FLOOD_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { get } = require('node:https');
const { randomBytes } = require('node:crypto');
const { port, scrapes, spreadMs } = workerData;
const answers = {};
const took = [];
const started = performance.now();
let left = scrapes;
const done = (status, t) => {
  answers[status] = (answers[status] || 0) + 1;
  took.push(performance.now() - t);
  if (--left === 0) parentPort.postMessage({ answers, took });
};
for (let i = 0; i < scrapes; i++) {
  setTimeout(() => {
    const t = performance.now();
    const token = randomBytes(24).toString('base64url');
    const req = get({ host: '127.0.0.1', port, path: '/metrics', headers: { authorization: 'Bearer ' + token }, rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      res.once('end', () => done(res.statusCode || 0, t));
      res.once('error', () => done(0, t));
    });
    req.setTimeout(30000, () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', () => done(0, t));
  }, started + (i * spreadMs) / scrapes - performance.now());
}
`;

/** Fires `scrapes` scrapes with random tokens at an even rate over spreadMs; resolves with the answers by status (0: none). */
function flood(port: number, scrapes: number, spreadMs: number): Promise<{ answers: Record<string, number>; took: number[] }> {
  const worker = new Worker(FLOOD_WORKER, { eval: true, workerData: { port, scrapes, spreadMs } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: { answers: Record<string, number>; took: number[] }) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

async function readLease(env: BenchEnv, ns: string): Promise<V1Lease | undefined> {
  try {
    return await env.rest.request<V1Lease>('GET', resourcePath(LEASES, ns, LEASE_NAME));
  } catch {
    return undefined;
  }
}

async function measure(env: BenchEnv, command: OperatorCommand, build: string, o: ScrapesOptions): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-bench-scrapes-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const ns = await createNamespace(env, 'bench-scrapes');
  const proxy = await reviewProxy(env, dir);
  const run: Run = {
    build,
    lease: { unloaded: [], flood: [] },
    reconcile: { unloaded: [], flood: [] },
    answers: new Map(),
    scrapeMedianMs: NaN,
    reviewsAtServer: 0,
    cpu: {},
    proxyLoopP99Ms: {},
    load: {},
    kept: { alive: false, sameHolder: false, transitionsBefore: -1, transitionsAfter: -1 },
  };
  /** Wall-clock bounds of each phase (Lease renewals are sorted by their renewTime). */
  const bounds: Partial<Record<Phase, { from: number; to: number }>> = {};
  const phaseAt = (t: number): Phase | undefined =>
    (['unloaded', 'flood'] as const).find((p) => bounds[p] && t >= bounds[p].from && t < bounds[p].to);
  const probes = new Map<string, { createdAt: number; phase: Phase }>();
  proxy.onPassed((p: Passed) => {
    if (p.method === 'PUT' && p.body && p.status === 200 && p.path.includes(`/leases/${LEASE_NAME}`)) {
      const renewTime = (JSON.parse(p.body) as V1Lease).spec?.renewTime as unknown as string | undefined;
      const at = renewTime ? Date.parse(renewTime) : NaN;
      const phase = phaseAt(at);
      if (phase) run.lease[phase].push(p.answeredAt - at);
      return;
    }
    const m = /\/echos\/(probe-\d+)/.exec(p.path);
    const probe = m ? probes.get(m[1]!) : undefined;
    if (probe && m) {
      probes.delete(m[1]!); // only the first request about it
      run.reconcile[probe.phase].push(p.answeredAt - probe.createdAt);
    }
  });

  const op = await startOperator(
    { ...env, operator: command },
    {
      KUBECONFIG: proxy.kubeconfig,
      WATCH_NAMESPACES: ns,
      NAMESPACE: ns,
      HA_ENABLED: 'true',
      HA_NODE_ID: IDENTITY,
      HA_LEASE_LOCK_NAME: LEASE_NAME,
      METRICS_INSECURE_PLAIN_HTTP: 'false',
    },
  );
  let seq = 0;
  const probeDuring = async (phase: Phase, until: number): Promise<void> => {
    while (now() < until && op.alive()) {
      const next = now() + o.probeEveryMs;
      const name = `probe-${seq++}`;
      probes.set(name, { createdAt: Date.now(), phase });
      await withRetry(() => env.rest.request('POST', resourcePath(ECHOS, ns), { body: echoBody(name) }));
      await sleep(next - now());
    }
  };
  try {
    await waitReady(op);
    const deadline = now() + 60_000;
    let before = await readLease(env, ns);
    while (before?.spec?.holderIdentity !== IDENTITY && now() < deadline) {
      await sleep(200);
      before = await readLease(env, ns);
    }
    if (before?.spec?.holderIdentity !== IDENTITY) throw new Error(`scrapes: ${IDENTITY} never led:\n${op.tail()}`);
    run.kept.transitionsBefore = before.spec.leaseTransitions ?? 0;

    const loop = monitorEventLoopDelay({ resolution: 10 });
    const phase = async (p: Phase, work: () => Promise<void>): Promise<void> => {
      const cpu = processCpuSeconds(op.pid) ?? NaN;
      loop.reset();
      loop.enable();
      const t = now();
      await work();
      loop.disable();
      run.cpu[p] = ((processCpuSeconds(op.pid) ?? NaN) - cpu) / ((now() - t) / 1000);
      run.proxyLoopP99Ms[p] = loop.percentile(99) / 1e6;
      run.load[p] = loadavg()[0]!;
    };
    bounds.unloaded = { from: Date.now(), to: Date.now() + o.phaseMs };
    await phase('unloaded', () => probeDuring('unloaded', now() + o.phaseMs));
    log(`  ${build}: unloaded phase done (${run.lease.unloaded.length} renewals, ${run.reconcile.unloaded.length} reconciles)`);

    const floodBounds = { from: Date.now(), to: Date.now() + o.phaseMs };
    bounds.flood = floodBounds;
    await phase('flood', async () => {
      const started = now();
      const flooding = flood(op.metricsPort, o.scrapes, o.phaseMs);
      await probeDuring('flood', started + o.phaseMs);
      const { answers, took } = await flooding;
      for (const [status, n] of Object.entries(answers)) run.answers.set(Number(status), n);
      // Renewals sent while the last scrapes' reviews still hung count as under the flood too.
      floodBounds.to = Math.max(floodBounds.to, Date.now());
      run.scrapeMedianMs = median(took);
    });
    run.reviewsAtServer = proxy.reviews();
    log(
      `  ${build}: flood done (${run.lease.flood.length} renewals, ${run.reconcile.flood.length} reconciles, reviews held by the proxy: ${run.reviewsAtServer})`,
    );
    // Two more renewal periods (the default retryPeriod, 2 s): a lease lost in the flood shows.
    await sleep(5_000);
    const after = await readLease(env, ns);
    run.kept = {
      alive: op.alive(),
      sameHolder: after?.spec?.holderIdentity === IDENTITY,
      transitionsBefore: run.kept.transitionsBefore,
      transitionsAfter: after?.spec?.leaseTransitions ?? -1,
    };
    if (!run.kept.alive) log(`  ${build}: the operator exited (${await op.exited}); its last lines:\n${op.tail(15)}`);
  } finally {
    await op.stop('SIGTERM', 20_000);
    proxy.close();
    await deleteNamespace(env, ns, { wait: false });
  }
  return run;
}

const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : 'n/a');

function latencyRows(r: Run): string[][] {
  return (['lease', 'reconcile'] as const).map((what) => {
    const u = r[what].unloaded;
    const f = r[what].flood;
    const x = median(f) / median(u);
    return [
      r.build,
      what === 'lease' ? 'Lease renewal (PUT)' : "reconcile's first request (Echo created → answered)",
      `${ms(median(u))} (p90 ${ms(quantile(u, 0.9))}, n ${u.length})`,
      `${ms(median(f))} (p90 ${ms(quantile(f, 0.9))}, max ${ms(Math.max(...f))}, n ${f.length})`,
      `**${ratio(x)}**`,
      x <= GOAL ? 'yes' : '**no**',
    ];
  });
}

function outcomeRow(r: Run): string[] {
  const answers = [...r.answers.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${n} × ${s === 0 ? 'no answer' : s}`)
    .join(', ');
  const k = r.kept;
  const kept = k.alive && k.sameHolder && k.transitionsAfter === k.transitionsBefore;
  return [
    r.build,
    answers,
    ms(r.scrapeMedianMs),
    String(r.reviewsAtServer),
    `${r.cpu.unloaded?.toFixed(2)} / ${r.cpu.flood?.toFixed(2)}`,
    `${ms(r.proxyLoopP99Ms.unloaded ?? NaN)} / ${ms(r.proxyLoopP99Ms.flood ?? NaN)}`,
    `${r.load.unloaded?.toFixed(1)} / ${r.load.flood?.toFixed(1)}`,
    `${kept ? 'yes' : '**no**'} (process ${k.alive ? 'running' : 'exited'}, holder ${k.sameHolder ? 'unchanged' : 'changed'}, leaseTransitions ${k.transitionsBefore} → ${k.transitionsAfter})`,
  ];
}

export async function scrapes(env: BenchEnv, o: ScrapesOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const baselineArgv = commandFromEnv('BASELINE_CMD');
  const builds: [string, OperatorCommand][] = [['this build', env.operator]];
  if (baselineArgv) builds.push(['baseline', customCommand('BASELINE_CMD', baselineArgv)]);
  const runs: Run[] = [];
  for (const [name, command] of builds) {
    log(`scrapes: ${name} (${command.describe})`);
    runs.push(await measure(env, command, name, o));
  }
  const baselineLine = baselineArgv ? `Baseline: ${builds[1]![1].describe}.\n` : '';
  return [
    {
      id: 'scrapes',
      markdown: `## Scrapes cannot starve the work

${provenance(env, m, `${o.scrapes} scrapes over ${o.phaseMs / 1000} s, after ${o.phaseMs / 1000} s unloaded; a probe Echo every ${o.probeEveryMs} ms. `, load)}
${baselineLine}
The operator (HA on, Lease defaults 15 / 10 / 2 s, secure metrics) reaches the API server through a proxy
that holds every TokenReview and SubjectAccessReview unanswered and passes the rest
(scripts/lab/bench/reviewproxy.ts). The flood: scrapes with random bearer tokens, each on a new TLS
connection, at an even rate, from a worker thread (off the proxy's event loop). The load average
and the operator's CPU are in the second table: on a loaded machine the ratios move with it. Latencies are taken on the operator's side of its own requests, so a
wait for a socket counts: a Lease renewal from the renewTime its PUT carries to the PUT's answer;
a reconcile from just before the bench creates a probe Echo to the answer of the operator's first
request about it (the status write claiming the run; it includes the watch and the queue, which
the flood does not touch). Median (p90, n) per phase; ratio = flood median / unloaded median;
goal ≤ ${GOAL}.

${table(['build', 'request', 'unloaded', 'under the flood', 'ratio', `≤ ${GOAL}x`], runs.flatMap(latencyRows))}

${table(
  [
    'build',
    'scrape answers',
    'scrape median',
    'reviews sent to the API server',
    'operator CPU, cores (unloaded / flood)',
    "proxy's event-loop delay p99",
    'load average (1 min)',
    'lease kept',
  ],
  runs.map(outcomeRow),
)}`,
    },
  ];
}
