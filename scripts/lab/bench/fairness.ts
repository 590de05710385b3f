/**
 * Fairness: does a user's Echo wait behind someone else's backlog? Our operator (its fair work
 * queue, and with WORK_QUEUE_ORDER=fifo: client-go's first-in first-out order) next to the
 * controller-runtime peer (contestants.ts; its priority queue is on by default), each process
 * watching two fresh namespaces, A (the backlog) and B (the user), with the same NUM_WORKERS, on
 * the same control plane without a node (pods stay Pending), in rounds (the order
 * of the three programs rotated every round).
 *
 *  - restart: N Echos exist in A when the process is spawned (made by the bench while no operator
 *    runs); the backlog begins at spawn;
 *  - flood: the process runs with synced caches (/readyz); the bench creates N Echos in A at once
 *    (`createConcurrency` requests in flight); the backlog begins with the first POST.
 *
 * In both, P probe Echos are created in B, one every `probeIntervalMs`, from `probeDelayMs`
 * after the backlog began. A probe's latency: from its POST answered to its Job's ADDED event
 * received by the bench's watch of B (one clock; a Job's creationTimestamp has whole seconds).
 * Per run: probe p50 and p99 (of P = 20 probes, p99 is the slowest: see quantile()); the
 * time until every Job of A was seen, and until every Echo of A and B had its Job and status;
 * reconciles per Echo (controller_runtime_reconcile_total{controller="echo"}, exported by both,
 * read at that moment, over the N + P Echos); the process's CPU-seconds (/proc/<pid>/stat) until
 * then and until settled (queue empty and no worker busy for 5 s); and the Events about Echos
 * in A and B once the process exited after SIGTERM (every Event either wrote, occurrences
 * counted: an aggregated Event's count), per Echo, so no ratio compares less work with more.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import { EVENTS } from '../../../src/kube/resources.js';
import type { KubeObject } from '../../../src/runtime/cache/store.js';
import type { Mode } from './fairness-modes.js';
import { kubeListerWatcher } from '../../../src/runtime/informer/index.js';
import { scatterChart, type Series } from './chart.js';
import {
  createNamespace,
  deleteNamespace,
  log,
  median,
  now,
  operatorMetrics,
  processCpuSeconds,
  quantile,
  ratio,
  ratioCell,
  secs,
  sleep,
  startOperator,
  sumOf,
  table,
  waitMachineCalm,
  waitReady,
  withRetry,
  type BenchEnv,
  type OperatorHandle,
} from './common.js';
import { baseline, contestants, inTurn, type Contestant } from './contestants.js';
import { settle } from './memory.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { awaitDone } from './throughput.js';
import { createEchos, EchoTracker } from './workload.js';

export { MODES, type Mode } from './fairness-modes.js';

export interface FairnessOptions {
  /** Echos in A: existing at spawn (restart), created at once (flood). */
  restartN: number;
  floodN: number;
  probes: number;
  probeIntervalMs: number;
  probeDelayMs: number;
  rounds: number;
  /** The modes to run, in this order (default both). */
  modes: readonly Mode[];
  workers: number;
  createConcurrency: number;
  /** Where the chart goes, beside the document (its file name). */
  chart: string;
}

/** A program under test: a contestant and the settings it runs with. */
interface Program {
  name: string;
  c: Contestant;
  vars: Record<string, string>;
}

interface Probe {
  /** ms from the backlog's beginning to the probe's POST answered. */
  at: number;
  /** ms from its POST answered to its Job seen. */
  latency: number;
}

interface Run {
  probes: Probe[];
  /** ms from the backlog's beginning until every Job of A was seen. */
  backlogJobsMs: number;
  /** ... until every Echo of A had its Job and status. */
  backlogDoneMs: number;
  reconcilesPerEcho: number;
  cpuDone: number;
  cpuSettled: number;
  /** API writes (POST, PUT, PATCH, DELETE: Jobs, statuses, Events) per Echo, until settled. */
  writesPerEcho: number;
  eventsPerEcho: number;
  /** Events about A's Echos written by the moment every Echo of A had its Job and status, per Echo of A. */
  eventsAtDonePerEcho: number;
}

