/**
 * Throughput: N Echos created at once; how long until every Echo has its Job and status.jobName,
 * with the operator doing the work, next to a bare client doing the same writes.
 *
 * Each run in a fresh namespace (deleted, and waited for, before the next):
 *  - operator: the operator runs (WATCH_NAMESPACES = that namespace, NUM_WORKERS = W) with
 *    synced caches; the bench creates N Echos, 50 requests in flight, and watches until N Jobs
 *    exist and N Echos have status.jobName. Time from the first POST.
 *  - bare ("pipelined"): the same creation; as each Echo's POST answers, it is handed to W workers
 *    that do what the operator must do per Echo: 1 Job POST + 1 status PATCH, with the operator's
 *    own desiredJob()/echoStatus()/writeStatus() over the same RestClient. Same end condition, same
 *    watch. This is an operator with zero overhead (it learns of each Echo the instant it exists),
 *    so the ratio is the price of watch + queue + cache + Events + whatever else it does.
 *  - sequential, once per N: creation first, then the bare writes; the creation time alone and
 *    the time of the writes alone.
 * operator and bare run back to back per round, in alternating order, so drift on a noisy machine
 * hits both; the ratio is taken per round.
 */
import type { Echo } from '../../../src/api/echo.js';
import {
  eventsPerEcho,
  formatPerEcho,
  formatWrites,
  statusConflicts,
  WriteCounter,
  type WriteCount,
  type WriteCounts,
} from './apiwrites.js';
import {
  AsyncQueue,
  CpuWindow,
  createNamespace,
  deleteNamespace,
  formatCpu,
  log,
  median,
  minMax,
  now,
  operatorMetrics,
  pool,
  quantile,
  ratio,
  secs,
  sleep,
  startOperator,
  sumOf,
  table,
  waitReady,
  type BenchEnv,
  type CpuReport,
  type Sample,
} from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { bareReconcile, createEchos, EchoTracker } from './workload.js';

export interface ThroughputOptions {
  sizes: number[];
  rounds: number;
  /** NUM_WORKERS values to measure; the bare client uses the same concurrency. */
  workers: number[];
  createConcurrency: number;
}

interface VariantOptions {
  workers: number;
  createConcurrency: number;
}

export type Variant = 'operator' | 'pipelined' | 'sequential';

export interface Result {
  variant: Variant;
  totalMs: number;
  createMs: number;
  /** sequential only: from the end of the creation to done. */
  writesMs?: number;
  cpu: CpuReport;
  toJob: number[];
  toStatus: number[];
  metrics?: Sample[];
  /** Every client's writes in the namespace over the window (audit log), or cluster-wide. */
  writes: WriteCounts;
  /** The operator's own writes over the same window (audit log): its Events, apart from the job controller's. */
  operatorWrites: WriteCount | undefined;
  n: number;
  deleteMs: number;
}

/** performance.now() when the tracker saw every Job and status; logs progress, fails after a generous timeout. */
export async function awaitDone(tracker: EchoTracker, what: string): Promise<number> {
  const timeoutMs = Math.max(180_000, tracker.n * 200);
  const started = now();
  for (;;) {
    const at = await Promise.race([tracker.done, sleep(15_000).then(() => undefined)]);
    if (at !== undefined) return at;
    log(`  ${what}: ${tracker.progress()} after ${secs(now() - started, 0)}`);
    if (now() - started > timeoutMs) throw new Error(`${what}: not done after ${secs(timeoutMs, 0)} (${tracker.progress()})`);
  }
}

