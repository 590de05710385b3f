/**
 * Runtimes: the same bundle on each supported Node line (scripts/ship/runtimes.ts NODE_LINES), to pick
 * the image's Node by measurement. Every line runs the peers bench's measurements (peers.ts:
 * idle, a backlog of N Echos, a fresh process over N reconciled Echos + Jobs) on the same control
 * plane, in rotated order per round (inTurn), each run in a fresh namespace. CPU-seconds come from
 * /proc/<pid>/stat and RSS from /proc/<pid>/status, so they count the operator process alone and
 * move far less with the machine's load than wall times; every ratio is the median of per-round
 * ratios against the first line (the image's Node before this measurement).
 */
import { createNamespace, deleteNamespace, log, median, mib, now, ratioCell, secs, table, type BenchEnv } from './common.js';
import { inTurn, type Contestant } from './contestants.js';
import { backlogRun, IDLE_WINDOWS_TEXT, idleRun, memoryRun, type Run } from './peers.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { createReconciledEchos } from './workload.js';
import { NODE_LINES, nodeBinary, nodeMajor } from '../../ship/runtimes.js';

export interface RuntimesOptions {
  /** Echos in the backlog run and in the fresh-process run. */
  n: number;
  rounds: number;
  workers: number;
  createConcurrency: number;
}

/** The bench's operator command with its runtime swapped for each supported Node line. */
export function lineContestants(env: BenchEnv, lines: readonly string[] = NODE_LINES): Contestant[] {
  if (env.operator.kind === 'source') throw new Error('runtimes: run the bundle, not --from-source (tsx would be measured too)');
  const script = env.operator.argv.slice(1);
  return lines.map((version) => {
    const node = nodeBinary(version);
    if (!node.path) throw new Error(`runtimes: Node ${version} is unavailable: ${node.reason}`);
    return {
      name: `Node ${nodeMajor(version)}`,
      env: { ...env, operator: { argv: [node.path, ...script], kind: 'custom', describe: `Node v${version} ${script.join(' ')}` } },
      userAgent: 'echoperator/',
    };
  });
}

type Rounds = Map<string, Run>[];

async function rounds(cs: Contestant[], count: number, what: string, measure: (c: Contestant) => Promise<Run>): Promise<Rounds> {
  const out: Rounds = [];
  for (let r = 0; r < count; r++) {
    log(`runtimes: ${what}, round ${r + 1}/${count}`);
    const round = new Map<string, Run>();
    for (const c of inTurn(cs, r)) round.set(c.name, await measure(c));
    out.push(round);
  }
  return out;
}

/** A row: each line's median, then each later line's median per-round ratio against the first. */
function row(what: string, cs: Contestant[], rs: Rounds, f: (r: Run) => number | undefined, fmt: (x: number) => string): string[] {
  const of = (name: string): number[] => rs.map((r) => f(r.get(name)!)).filter((x): x is number => x !== undefined && Number.isFinite(x));
  const first = cs[0]!.name;
  const ratios = cs
    .slice(1)
    .map((c) => ratioCell(rs.map((r) => (f(r.get(c.name)!) ?? NaN) / (f(r.get(first)!) ?? NaN)).filter(Number.isFinite)));
  return [what, ...cs.map((c) => fmt(median(of(c.name)))), ...ratios];
}

const cpuS = (x: number): string => `${x.toFixed(2)} s`;

export async function runtimes(env: BenchEnv, opts: RuntimesOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const cs = lineContestants(env);
  log(`runtimes: ${cs.map((c) => c.env.operator.describe).join(' | ')}; NUM_WORKERS=${opts.workers}, ${opts.rounds} rounds`);
  const rows: string[][] = [];

  const idle = await rounds(cs, opts.rounds, 'idle', (c) => idleRun(c, opts.workers));
  rows.push(
    row(
      'spawn -> /readyz (caches synced, empty namespace)',
      cs,
      idle,
      (r) => r.ms,
      (x) => secs(x, 3),
    ),
  );
  rows.push(row('RSS idle (caches synced, empty)', cs, idle, (r) => r.rss, mib));
  rows.push(
    row(
      `CPU idle (ms per second ${IDLE_WINDOWS_TEXT.idle})`,
      cs,
      idle,
      (r) => r.idleCpuMsPerS,
      (x) => `${x.toFixed(2)} ms/s`,
    ),
  );

  const n = opts.n;
  const backlog = await rounds(cs, opts.rounds, `backlog N=${n}`, (c) => backlogRun(c, n, { ...opts, rss: true }));
  rows.push(
    row(
      `backlog ${n}: spawn -> all Jobs and statuses`,
      cs,
      backlog,
      (r) => r.ms,
      (x) => secs(x),
    ),
  );
  rows.push(row(`backlog ${n}: operator CPU-seconds until settled`, cs, backlog, (r) => r.operatorCpuSettled, cpuS));
  rows.push(row(`RSS after the backlog of ${n} (queue empty 5 s)`, cs, backlog, (r) => r.rss, mib));

  const ns = await createNamespace(env, 'bench-runtimes-memory');
  try {
    const t0 = now();
    await createReconciledEchos(env, ns, n, opts.createConcurrency, { suspend: true });
    log(`runtimes: ${n} reconciled Echos and suspended Jobs made in ${secs(now() - t0)}`);
    const mem = await rounds(cs, opts.rounds, `fresh process over ${n}`, (c) => memoryRun(c, ns, n, opts.workers));
    rows.push(row(`fresh process over ${n} Echos + ${n} Jobs: RSS`, cs, mem, (r) => r.rss, mib));
    rows.push(row(`fresh process over ${n} + ${n}: CPU-seconds until settled`, cs, mem, (r) => r.operatorCpu, cpuS));
  } finally {
    await deleteNamespace(env, ns, { timeoutMs: 300_000 });
  }

  const first = cs[0]!.name;
  return [
    {
      id: 'runtimes',
      markdown: `## Runtimes: the image's Node

${provenance(env, m, `${opts.rounds} rounds, the lines in rotated order. NUM_WORKERS=${opts.workers}. `, load)}
Load average at the end: ${loadLine()}.

The same bundle on each supported Node line (\`npm run bench -- runtimes\`, scripts/lab/bench/runtimes.ts), with the peers
bench's measurements. CPU-seconds are the operator process's own (/proc/<pid>/stat), RSS its VmRSS; values are medians
over the rounds, and **x / ${first}** the median of the per-round ratios (min .. max): below 1 is less than ${first}.

${table(['measure', ...cs.map((c) => c.name), ...cs.slice(1).map((c) => `${c.name} / ${first}`)], rows)}`,
    },
  ];
}