type Results = Record<Mode, Map<string, Run[]>>;

const FAIR = 'echoperator (fair)';
const FIFO = 'echoperator (fifo)';
const BASELINE = 'baseline (fair)';
const PEER = 'controller-runtime';

/** Occurrences of Events about Echos in the namespace (an aggregated Event counts `count` times). */
async function echoEvents(env: BenchEnv, ns: string): Promise<number> {
  const lister = kubeListerWatcher<CoreV1Event & KubeObject>(env.rest, EVENTS, {
    namespace: ns,
    fieldSelector: 'involvedObject.kind=Echo',
  });
  let total = 0;
  let cont: string | undefined;
  do {
    const page = await withRetry(() => lister.list({ limit: 1000, continue: cont }));
    for (const e of page.items) total += e.count ?? 1;
    cont = page.continue;
  } while (cont);
  return total;
}

async function fairnessRun(p: Program, mode: Mode, o: FairnessOptions): Promise<Run> {
  const env = p.c.env;
  const n = mode === 'restart' ? o.restartN : o.floodN;
  const a = await createNamespace(env, 'bench-fair-a');
  const b = await createNamespace(env, 'bench-fair-b');
  const trackers: EchoTracker[] = [];
  let op: OperatorHandle | undefined;
  try {
    if (mode === 'restart') await createEchos(env, a, n, o.createConcurrency);
    const backlog = await EchoTracker.start(env, a, n);
    trackers.push(backlog);
    const probes = await EchoTracker.start(env, b, o.probes);
    trackers.push(probes);
    op = await startOperator(env, { WATCH_NAMESPACES: `${a},${b}`, NAMESPACE: a, NUM_WORKERS: String(o.workers), ...p.vars });
    let t0 = op.spawnedAt;
    let cpu0 = 0;
    let flood: Promise<unknown> = Promise.resolve();
    if (mode === 'flood') {
      await waitReady(op);
      cpu0 = processCpuSeconds(op.pid) ?? NaN;
      t0 = now();
      flood = createEchos(env, a, n, o.createConcurrency, (e) => backlog.created(e.metadata.name!));
      flood.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
    }
    await sleep(t0 + o.probeDelayMs - now());
    await createEchos(env, b, o.probes, 4, (e) => probes.created(e.metadata.name!), 1000 / o.probeIntervalMs);
    await flood;
    const backlogDoneAt = await awaitDone(backlog, `${p.name} ${mode} A`);
    // Read at once: the Events each program wrote while A's Jobs were being made, its own work
    // and the API server's, counted apart from the backlog's time.
    const eventsAtDone = await echoEvents(env, a);
    await awaitDone(probes, `${p.name} ${mode} B`);
    const metrics = await operatorMetrics(op);
    const cpuDone = (processCpuSeconds(op.pid) ?? NaN) - cpu0;
    const echos = n + o.probes;
    if (!(await settle(op, echos, 300_000))) log(`  ${p.name}: warning: did not settle within 5 minutes`);
    const cpuSettled = (processCpuSeconds(op.pid) ?? NaN) - cpu0;
    const settledMetrics = await operatorMetrics(op);
    const writes = sumOf(settledMetrics, 'rest_client_requests_total', { method: /^(POST|PUT|PATCH|DELETE)$/ });
    // Printed only: GETs (reads past the cache, lists and watches), where a program re-reads.
    const reads = sumOf(settledMetrics, 'rest_client_requests_total', { method: 'GET' });
    await op.stop('SIGTERM');
    const jobTimes = [...backlog.times.values()].map((t) => t.job ?? NaN);
    const run: Run = {
      probes: [...probes.times.values()]
        .filter((t) => t.created !== undefined && t.job !== undefined)
        .map((t) => ({ at: t.created! - t0, latency: Math.max(0, t.job! - t.created!) })),
      backlogJobsMs: Math.max(...jobTimes) - t0,
      backlogDoneMs: backlogDoneAt - t0,
      reconcilesPerEcho: sumOf(metrics, 'controller_runtime_reconcile_total', { controller: 'echo' }) / echos,
      cpuDone,
      cpuSettled,
      writesPerEcho: writes / echos,
      eventsPerEcho: ((await echoEvents(env, a)) + (await echoEvents(env, b))) / echos,
      eventsAtDonePerEcho: eventsAtDone / n,
    };
    const lat = run.probes.map((x) => x.latency);
    log(
      `  ${p.name.padEnd(18)} ${mode} N=${n}: probes p50 ${secs(quantile(lat, 0.5), 3)}, p99 ${secs(quantile(lat, 0.99), 3)}; A's Jobs ${secs(run.backlogJobsMs)}, and statuses ${secs(run.backlogDoneMs)}; reconciles/Echo ${run.reconcilesPerEcho.toFixed(2)}; CPU ${run.cpuDone.toFixed(2)} s (settled ${run.cpuSettled.toFixed(2)} s); writes/Echo ${run.writesPerEcho.toFixed(2)}, GETs/Echo ${(reads / echos).toFixed(2)}; Events/Echo of A by then ${run.eventsAtDonePerEcho.toFixed(2)}, at exit ${run.eventsPerEcho.toFixed(2)}`,
    );
    return run;
  } finally {
    if (op?.alive()) await op.stop('SIGKILL');
    for (const t of trackers) await t.stop();
    await Promise.all([deleteNamespace(env, a), deleteNamespace(env, b)]);
  }
}