export async function runVariant(env: BenchEnv, variant: Variant, n: number, opts: VariantOptions): Promise<Result> {
  const ns = await createNamespace(env, `bench-tp-${variant.slice(0, 4)}`);
  const op =
    variant === 'operator'
      ? await startOperator(env, { WATCH_NAMESPACES: ns, NAMESPACE: ns, NUM_WORKERS: String(opts.workers) })
      : undefined;
  try {
    if (op) await waitReady(op);
    const tracker = await EchoTracker.start(env, ns, n);
    const cpu = new CpuWindow({ ...env.controlPlanePids, ...(op ? { operator: op.pid } : {}) });
    const writes = await WriteCounter.start(env, { namespaces: [ns], userAgentPrefix: '' });
    const t0 = now();
    let createMs: number;
    let writesMs: number | undefined;
    if (variant === 'operator') {
      createMs = await createEchos(env, ns, n, opts.createConcurrency, (e) => tracker.created(e.metadata.name!));
    } else if (variant === 'pipelined') {
      const queue = new AsyncQueue<Echo>();
      const writing = pool(queue, opts.workers, (e) => bareReconcile(env, e));
      writing.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
      createMs = await createEchos(env, ns, n, opts.createConcurrency, (e) => {
        tracker.created(e.metadata.name!);
        queue.push(e);
      }).finally(() => queue.close());
      await writing;
    } else {
      const echos: Echo[] = [];
      createMs = await createEchos(env, ns, n, opts.createConcurrency, (e) => echos.push(e));
      const t1 = now();
      await pool(echos, opts.workers, (e) => bareReconcile(env, e));
      writesMs = (await awaitDone(tracker, variant)) - t1;
    }
    const doneAt = await awaitDone(tracker, variant);
    // The operator's metrics first: they should show its state at "done", not a second later.
    const metrics = op ? await operatorMetrics(op).catch(() => undefined) : undefined;
    const cpuReport = cpu.report();
    const writeCounts = await writes.stop();
    const { toJob, toStatus } = tracker.latencies();
    if (op) await op.stop();
    await tracker.stop();
    const result: Result = {
      variant,
      totalMs: doneAt - t0,
      createMs,
      writesMs,
      cpu: cpuReport,
      toJob,
      toStatus,
      metrics,
      writes: writeCounts,
      // The bare client (echoperator-bench) writes no Events: none of its own, zero when the log exists.
      operatorWrites: writeCounts.auditByAgent && (writeCounts.auditByAgent.echoperator ?? { total: 0, by: {} }),
      n,
      deleteMs: 0,
    };
    log(
      `  ${variant.padEnd(10)} N=${n}: done in ${secs(result.totalMs)} (creation ${secs(createMs)}${writesMs !== undefined ? `, writes ${secs(writesMs)}` : ''}); CPU: ${formatCpu(cpuReport)}`,
    );
    log(
      `    writes in the window (${writeCounts.audit ? 'audit log, all clients, this namespace' : 'apiserver metrics, cluster-wide'}): ${formatWrites(writeCounts.audit ?? writeCounts.apiserver)}; the operator's Events per Echo ${eventsOf(result)}`,
    );
    if (op) log(`    operator: ${opProfile(result).join('; ')}`);
    result.deleteMs = await deleteNamespace(env, ns);
    return result;
  } finally {
    if (op?.alive()) await op.stop('SIGKILL');
  }
}

function opProfile(r: Result): string[] {
  const m = r.metrics;
  if (!m) return [];
  const q = { name: 'echo' };
  const queueWait = sumOf(m, 'workqueue_queue_duration_seconds_sum', q) / (sumOf(m, 'workqueue_queue_duration_seconds_count', q) || 1);
  const work = sumOf(m, 'workqueue_work_duration_seconds_sum', q) / (sumOf(m, 'workqueue_work_duration_seconds_count', q) || 1);
  const reconciles = sumOf(m, 'controller_runtime_reconcile_total', { controller: 'echo' });
  const errors = sumOf(m, 'controller_runtime_reconcile_total', { controller: 'echo', result: 'error' });
  return [
    `reconciles ${reconciles} (${errors} errors), workqueue adds ${sumOf(m, 'workqueue_adds_total', q)}, retries ${sumOf(m, 'workqueue_retries_total', q)}`,
    `mean queue wait ${(queueWait * 1000).toFixed(0)} ms, mean reconcile ${(work * 1000).toFixed(1)} ms`,
    `operator CPU ${sumOf(m, 'process_cpu_seconds_total').toFixed(1)} s since start, RSS ${(sumOf(m, 'process_resident_memory_bytes') / 1048576).toFixed(0)} MiB`,
  ];
}

/** The Events the operator wrote per Echo in the window (the bare client writes none). */
const eventsOf = (r: Result): string => formatPerEcho(eventsPerEcho(r.operatorWrites, r.n));

/** From the audit log only: the cluster-wide count cannot tell a 409 apart. */
const conflictsOf = (r: Result): string => String(statusConflicts(r.writes.audit) ?? 'n/a');

const lat = (xs: number[]): string => (xs.length ? `${secs(quantile(xs, 0.5))} / ${secs(quantile(xs, 0.99))}` : 'n/a');

