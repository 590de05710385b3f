/**
 * Peers: our operator next to a controller-runtime controller doing the same work (see
 * contestants.ts), on the same control plane, in alternating rounds (ours first in even rounds,
 * the peer first in odd ones), each run in a fresh namespace. Both run with the same
 * NUM_WORKERS; every figure is the median over the rounds, and every ratio (ours / peer) the
 * median of the per-round ratios.
 *
 *  - idle: spawn -> /readyz, and the RSS of a process whose caches are synced and empty, 5 s
 *    after /readyz; its CPU from then to 30 s after /readyz (the start-up's tail), and its CPU
 *    and wake-ups over the minute after that (idle);
 *  - backlog N: N Echos exist, the operator is spawned; time until a watch has seen N Jobs and
 *    N Echos with status.jobName; CPU-seconds of the operator process (/proc/<pid>/stat, all of
 *    it since spawn) and of kube-apiserver over the same window; the writes (audit log, by
 *    User-Agent). For the first N also its RSS once the queue stayed empty for 5 s;
 *  - live: the operator runs with synced caches; N Echos are created at a fixed rate by the
 *    bench's own creator; time from the first POST until done, per-Echo latency (POST answered
 *    -> Job seen, -> status seen), CPU-seconds as above;
 *  - memory: M reconciled Echos and their (suspended) Jobs made once by the bench; a fresh
 *    process over them, RSS once its queue stayed empty for 5 s, and the writes it made (goal 0:
 *    a restart over reconciled objects).
 */
import { eventsPerEcho, formatPerEcho, formatWrites, WriteCounter, type WriteCount } from './apiwrites.js';
import {
  createNamespace,
  deleteNamespace,
  log,
  median,
  mib,
  now,
  processCpuSeconds,
  threadTimes,
  quantile,
  ratioCell,
  secs,
  sleep,
  startOperator,
  table,
  vmRssBytes,
  waitReady,
  type BenchEnv,
  type OperatorHandle,
} from './common.js';
import { baseline, contestants, inTurn, ours, type Contestant } from './contestants.js';
import { settle } from './memory.js';
import { PEER_PARTS, type PeerPart } from './peer-parts.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { awaitDone } from './throughput.js';
import { createEchos, createReconciledEchos, EchoTracker } from './workload.js';

export interface PeersOptions {
  /** Backlog sizes; the first also gets the RSS reading and the restart. */
  sizes: number[];
  rounds: number;
  workers: number;
  createConcurrency: number;
  liveN: number;
  livePerSecond: number;
  /** Reconciled Echos + Jobs under a fresh process: RSS and restart writes. */
  memorySizes: number[];
  /** What to measure; the table holds only these parts' rows. */
  parts: readonly PeerPart[];
  /** Names the section of a run of some parts (see partsSuffix). */
  label?: string;
}

/** One contestant's figures in one round; absent = not measured in that kind of run. */
export interface Run {
  ms: number;
  operatorCpu: number;
  /** Backlog: the operator's CPU-seconds once its queue stayed empty for 5 s (Events sent late included). */
  operatorCpuSettled?: number;
  apiserverCpu: number;
  writes?: WriteCount;
  /** Backlog: the writes until settled (the window of operatorCpuSettled and rss). */
  writesSettled?: WriteCount;
  rss?: number;
  /** Idle: the operator's CPU-milliseconds per second in the start-up's tail (IDLE_WINDOWS_TEXT.tail). */
  tailCpuMsPerS?: number;
  /** Idle: the operator's CPU-milliseconds per second with nothing to do (IDLE_WINDOWS_TEXT.idle). */
  idleCpuMsPerS?: number;
  /** Idle: its threads' context switches per second, each after a wake-up, over the same window. */
  idleWakeupsPerS?: number;
  restartWrites?: WriteCount;
  toJob?: number[];
  toStatus?: number[];
}

type Rounds = { ours: Run; peer: Run }[];

const vars = (ns: string, workers: number): Record<string, string> => ({
  WATCH_NAMESPACES: ns,
  NAMESPACE: ns,
  NUM_WORKERS: String(workers),
});

function apiserverCpu(env: BenchEnv): () => number {
  const pid = env.controlPlanePids['kube-apiserver'];
  const start = pid ? (processCpuSeconds(pid) ?? NaN) : NaN;
  return () => (pid ? (processCpuSeconds(pid) ?? NaN) - start : NaN);
}