const probeQ =
  (q: number) =>
  (r: Run): number =>
    quantile(
      r.probes.map((x) => x.latency),
      q,
    );

/**
 * The figures of one mode: per program the median over rounds, and the medians of per-round
 * ratios; `second` is our FIFO order, or the baseline build in its place.
 */
function modeTable(results: Map<string, Run[]>, second: string): string {
  const rows: [string, (r: Run) => number, (x: number) => string][] = [
    ['probe POST answered -> its Job seen, p50', probeQ(0.5), (x) => secs(x, 3)],
    ['probe POST answered -> its Job seen, p99', probeQ(0.99), (x) => secs(x, 3)],
    ["backlog began -> all of A's Jobs seen", (r) => r.backlogJobsMs, (x) => secs(x)],
    ["backlog began -> all of A's Echos with Job and status", (r) => r.backlogDoneMs, (x) => secs(x)],
    ['reconciles per Echo (once every Echo of A and B had its Job and status)', (r) => r.reconcilesPerEcho, (x) => x.toFixed(2)],
    ['operator CPU-seconds until then', (r) => r.cpuDone, (x) => `${x.toFixed(2)} s`],
    ['operator CPU-seconds until settled (queue empty 5 s)', (r) => r.cpuSettled, (x) => `${x.toFixed(2)} s`],
    ['API writes per Echo until settled (POST, PUT, PATCH, DELETE: Jobs, statuses, Events)', (r) => r.writesPerEcho, (x) => x.toFixed(2)],
    ["Events per Echo of A written by the moment A's Echos all had Job and status", (r) => r.eventsAtDonePerEcho, (x) => x.toFixed(2)],
    ['Events per Echo (all it wrote, up to its exit)', (r) => r.eventsPerEcho, (x) => x.toFixed(2)],
  ];
  const of = (name: string): Run[] => results.get(name) ?? [];
  return table(
    ['measure', FAIR, second, PEER, second === FIFO ? 'fair / fifo' : 'fair / baseline', 'fair / peer'],
    rows.map(([what, f, fmt]) => [
      what,
      fmt(median(of(FAIR).map(f))),
      fmt(median(of(second).map(f))),
      fmt(median(of(PEER).map(f))),
      ratioCell(perRound(of(FAIR), of(second), f)),
      ratioCell(perRound(of(FAIR), of(PEER), f)),
    ]),
  );
}

/** Round by round, a's figure over b's. */
function perRound(a: Run[], b: Run[], f: (r: Run) => number): number[] {
  return a.map((r, i) => f(r) / (b[i] ? f(b[i]) : NaN)).filter(Number.isFinite);
}

