/**
 * Restart over N reconciled Echos: the operator reconciles N new Echos; once everything is quiet
 * it is stopped (SIGTERM) and a fresh process is started over the same objects. Measured: time
 * from spawn to /readyz (caches synced) and to every Echo reconciled, and the API writes the
 * second process makes (goal: zero), counted three ways (see apiwrites.ts): the audit log
 * (exact, by the operator's User-Agent and the namespace), apiserver_request_total (cluster-wide
 * upper bound) and the bench's own watch (changes to the namespace's Echos and Jobs).
 */
import { formatWrites, WriteCounter, type WriteCounts } from './apiwrites.js';
import {
  createNamespace,
  deleteNamespace,
  echoQueueDrained,
  log,
  now,
  operatorMetrics,
  secs,
  sleep,
  startOperator,
  sumOf,
  table,
  waitQuiet,
  waitReady,
  type BenchEnv,
  type OperatorHandle,
} from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { createEchos, EchoTracker } from './workload.js';

export interface RestartOptions {
  n: number;
  workers: number;
  createConcurrency: number;
}

export async function restart(env: BenchEnv, opts: RestartOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const { n } = opts;
  const ns = await createNamespace(env, 'bench-restart');
  const vars = { WATCH_NAMESPACES: ns, NAMESPACE: ns, NUM_WORKERS: String(opts.workers) };
  let first: OperatorHandle | undefined;
  let second: OperatorHandle | undefined;
  try {
    log(`restart N=${n}: first run reconciles ${n} new Echos`);
    first = await startOperator(env, vars);
    await waitReady(first);
    const tracker = await EchoTracker.start(env, ns, n);
    const firstWrites = await WriteCounter.start(env, { namespaces: [ns] });
    const t0 = now();
    await createEchos(env, ns, n, opts.createConcurrency);
    await tracker.done;
    const firstDoneMs = now() - t0;
    // Let the job controller finish (it sets startTime, the operator then writes phase Running).
    const quiet = await waitQuiet(tracker.watched, 5000, 300_000, () => echoQueueDrained(first!, n));
    if (!quiet) log('  warning: the first run did not become quiet within 5 minutes');
    const firstCounts = await firstWrites.stop();
    const firstStop = now();
    const code = await first.stop('SIGTERM');
    log(
      `  first run: all Jobs and statuses after ${secs(firstDoneMs)}; quiet; stopped (exit ${code}) in ${secs(now() - firstStop)}; writes ${formatWrites(firstCounts.audit ?? firstCounts.apiserver)}`,
    );
    await sleep(2000);

    const eventsBefore = tracker.watched.reduce((a, w) => a + w.events(), 0);
    const counter = await WriteCounter.start(env, { namespaces: [ns] });
    second = await startOperator(env, vars);
    const { readyAt, listeningAt } = await waitReady(second, { intervalMs: 20 });
    const readyMs = readyAt - second.spawnedAt;
    const deadline = now() + 300_000;
    while (!(await echoQueueDrained(second, n)) && now() < deadline) await sleep(100);
    const reconciledMs = now() - second.spawnedAt;
    await sleep(5000);
    const metrics = await operatorMetrics(second);
    const counts: WriteCounts = await counter.stop();
    const watchChanges = tracker.watched.reduce((a, w) => a + w.events(), 0) - eventsBefore;
    const reconciles = sumOf(metrics, 'controller_runtime_reconcile_total', { controller: 'echo' });
    await second.stop('SIGTERM');
    await tracker.stop();
    log(
      `restart N=${n}: ready after ${secs(readyMs)}, all ${reconciles} reconciled after ${secs(reconciledMs)}; writes: audit ${formatWrites(counts.audit)}, apiserver (cluster-wide) ${formatWrites(counts.apiserver)}, watch changes ${watchChanges}`,
    );
    const auditNote = counts.audit
      ? 'the audit log (exact: this namespace, User-Agent `echoperator/...`)'
      : 'no audit log on this control plane (started before the audit policy existed, or a foreign cluster): restart it with `npm run cluster:down && npm run cluster:up` for exact counts';
    return [
      {
        id: 'restart',
        markdown: `## Restart over ${n} reconciled Echos

${provenance(env, m, `NUM_WORKERS=${opts.workers}. `, load)}

The first process reconciles ${n} new Echos (all Jobs and statuses after ${secs(firstDoneMs)}); once the job controller and
the operator are quiet it is stopped with SIGTERM and a second process starts over the same objects.

${table(
  ['second process', 'value'],
  [
    ['spawn -> health port answers', secs(listeningAt - second.spawnedAt)],
    ['spawn -> /readyz (caches synced)', secs(readyMs)],
    [`spawn -> all ${n} Echos reconciled (queue drained)`, secs(reconciledMs)],
    ['reconciles', String(reconciles)],
    ['**API writes, audit log** (exact)', `**${formatWrites(counts.audit)}**`],
    ['API writes, apiserver_request_total (cluster-wide upper bound)', formatWrites(counts.apiserver)],
    ['changes to the Echos and Jobs seen by a watch', String(watchChanges)],
    [
      'for comparison, first run writes',
      formatWrites(firstCounts.audit ?? firstCounts.apiserver) + (firstCounts.audit ? '' : ' (cluster-wide)'),
    ],
  ],
)}

Writes were counted from the second spawn until 5 s after its queue drained, by ${auditNote}; the
apiserver metric has no namespace label and includes whatever else ran meanwhile (verbs POST, PUT, PATCH, DELETE on
jobs, echos, scheduledechos, cronjobs, events).`,
      },
    ];
  } finally {
    if (first?.alive()) await first.stop('SIGKILL');
    if (second?.alive()) await second.stop('SIGKILL');
    await deleteNamespace(env, ns, { wait: false });
  }
}