/** The writes a second process makes over the namespace's reconciled objects, until its queue stayed drained for 5 s. */
async function restartWrites(c: Contestant, ns: string, n: number, workers: number): Promise<{ writes?: WriteCount; op: OperatorHandle }> {
  const counter = await WriteCounter.start(c.env, { namespaces: [ns], userAgentPrefix: c.userAgent });
  const op = await startOperator(c.env, vars(ns, workers));
  await waitReady(op);
  if (!(await settle(op, n, 300_000))) log(`  ${c.name}: warning: the second process did not settle within 5 minutes`);
  return { writes: (await counter.stop()).audit, op };
}

/**
 * The idle run's windows, from /readyz: the RSS at 5 s; the start-up's tail from 5 s to 30 s
 * (work a runtime does once after a start: V8's memory reducer runs two full collections 8-10 s
 * after its heap stopped growing); idle from 30 s to 90 s. CPU and wake-ups from the threads'
 * schedstat and context switches (proc.ts threadTimes): /proc/<pid>/stat's 10 ms ticks cannot
 * tell 0.3 ms a second from 0.6 over a minute.
 */
const IDLE_RSS_AT_MS = 5_000;
const IDLE_FROM_MS = 30_000;
const IDLE_WINDOW_MS = 60_000;
export const IDLE_WINDOWS_TEXT = {
  tail: `from ${IDLE_RSS_AT_MS / 1000} to ${IDLE_FROM_MS / 1000} s after /readyz`,
  idle: `over ${IDLE_WINDOW_MS / 1000} s from ${IDLE_FROM_MS / 1000} s after /readyz`,
};

export async function idleRun(c: Contestant, workers: number): Promise<Run> {
  const ns = await createNamespace(c.env, 'bench-peer-idle');
  const op = await startOperator(c.env, vars(ns, workers));
  try {
    const { readyAt } = await waitReady(op, { intervalMs: 10 });
    await sleep(IDLE_RSS_AT_MS);
    const rss = vmRssBytes(op.pid);
    const operatorCpu = processCpuSeconds(op.pid) ?? NaN;
    const atRss = threadTimes(op.pid);
    await sleep(IDLE_FROM_MS - IDLE_RSS_AT_MS);
    const from = threadTimes(op.pid);
    await sleep(IDLE_WINDOW_MS);
    const to = threadTimes(op.pid);
    const perS = (a: number | undefined, b: number | undefined, ms: number): number => ((b ?? NaN) - (a ?? NaN)) / (ms / 1000);
    const tailCpuMsPerS = perS(atRss?.cpuNs, from?.cpuNs, IDLE_FROM_MS - IDLE_RSS_AT_MS) / 1e6;
    const idleCpuMsPerS = perS(from?.cpuNs, to?.cpuNs, IDLE_WINDOW_MS) / 1e6;
    const idleWakeupsPerS = perS(from?.switches, to?.switches, IDLE_WINDOW_MS);
    log(
      `  ${c.name.padEnd(18)} idle: ready after ${secs(readyAt - op.spawnedAt)}, RSS ${mib(rss)}, ` +
        `CPU ${tailCpuMsPerS.toFixed(2)} ms/s ${IDLE_WINDOWS_TEXT.tail}, then ${idleCpuMsPerS.toFixed(2)} ms/s and ${idleWakeupsPerS.toFixed(1)} wake-ups/s`,
    );
    return { ms: readyAt - op.spawnedAt, operatorCpu, apiserverCpu: NaN, rss, tailCpuMsPerS, idleCpuMsPerS, idleWakeupsPerS };
  } finally {
    await op.stop();
    await deleteNamespace(c.env, ns, { wait: false });
  }
}