function goals(results: Results, modes: readonly Mode[], second: string): string {
  const rows: string[][] = [];
  const runs = (mode: Mode, name: string): Run[] => results[mode].get(name) ?? [];
  const verdict = (ok: boolean): string => (ok ? 'yes' : '**no**');
  for (const mode of modes) {
    const p99 = median(runs(mode, FAIR).map(probeQ(0.99)));
    rows.push([`${mode}: probe p99 <= 1.0 s`, secs(p99, 3), verdict(p99 <= 1000)]);
  }
  if (modes.includes('flood')) {
    const better = median(perRound(runs('flood', PEER), runs('flood', FAIR), probeQ(0.99)));
    rows.push(['flood: probe p99 >= 5 x better than the peer (peer / ours)', `${ratio(better)} x`, verdict(better >= 5)]);
  }
  for (const mode of modes) {
    const jobs = (r: Run): number => r.backlogJobsMs;
    const vsPeer = median(perRound(runs(mode, FAIR), runs(mode, PEER), jobs));
    const rec = median(perRound(runs(mode, FAIR), runs(mode, PEER), (r) => r.reconcilesPerEcho));
    if (second === FIFO) {
      const vsFifo = median(perRound(runs(mode, FAIR), runs(mode, FIFO), jobs));
      rows.push([`${mode}: A's backlog <= 1.05 x our FIFO time`, ratio(vsFifo), verdict(vsFifo <= 1.05)]);
    }
    rows.push([`${mode}: A's backlog <= 1.0 x the peer's`, ratio(vsPeer), verdict(vsPeer <= 1)]);
    rows.push([`${mode}: reconciles per Echo <= the peer's`, ratio(rec), verdict(rec <= 1)]);
    // Not goals of their own: the condition under which the ratios above compare the same work.
    const atDone = median(perRound(runs(mode, FAIR), runs(mode, PEER), (r) => r.eventsAtDonePerEcho));
    rows.push([`${mode}: Events written while A's backlog ran, ours / the peer's (the same work: 1.00)`, ratio(atDone), '']);
    const events = median(perRound(runs(mode, FAIR), runs(mode, PEER), (r) => r.eventsPerEcho));
    rows.push([`${mode}: Events per Echo within 2 % of the peer's (the same work)`, ratio(events), verdict(Math.abs(events - 1) <= 0.02)]);
  }
  return table(['goal', 'measured (median of per-round ratios, or of the figure)', 'met'], rows);
}

function chart(results: Results, o: FairnessOptions): string {
  return scatterChart({
    title: "A user's Echo behind another namespace's backlog: each probe's wait for its Job",
    xLabel: 'probe created, seconds since the backlog began',
    yLabel: 'POST answered -> Job seen (log scale)',
    yTick: (y) => (y >= 1 ? `${y} s` : `${Math.round(y * 1000)} ms`),
    // The watch's own delivery is a millisecond or so: below that is noise.
    yFloor: 0.001,
    panels: o.modes.map((mode) => ({
      title:
        mode === 'restart'
          ? `restart over ${o.restartN.toLocaleString('en-US')} Echos`
          : `flood of ${o.floodN.toLocaleString('en-US')} Echos at once`,
      series: [...results[mode].entries()].map(([name, rs]): Series => ({
        name,
        points: rs.flatMap((r) => r.probes.map((x): [number, number] => [x.at / 1000, x.latency / 1000])),
      })),
    })),
  });
}