export async function throughput(env: BenchEnv, opts: ThroughputOptions): Promise<Section[]> {
  const m = machine(env);
  const sections: Section[] = [
    {
      id: 'throughput',
      markdown: `## Throughput

N Echos are created at once (${opts.createConcurrency} POSTs in flight) while the operator runs with synced caches; measured is
the time from the first POST until a watch has seen N Jobs and N Echos with \`status.jobName\`. The baseline,
**bare**, is the same creation while W workers of a bare client (the operator's RestClient and its own
desiredJob()/echoStatus()/writeStatus()) do what the operator must do per Echo, 1 Job POST + 1 status PATCH, the
instant each Echo's POST answers: an operator without watch, queue, cache, Events or safety reads.
**ratio = operator / bare** with the same W (the operator's NUM_WORKERS, 4 by default; each table below names the W
it was measured with), per round, the two run back to back in alternating order (goal <= 1.25). Once per N, **sequential**
creates all Echos first and then does the bare writes (W = ${opts.workers[0]}), giving the creation time alone and the writes alone.
Every run has its own namespace, deleted (and waited for) before the next. The job controller creates a Pod per Job
in every run (nothing schedules them). The writes listed per run come from the audit log when the control plane
has one (every client in the namespace: the bench's Echo POSTs, the operator, the job controller's Events); so do
the Echo status writes answered 409 Conflict, per run: a conditional write made from a copy older than the server's
(the operator's own last write not yet in its cache, for one; issue 13 asks for none). **Events per Echo**: the
operator's successful Event writes (creates and count patches; its User-Agent only, not the job controller's) over
the same window, divided by N; the bare client writes none, so a ratio read next to them compares less work with more.`,
    },
  ];
  for (const n of opts.sizes) {
    const load = loadLine();
    log(`throughput N=${n}: sequential reference (W=${opts.workers[0]})`);
    const seq = await runVariant(env, 'sequential', n, { ...opts, workers: opts.workers[0]! });
    await sleep(2000);
    const byW = new Map<number, { operator: Result; pipelined: Result }[]>();
    for (const w of opts.workers) {
      const rounds: { operator: Result; pipelined: Result }[] = [];
      for (let r = 0; r < opts.rounds; r++) {
        log(`throughput N=${n}, W=${w}, round ${r + 1}/${opts.rounds}`);
        const order: Variant[] = r % 2 === 0 ? ['operator', 'pipelined'] : ['pipelined', 'operator'];
        const round = {} as { operator: Result; pipelined: Result };
        for (const v of order) {
          round[v as 'operator' | 'pipelined'] = await runVariant(env, v, n, { ...opts, workers: w });
          await sleep(2000);
        }
        rounds.push(round);
        log(`  N=${n} W=${w}: ratio operator / bare = ${ratio(round.operator.totalMs / round.pipelined.totalMs)}`);
      }
      byW.set(w, rounds);
    }
    const rows: string[][] = [];
    const summaries: string[] = [];
    const details: string[] = [];
    for (const [w, rounds] of byW) {
      const ratios = rounds.map((r) => r.operator.totalMs / r.pipelined.totalMs);
      rounds.forEach((r, i) => {
        const q = r.operator.metrics ? queueStats(r.operator.metrics) : undefined;
        rows.push([
          String(w),
          String(i + 1),
          secs(r.operator.totalMs),
          secs(r.pipelined.totalMs),
          `**${ratio(ratios[i]!)}**`,
          secs(r.operator.createMs),
          q ? String(q.reconciles) : 'n/a',
          q ? `${(q.queueWait * 1000).toFixed(0)} ms / ${(q.work * 1000).toFixed(1)} ms` : 'n/a',
          `${conflictsOf(r.operator)} / ${conflictsOf(r.pipelined)}`,
          `${eventsOf(r.operator)} / ${eventsOf(r.pipelined)}`,
        ]);
      });
      const med = (f: (r: { operator: Result; pipelined: Result }) => number): number => median(rounds.map(f));
      summaries.push(
        `W=${w}: **median ratio ${ratio(median(ratios))}**${ratios.length > 1 ? ` (${minMax(ratios, ratio)})` : ''}, operator ${secs(med((r) => r.operator.totalMs))}, bare ${secs(med((r) => r.pipelined.totalMs))}`,
      );
      log(`throughput N=${n} W=${w}: median ratio ${ratio(median(ratios))}`);
      const last = rounds[rounds.length - 1]!;
      details.push(`W=${w}, last round:
- per Echo, POST answered -> its Job / its status seen (p50 / p99): operator ${lat(last.operator.toJob)} and ${lat(last.operator.toStatus)}; bare ${lat(last.pipelined.toJob)} and ${lat(last.pipelined.toStatus)}
- writes, operator run: ${formatWrites(last.operator.writes.audit ?? last.operator.writes.apiserver)}${last.operator.writes.audit ? '' : ' (cluster-wide)'}
- writes, bare run: ${formatWrites(last.pipelined.writes.audit ?? last.pipelined.writes.apiserver)}${last.pipelined.writes.audit ? '' : ' (cluster-wide)'}
- CPU, operator run: ${formatCpu(last.operator.cpu)}
- CPU, bare run: ${formatCpu(last.pipelined.cpu)}`);
    }
    sections.push({
      id: `throughput:n=${n}`,
      markdown: `### ${n} Echos

${provenance(env, m, '', load)}

${table(['W', 'round', 'operator', 'bare', 'ratio', 'Echo creation (operator run)', 'reconciles until done', 'mean queue wait / reconcile', 'status writes answered 409, operator / bare', 'Events per Echo, operator / bare'], rows)}

${summaries.join('; ')}. Sequential (W=${opts.workers[0]}): creation ${secs(seq.createMs)}, then writes ${secs(seq.writesMs ?? NaN)}.

${details.join('\n\n')}

CPU is in CPU-seconds over the measured window; \`others\` = every other process on the machine (the noise).`,
    });
  }
  return sections;
}

interface QueueStats {
  reconciles: number;
  queueWait: number;
  work: number;
}

function queueStats(m: Sample[]): QueueStats {
  const q = { name: 'echo' };
  return {
    reconciles: sumOf(m, 'controller_runtime_reconcile_total', { controller: 'echo' }),
    queueWait: sumOf(m, 'workqueue_queue_duration_seconds_sum', q) / (sumOf(m, 'workqueue_queue_duration_seconds_count', q) || 1),
    work: sumOf(m, 'workqueue_work_duration_seconds_sum', q) / (sumOf(m, 'workqueue_work_duration_seconds_count', q) || 1),
  };
}