export async function backlogRun(
  c: Contestant,
  n: number,
  opts: Pick<PeersOptions, 'workers' | 'createConcurrency'> & { rss: boolean },
): Promise<Run> {
  const env = c.env;
  const ns = await createNamespace(env, 'bench-peer-backlog');
  let op: OperatorHandle | undefined;
  try {
    await createEchos(env, ns, n, opts.createConcurrency);
    const tracker = await EchoTracker.start(env, ns, n);
    const writes = await WriteCounter.start(env, { namespaces: [ns], userAgentPrefix: c.userAgent });
    const api = apiserverCpu(env);
    op = await startOperator(env, vars(ns, opts.workers));
    const doneAt = await awaitDone(tracker, `${c.name} backlog`);
    const run: Run = { ms: doneAt - op.spawnedAt, operatorCpu: processCpuSeconds(op.pid) ?? NaN, apiserverCpu: api() };
    run.writes = (await writes.stop()).audit;
    if (!(await settle(op, n, 300_000))) log(`  ${c.name}: warning: did not settle within 5 minutes`);
    run.operatorCpuSettled = processCpuSeconds(op.pid) ?? NaN;
    run.writesSettled = (await writes.stop()).audit;
    if (opts.rss) run.rss = vmRssBytes(op.pid);
    await op.stop();
    await tracker.stop();
    log(
      `  ${c.name.padEnd(18)} backlog N=${n}: ${secs(run.ms)}, CPU operator ${run.operatorCpu.toFixed(2)} s (settled ${run.operatorCpuSettled.toFixed(2)} s), kube-apiserver ${run.apiserverCpu.toFixed(2)} s${run.rss ? `, RSS ${mib(run.rss)}` : ''}; writes ${formatWrites(run.writes)}; Events per Echo until done ${formatPerEcho(eventsPerEcho(run.writes, n))}, until settled ${formatPerEcho(eventsPerEcho(run.writesSettled, n))}`,
    );
    return run;
  } finally {
    if (op?.alive()) await op.stop('SIGKILL');
    await deleteNamespace(env, ns);
  }
}

async function liveRun(c: Contestant, opts: PeersOptions): Promise<Run> {
  const env = c.env;
  const n = opts.liveN;
  const ns = await createNamespace(env, 'bench-peer-live');
  const op = await startOperator(env, vars(ns, opts.workers));
  try {
    await waitReady(op);
    const tracker = await EchoTracker.start(env, ns, n);
    const writes = await WriteCounter.start(env, { namespaces: [ns], userAgentPrefix: c.userAgent });
    const api = apiserverCpu(env);
    const cpu0 = processCpuSeconds(op.pid) ?? NaN;
    const t0 = now();
    await createEchos(env, ns, n, opts.createConcurrency, (e) => tracker.created(e.metadata.name!), opts.livePerSecond);
    const doneAt = await awaitDone(tracker, `${c.name} live`);
    const run: Run = {
      ms: doneAt - t0,
      operatorCpu: (processCpuSeconds(op.pid) ?? NaN) - cpu0,
      apiserverCpu: api(),
      writes: (await writes.stop()).audit,
      ...tracker.latencies(),
    };
    await tracker.stop();
    log(
      `  ${c.name.padEnd(18)} live N=${n} at ${opts.livePerSecond}/s: ${secs(run.ms)}, POST -> status p50/p99 ${lat(run.toStatus!)}, CPU operator ${run.operatorCpu.toFixed(2)} s, kube-apiserver ${run.apiserverCpu.toFixed(2)} s; writes ${formatWrites(run.writes)}`,
    );
    return run;
  } finally {
    await op.stop();
    await deleteNamespace(env, ns);
  }
}

export async function memoryRun(c: Contestant, ns: string, n: number, workers: number): Promise<Run> {
  const api = apiserverCpu(c.env);
  const t0 = now();
  const { writes, op } = await restartWrites(c, ns, n, workers);
  try {
    const run: Run = {
      ms: now() - t0,
      operatorCpu: processCpuSeconds(op.pid) ?? NaN,
      apiserverCpu: api(),
      rss: vmRssBytes(op.pid),
      restartWrites: writes,
    };
    log(
      `  ${c.name.padEnd(18)} over ${n} + ${n}: RSS ${mib(run.rss)}, CPU ${run.operatorCpu.toFixed(2)} s; writes ${formatWrites(writes)}`,
    );
    return run;
  } finally {
    await op.stop();
  }
}

/** Runs `measure` for both contestants per round, in alternating order. */
async function rounds(
  pair: [Contestant, Contestant],
  count: number,
  what: string,
  measure: (c: Contestant) => Promise<Run>,
): Promise<Rounds> {
  const out: Rounds = [];
  for (let r = 0; r < count; r++) {
    log(`peers: ${what}, round ${r + 1}/${count}`);
    const round: Partial<{ ours: Run; peer: Run }> = {};
    for (const c of inTurn(pair, r)) {
      round[c === pair[0] ? 'ours' : 'peer'] = await measure(c);
      await sleep(2000);
    }
    out.push(round as { ours: Run; peer: Run });
  }
  return out;
}

