/**
 * The user's latency: from an Echo's POST to its message in the pod's log, ours and the
 * controller-runtime peer's (contestants.ts), on a cluster WITH a node (the kubelet runs the pods).
 *
 * Both programs run at once, each watching a namespace of its own whose pods run; the bench
 * creates one Echo at a time, alternating which program's namespace goes first, and waits for
 * its message before the next. The end is the timestamp the container runtime gave the log line
 * (`kubectl logs --timestamps`): when the message was written, not when the bench polled for it;
 * the start is the wall clock just before the POST (one machine, one clock). Also timed: POST ->
 * the Job seen by a watch (the operator's own share of the latency).
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ECHOS } from '../../../src/api/echo.js';
import { JOBS, resourcePath } from '../../../src/kube/resources.js';
import type { KubeObject } from '../../../src/runtime/cache/store.js';
import {
  createNamespace,
  deleteNamespace,
  getText,
  log,
  median,
  quantile,
  sleep,
  startOperator,
  table,
  waitReady,
  watch,
  type BenchEnv,
  type OperatorHandle,
  type Watched,
} from './common.js';
import { contestants, inTurn, type Contestant } from './contestants.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { echoBody, MESSAGE } from './workload.js';

export interface LatencyOptions {
  samples: number;
  workers: number;
}

interface Lane {
  c: Contestant;
  ns: string;
  op: OperatorHandle;
  jobs: Watched<V1Job & KubeObject>;
  /** Echo name -> Date.now() when the watch saw its Job. */
  jobSeen: Map<string, number>;
  toJob: number[];
  toLog: number[];
}

/** `2026-01-02T03:04:05.123456789Z text` -> ms since the epoch (ms precision), or undefined. */
function lineTime(line: string): number | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z /.exec(line);
  if (!m) return undefined;
  return Date.parse(`${m[1]}${(m[2] ?? '.000').slice(0, 4).padEnd(4, '0')}Z`);
}

/** When the Echo's message was written to its pod's log; polls until it is there. */
async function messageLoggedAt(env: BenchEnv, ns: string, echo: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pods = await env.rest
      .request<{ items: V1Pod[] }>('GET', `/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: `mmontes.io/echo=${echo}` } })
      .catch(() => ({ items: [] }));
    for (const pod of pods.items) {
      const state = pod.status?.containerStatuses?.[0]?.state;
      if (!state?.running && !state?.terminated) continue;
      const text = await getText(env.rest, `/api/v1/namespaces/${ns}/pods/${pod.metadata!.name}/log?timestamps=true`).catch(() => '');
      for (const line of text.split('\n')) if (line.endsWith(` ${MESSAGE}`)) return lineTime(line) ?? NaN;
    }
    await sleep(100);
  }
  throw new Error(`the message of Echo ${ns}/${echo} was not in its pod's log after ${timeoutMs / 1000} s`);
}

async function openLane(c: Contestant, workers: number): Promise<Lane> {
  const ns = await createNamespace(c.env, 'bench-latency', { pods: true });
  const jobSeen = new Map<string, number>();
  const jobs = await watch<V1Job & KubeObject>(c.env, JOBS, ns, {
    onAdd: (j) => {
      const owner = j.metadata?.ownerReferences?.find((r) => r.controller)?.name;
      if (owner && !jobSeen.has(owner)) jobSeen.set(owner, Date.now());
    },
  });
  const op = await startOperator(c.env, { WATCH_NAMESPACES: ns, NAMESPACE: ns, NUM_WORKERS: String(workers) });
  await waitReady(op);
  return { c, ns, op, jobs, jobSeen, toJob: [], toLog: [] };
}

/** One Echo through; `record` false for the warm-up. */
async function sample(lane: Lane, i: number, record = true): Promise<void> {
  const name = record ? `latency-${String(i).padStart(3, '0')}` : `warm-up-${i}`;
  const t0 = Date.now();
  await lane.c.env.rest.request('POST', resourcePath(ECHOS, lane.ns), { body: echoBody(name) });
  const logged = await messageLoggedAt(lane.c.env, lane.ns, name, 120_000);
  if (!record) return;
  lane.toLog.push(logged - t0);
  const job = lane.jobSeen.get(name);
  if (job !== undefined) lane.toJob.push(job - t0);
}

const ms = (x: number): string => `${Math.round(x)} ms`;

export async function latency(env: BenchEnv, opts: LatencyOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const nodes = await env.rest.request<{ items: unknown[] }>('GET', '/api/v1/nodes');
  if (nodes.items.length === 0) {
    throw new Error(
      'the latency benchmark needs a node (pods must run): use --private-cluster, or a cluster:up started without ECHOPERATOR_NODE=false',
    );
  }
  const pair = await contestants(env);
  const lanes: Lane[] = [];
  try {
    for (const c of pair) lanes.push(await openLane(c, opts.workers));
    // Not measured: the first Echo after a cluster starts waits ~2 s for the API server's watch
    // cache to catch up with the namespace's first writes, whichever program goes first.
    for (const [i, lane] of lanes.entries()) await sample(lane, i, false);
    for (let i = 0; i < opts.samples; i++) {
      for (const lane of inTurn([lanes[0]!, lanes[1]!], i)) await sample(lane, i);
      if ((i + 1) % 5 === 0) log(`latency: ${i + 1}/${opts.samples} Echos each`);
    }
    const rows = lanes.map((l) => [
      l.c.name,
      ms(median(l.toLog)),
      ms(quantile(l.toLog, 0.99)),
      ms(median(l.toJob)),
      ms(quantile(l.toJob, 0.99)),
    ]);
    for (const l of lanes)
      log(`latency ${l.c.name}: POST -> message logged p50 ${ms(median(l.toLog))}, p99 ${ms(quantile(l.toLog, 0.99))}`);
    return [
      {
        id: 'latency',
        markdown: `## The user's latency: an Echo created -> its message in the pod's log

${provenance(env, m, `Peer: ${pair[1].env.operator.describe}. NUM_WORKERS=${opts.workers}. `, load)}

On the local cluster with its node (kubelet, containerd, runc): both programs run at once, each over a namespace of its own;
${opts.samples} Echos each, created one at a time (alternating which program goes first), the next only once the previous message
was logged, after one warm-up Echo each (not counted: on a cluster just started, the first Echo of a namespace waits ~2 s for
the API server's watch cache, for either program). From the wall clock just before the POST to the timestamp containerd gave
the log line; the Job column is the operator's own share (POST -> its Job seen by a watch). The p99 of ${opts.samples} samples is
the slowest.

${table(['operator', 'POST -> message logged, median', 'p99', 'POST -> Job seen, median', 'p99'], rows)}`,
      },
    ];
  } finally {
    for (const l of lanes) {
      await l.op.stop();
      await l.jobs.stop();
      await deleteNamespace(l.c.env, l.ns, { wait: false });
    }
  }
}