export async function fairness(env: BenchEnv, o: FairnessOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const [ours, peer] = await contestants(env);
  const against = baseline(env);
  // With BASELINE_CMD, a baseline build of ours (fair) takes FIFO's place: a change measured
  // against the code it changes, in the same rounds as the peer.
  const second: Program = against
    ? { name: BASELINE, c: against, vars: { WORK_QUEUE_ORDER: 'fair' } }
    : { name: FIFO, c: ours, vars: { WORK_QUEUE_ORDER: 'fifo' } };
  const programs: Program[] = [{ name: FAIR, c: ours, vars: { WORK_QUEUE_ORDER: 'fair' } }, second, { name: PEER, c: peer, vars: {} }];
  log(
    `fairness: ${ours.env.operator.describe} (fair, ${against ? `against ${against.env.operator.describe}` : 'fifo'}) vs ${peer.env.operator.describe}, NUM_WORKERS=${o.workers}, ${o.rounds} rounds, ${o.modes.join(' and ')}`,
  );
  const results: Results = { restart: new Map(), flood: new Map() };
  for (let r = 0; r < o.rounds; r++) {
    for (const mode of o.modes) {
      log(`fairness: ${mode}, round ${r + 1}/${o.rounds}`);
      for (const p of inTurn(programs, r)) {
        // Each run starts once the control plane is done with the previous one's clean-up.
        const waited = now();
        const calm = await waitMachineCalm({ maxMs: 60_000 });
        log(`  machine ${calm ? 'calm' : 'still busy (going on)'} after ${secs(now() - waited, 0)}`);
        const run = await fairnessRun(p, mode, o);
        results[mode].set(p.name, [...(results[mode].get(p.name) ?? []), run]);
      }
    }
  }
  // The baseline section's chart beside the main one's, never over it.
  const chartFile = against ? o.chart.replace(/\.svg$/, '-baseline.svg') : o.chart;
  const probeLine = `${o.probes} probe Echos in B, one every ${secs(o.probeIntervalMs, 1)}, from ${secs(o.probeDelayMs, 1)} after the backlog began`;
  const secondLine = against
    ? `and, in FIFO's place, a baseline build of ours (${against.env.operator.describe}, BASELINE_CMD) with its fair queue`
    : "and with WORK_QUEUE_ORDER=fifo (client-go's order, the reference for the backlog time)";
  const modeSections = o.modes.map(
    (mode) =>
      `### ${mode === 'restart' ? `restart over ${o.restartN} Echos` : `flood of ${o.floodN} Echos`}\n\n${modeTable(results[mode], second.name)}`,
  );
  return [
    {
      id: against ? 'fairness:baseline' : 'fairness',
      assets: { [chartFile]: chart(results, o) },
      markdown: `## Fairness: a user's Echo behind another namespace's backlog${against ? ', against a baseline build of ours' : ''}

${provenance(env, m, `Peer: ${peer.env.operator.describe}, its priority queue on (the default since v0.23). NUM_WORKERS=${o.workers} for each. ${o.rounds === 1 ? '1 round (one run of each program and mode: no spread; the default is 3)' : `${o.rounds} rounds, the order of the three programs rotated every round`}. `, load)}
Load average at the end: ${loadLine()}.

Each process watches two fresh namespaces, A and B, on the same control plane without a node (the job controller makes the
pods; they stay Pending). **restart**: ${o.restartN} Echos exist in A when the process is spawned; the backlog begins at spawn.
**flood**: the process runs with synced caches; ${o.floodN} Echos are created in A at once (${o.createConcurrency} requests in
flight); the backlog begins with the first POST. In both, ${probeLine}. A probe's latency runs from its POST answered to
its Job's ADDED event received by the bench's watch of B (one clock; creationTimestamp has whole seconds only). Ours
runs with its fair queue (the default) ${secondLine}. Reconciles per Echo: controller_runtime_reconcile_total{controller="echo"} (both export it) at the moment every Echo had
its Job and status, over all the Echos of A and B (${o.restartN} or ${o.floodN}, + ${o.probes}). CPU-seconds from /proc/<pid>/stat: since spawn for
restart, since the first POST for flood. API writes per Echo: rest_client_requests_total (client-go's name; both export it) of
the write methods once the queue had been empty 5 s. Each run starts once the whole machine used under half a core for 3 s
(the previous run's clean-up done). Events are counted apart from the backlog's time, twice: those about A's Echos listed
at the moment every Echo of A had its Job and status (what the program wrote while the backlog ran, next to its time), and
those about Echos in A and B once the process exited after SIGTERM, an aggregated Event counted \`count\` times, so a ratio
never compares less work with more unseen. Values are medians over the rounds; ratios are medians of the per-round ratios (min .. max).

![${probeLine}: each probe's latency against the time since the backlog began](${chartFile})

${modeSections.join('\n\n')}

### Goals

${goals(results, o.modes, second.name)}`,
    },
  ];
}

/** The chart's file name, beside docs/benchmarks.md. */
export const CHART_FILE = 'fairness.svg';