const msPerS = (x: number): string => `${x.toFixed(2)} ms/s`;

const lat = (xs: number[]): string => (xs.length ? `${secs(quantile(xs, 0.5))} / ${secs(quantile(xs, 0.99))}` : 'n/a');
const cpuS = (x: number): string => `${x.toFixed(2)} s`;

/**
 * The window a row's figures were taken over: its writes and the Echos in it, for the Events
 * written per Echo by both programs (so a ratio never compares less work with more).
 */
interface Window {
  writes: (r: Run) => WriteCount | undefined;
  echos: number;
}

/** Events per Echo in the window, medians over the rounds: "ours / peer"; "-" for a row without Echos. */
function eventsCell(rs: Rounds, w: Window | undefined): string {
  if (!w) return '-';
  const of = (f: (x: { ours: Run; peer: Run }) => Run): string => {
    const xs = rs.map((r) => eventsPerEcho(w.writes(f(r)), w.echos)).filter((x): x is number => x !== undefined);
    return formatPerEcho(xs.length ? median(xs) : undefined);
  };
  return `${of((r) => r.ours)} / ${of((r) => r.peer)}`;
}

/** A row: the medians of both, the median of the per-round ratios, and the Events per Echo of its window. */
function row(
  what: string,
  rs: Rounds,
  f: (r: Run) => number | undefined,
  fmt: (x: number) => string,
  goal: string,
  window?: Window,
): string[] {
  const ours = rs.map((r) => f(r.ours)).filter((x): x is number => x !== undefined && Number.isFinite(x));
  const peer = rs.map((r) => f(r.peer)).filter((x): x is number => x !== undefined && Number.isFinite(x));
  const ratios = rs.map((r) => (f(r.ours) ?? NaN) / (f(r.peer) ?? NaN)).filter(Number.isFinite);
  return [what, fmt(median(ours)), fmt(median(peer)), ratioCell(ratios), eventsCell(rs, window), goal];
}

const writesRow = (what: string, rs: Rounds, window: Window): string[] => {
  const last = rs[rs.length - 1]!;
  return [what, formatWrites(window.writes(last.ours)), formatWrites(window.writes(last.peer)), '', eventsCell(rs, window), ''];
};

export async function peers(env: BenchEnv, opts: PeersOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const against = baseline(env);
  const pair: [Contestant, Contestant] = against ? [ours(env), against] : await contestants(env);
  const [us, peer] = pair;
  log(`peers: ${us.env.operator.describe} vs ${peer.env.operator.describe}, NUM_WORKERS=${opts.workers}, ${opts.rounds} rounds`);
  const rows: string[][] = [];
  const details: string[] = [];

  if (opts.parts.includes('idle')) {
    const idle = await rounds(pair, opts.rounds, 'idle', (c) => idleRun(c, opts.workers));
    rows.push(
      row(
        'spawn -> /readyz (caches synced, empty namespace)',
        idle,
        (r) => r.ms,
        (x) => secs(x, 3),
        '',
      ),
    );
    rows.push(row('RSS idle (caches synced, empty)', idle, (r) => r.rss, mib, ''));
    rows.push(row(`CPU after start-up (ms per second ${IDLE_WINDOWS_TEXT.tail})`, idle, (r) => r.tailCpuMsPerS, msPerS, ''));
    rows.push(
      row(`CPU idle (caches synced, empty; ms per second ${IDLE_WINDOWS_TEXT.idle})`, idle, (r) => r.idleCpuMsPerS, msPerS, '<= 1.0'),
    );
    rows.push(
      row(
        `wake-ups a second, idle (context switches of all threads ${IDLE_WINDOWS_TEXT.idle})`,
        idle,
        (r) => r.idleWakeupsPerS,
        (x) => x.toFixed(1),
        '',
      ),
    );
  }

  for (const [i, n] of opts.parts.includes('backlog') ? opts.sizes.entries() : []) {
    const rs = await rounds(pair, opts.rounds, `backlog N=${n}`, (c) => backlogRun(c, n, { ...opts, rss: i === 0 }));
    const done: Window = { writes: (r) => r.writes, echos: n };
    const settled: Window = { writes: (r) => r.writesSettled, echos: n };
    rows.push(
      row(
        `backlog ${n}: spawn -> all Jobs and statuses`,
        rs,
        (r) => r.ms,
        (x) => secs(x),
        '<= 1.0',
        done,
      ),
    );
    rows.push(row(`backlog ${n}: operator CPU-seconds until done`, rs, (r) => r.operatorCpu, cpuS, '', done));
    rows.push(
      row(
        `backlog ${n}: operator CPU-seconds until settled (queue empty 5 s, Events all sent)`,
        rs,
        (r) => r.operatorCpuSettled,
        cpuS,
        '<= 1.0',
        settled,
      ),
    );
    rows.push(
      row(
        `backlog ${n}: operator CPU per Echo, until settled`,
        rs,
        (r) => ((r.operatorCpuSettled ?? NaN) / n) * 1000,
        (x) => `${x.toFixed(2)} ms`,
        '<= 1.0',
        settled,
      ),
    );
    rows.push(row(`backlog ${n}: kube-apiserver CPU-seconds`, rs, (r) => r.apiserverCpu, cpuS, '<= 1.0', done));
    if (i === 0) rows.push(row(`RSS after the backlog of ${n} (queue empty 5 s)`, rs, (r) => r.rss, mib, '', settled));
    rows.push(writesRow(`backlog ${n}: writes until done (audit log, last round)`, rs, done));
    rows.push(writesRow(`backlog ${n}: writes until settled (audit log, last round)`, rs, settled));
    details.push(
      `backlog ${n}, per round (ours / ${peer.name}): ${rs.map((r, k) => `${k + 1}: ${secs(r.ours.ms)} / ${secs(r.peer.ms)}`).join('; ')}`,
    );
  }

  if (opts.parts.includes('live')) {
    const live = await rounds(pair, opts.rounds, `live N=${opts.liveN}`, (c) => liveRun(c, opts));
    const liveWhat = `live ${opts.liveN} at ${opts.livePerSecond}/s`;
    const liveRows: [string, (r: Run) => number, (x: number) => string, string][] = [
      ['first POST -> all Jobs and statuses', (r) => r.ms, (x) => secs(x), '<= 1.0'],
      ['POST answered -> status seen, p50', (r) => quantile(r.toStatus ?? [], 0.5), (x) => secs(x, 3), ''],
      ['POST answered -> status seen, p99', (r) => quantile(r.toStatus ?? [], 0.99), (x) => secs(x, 3), ''],
      ['operator CPU-seconds', (r) => r.operatorCpu, cpuS, '<= 1.0'],
      ['kube-apiserver CPU-seconds', (r) => r.apiserverCpu, cpuS, '<= 1.0'],
    ];
    const liveWindow: Window = { writes: (r) => r.writes, echos: opts.liveN };
    for (const [what, f, fmt, goal] of liveRows) rows.push(row(`${liveWhat}: ${what}`, live, f, fmt, goal, liveWindow));
    rows.push(writesRow(`${liveWhat}: writes (audit log, last round)`, live, liveWindow));
  }

  for (const k of opts.parts.includes('memory') ? opts.memorySizes : []) {
    const ns = await createNamespace(env, 'bench-peer-memory');
    try {
      const t0 = now();
      await createReconciledEchos(env, ns, k, opts.createConcurrency, { suspend: true });
      log(`peers: ${k} reconciled Echos and suspended Jobs made in ${secs(now() - t0)}`);
      const mem = await rounds(pair, opts.rounds, `memory N=${k}`, (c) => memoryRun(c, ns, k, opts.workers));
      const goal = k >= 10_000 ? '<= 1.0' : '<= 1.2';
      const restart: Window = { writes: (r) => r.restartWrites, echos: k };
      rows.push(row(`RSS with ${k} Echos + ${k} Jobs (fresh process, queue empty 5 s)`, mem, (r) => r.rss, mib, goal, restart));
      rows.push(row(`fresh process over ${k} + ${k}: operator CPU-seconds until settled`, mem, (r) => r.operatorCpu, cpuS, '', restart));
      rows.push(writesRow(`restart over ${k} reconciled Echos: writes (audit log)`, mem, restart));
    } finally {
      await deleteNamespace(env, ns, { timeoutMs: 300_000 });
    }
  }

  const measured: Measured = { env, machine: m, load, opts, rows, details };
  return [against ? baselineSection(measured, against) : peerSection(measured, peer)];
}

/** What one run of the peers bench measured, for the section that reports it. */
interface Measured {
  env: BenchEnv;
  machine: ReturnType<typeof machine>;
  /** The load line at the start. */
  load: string;
  opts: PeersOptions;
  /** The table's rows: measure, ours, the other, ratio, Events per Echo, goal. */
  rows: string[][];
  details: string[];
}

/** Where, when and how the run was made, against `other` (the peer or the baseline). */
function runLine({ env, machine: m, load, opts }: Measured, other: string): string {
  const parts = opts.parts.length === PEER_PARTS.length ? '' : `Parts measured: ${opts.parts.join(', ')} (\`--parts\`). `;
  return `${provenance(env, m, `${other}. NUM_WORKERS=${opts.workers} for both. ${opts.rounds} rounds, alternating which runs first. ${parts}`, load)}
Load average at the end: ${loadLine()}.`;
}

/**
 * A run of some parts only (`--parts`) gets a section of its own (bench:peers:idle, ...), so the
 * whole run's table is never replaced by part of it.
 */
function partsSuffix(opts: PeersOptions): { id: string; title: string } {
  const label = opts.label ? { id: `:${opts.label}`, title: `, ${opts.label}` } : { id: '', title: '' };
  if (opts.parts.length === PEER_PARTS.length && !opts.label) return { id: '', title: '' };
  return { id: `:${opts.parts.join('+')}${label.id}`, title: ` (${opts.parts.join(', ')}${label.title})` };
}

function peerSection(measured: Measured, peer: Contestant): Section {
  const { rows, details } = measured;
  const part = partsSuffix(measured.opts);
  return {
    id: `peers${part.id}`,
    markdown: `## Peers: controller-runtime${part.title}

${runLine(measured, `Peer: ${peer.env.operator.describe}`)}

Both programs do the same work per Echo (one Job, built the same way; status phase, jobName, times, observedGeneration
and the Succeeded and Reconciled conditions; the same Events), on the same control plane without a node (pods stay
Pending; the job controller still makes one per Job). The peer is written as a controller-runtime user writes it:
For(Echo).Owns(Job), the manager's cached client, a merge patch of the status, default client settings
(HTTP/2, no client-side rate limit). Values are medians over the rounds; **ours / peer** is the median of the
per-round ratios (min .. max). CPU-seconds from /proc/<pid>/stat: the operator's since its spawn (start-up included)
for backlog (until done, and until settled: ours sends its Events once its queue is empty, the peer as it goes, so
only the settled figure holds both programs' whole work), over the window for live; kube-apiserver's over the same
window. Writes: the audit log, by User-Agent (the operator's own requests only). **Events per Echo**: each program's
successful Event writes (creates and count patches) over the row's window, divided by the Echos in it, medians over
the rounds: a ratio read next to unequal Events compares less work with more.

${table(['measure', 'echoperator', 'controller-runtime', 'ours / peer', 'Events per Echo, ours / peer', 'goal'], rows)}

${details.join('\n\n')}`,
  };
}

/**
 * The same measurements against a baseline build of ours (BASELINE_CMD): its own section
 * (bench:peers:baseline), without the peer's goals, which are not this comparison's.
 */
function baselineSection(measured: Measured, against: Contestant): Section {
  const withoutGoals = measured.rows.map((r) => r.slice(0, 5));
  const part = partsSuffix(measured.opts);
  return {
    id: `peers:baseline${part.id}`,
    markdown: `## Against a baseline build of ours${part.title}

${runLine(measured, `Baseline: ${against.env.operator.describe}`)}

\`npm run bench -- peers\` with BASELINE_CMD set: the peers measurements (above), with another build of
echoperator in the peer's place, so a change is read against the code it changes within one run
rather than across runs. Values are medians over the rounds; **ours / baseline** is the median of
the per-round ratios (min .. max); a ratio whose range holds 1.0 is a change within the rounds' spread.

${table(['measure', 'echoperator', 'baseline', 'ours / baseline', 'Events per Echo, ours / baseline'], withoutGoals)}

${measured.details.join('\n\n')}`,
  };
}
