/**
 * npm run bench [-- BENCHMARK... --n N[,N...] --runs R ...]: the benchmarks of issue 7, each
 * printing ratios measured side by side in the same run, written to docs/benchmarks.md (only
 * this tool's sections; see report.ts). `npm run bench -- --help` explains the options.
 */
import { parseArgs } from 'node:util';
import { formatDuration } from '../../ship/errors.js';
import { installCrds, installSignalHandlers, isInterrupted, log, now, openEnv, runCleanups, type BenchEnv } from './common.js';
import { PEER_PARTS, peerPart, type PeerPart } from './peer-parts.js';
import { updateDoc, type Section } from './report.js';
import { faultOptions, type CampaignOptions } from '../faults/campaign-options.js';
import { MODES, type Mode } from './fairness-modes.js';

const BENCHMARKS = [
  'throughput',
  'restart',
  'memory',
  'failover',
  'startup',
  'peers',
  'fairness',
  'transport',
  'latency',
  'connections',
  'pipelining',
  'tokens',
  'scrapes',
  'runtimes',
  'faults',
] as const;
type Benchmark = (typeof BENCHMARKS)[number];
/** Run only when named: latency needs a node, fairness takes ~45 minutes, runtimes needs every Node line, faults restarts its control plane. */
const ON_REQUEST: readonly Benchmark[] = ['fairness', 'latency', 'runtimes', 'faults'];

const HELP = `usage: npm run bench -- [BENCHMARK...] [options]

Benchmarks (default: all but fairness, latency, runtimes and faults, in this order):
  throughput   N Echos at once: operator vs a bare client doing the same writes   (N: 1000,5000)
  restart      restart over N reconciled Echos: time to ready, API writes (goal 0)  (N: 1000)
  memory       RSS idle and with N Echos + N Jobs cached, bytes per object        (N: 10000)
               with --annotations K instead: RSS over N plain Echos vs N Echos carrying K KiB of
               annotations each, a fresh operator over each                     (N: 1000)
  failover     HA handover (SIGTERM) and takeover (SIGKILL), default and short lease settings
  startup      process start -> /readyz -> first Job, next to \`node -e 0\`
  peers        next to a controller-runtime controller (scripts/lab/bench/peer): backlog, live, CPU, RSS,
               restart writes, in alternating rounds                          (N: 1000,5000)
  fairness     a user's Echo behind another namespace's backlog: ours (fair queue, and
               WORK_QUEUE_ORDER=fifo) next to the peer, restart over N1 Echos and a flood of N2,
               probe latency, backlog time, reconciles, CPU, Events; a chart  (N: 10000,5000)
  transport    CPU per request, client and kube-apiserver: HTTP/1.1 vs HTTP/2 vs RestClient
               (N: requests per run, default 3000; --workers: in flight, default 4)
  latency      an Echo's POST -> its message in the pod's log, ours and the peer's (needs a node;
               the cluster gets one: run it alone, or with --private-cluster)
  connections  idle TCP and TLS floods at the metrics and probe servers: RSS, closes, /readyz  (N: 3000)
  pipelining   pipelined requests from 4 addresses at the probe server, never read: RSS, /readyz
               (N: requests per connection, 100000; BASELINE_CMD adds a row)
  tokens       random bearer tokens at the metrics endpoint for 15 s while a valid scraper scrapes:
               reviews caused, the scraper's answers (BASELINE_CMD adds a row)
  scrapes      N scrapes with random tokens while the API server's access reviews hang: the Lease's
               and a reconcile's latency unloaded and under the flood, the lease kept  (N: 800)
  runtimes     the bundle on each supported Node line: idle, backlog and fresh-process CPU and RSS,
               against the first line, to pick the image's Node                (N: 1000)
  faults       the fault campaign (issues 35, 42) on a private control plane: seeded schedules of fault
               classes against each program, judged by invariants from the audit log; writes
               docs/reliability.md and docs/reliability-timeline.svg (not docs/benchmarks.md)

Options:
  --n LIST            Echos per run, e.g. 1000 or 1000,5000 (throughput runs each; fairness takes the
                      restart's and the flood's, the flood half the restart's if one is given;
                      others take the first)
  --runs R            repetitions: throughput, peers, fairness and transport rounds (default 3), failover and
                      startup runs (default 5)
  --workers LIST      the operator's NUM_WORKERS and the bare client's concurrency; throughput measures
                      each (default 4,16), restart and memory take the first (default 4)
  --concurrency C     requests in flight when the bench creates objects (default 50)
  --live-n N          peers: Echos created at a fixed rate while the operators run (default 1000)
  --live-rate R       peers: that rate, Echos per second (default 100)
  --annotations K     memory: the annotations comparison (K KiB per Echo, at most 256 including keys)
                      instead of the usual memory run
  --parts LIST        peers: which of idle, backlog, live, memory to measure (default all)
  --label NAME        peers: the section's name is peers:<parts>:<NAME> (several runs of one part side by side)
  --memory-n LIST     peers: reconciled Echos + Jobs under a fresh process: RSS, restart writes
                      (default 1000,10000)
  --modes LIST        fairness: restart, flood or both, in that order (default restart,flood)
  --samples S         latency: Echos per operator; fairness: probe Echos per run (default 20)
  --private-cluster   start a private control plane for this run instead of reusing \`cluster:up\`'s
  --from-source       run the operator through tsx (memory still bundles)
  --schedules N       faults: schedules per program (default 300)
  --programs LIST     faults: echoperator, controller-runtime-naive, controller-runtime-advised,
                      go-echoperator, mutant:<name> (default: the first three); several programs
                      play the same schedule ids, interleaved, on the workloads all of them handle
  --classes LIST      faults: intermediate, stale, unobserved, restart, partition, overload, late,
                      ambiguous, refusal, recreate, ttl, stale-apiserver, generated (default all)
  --seed S            faults: the campaign's seed (default 1)
  --replay ID:SEED    faults: play that one schedule (as a violation prints it) and write no doc
  --mutants           faults: also score the mutants, each against the whole of its classes per seed
  --mutant-seeds LIST faults: the seeds the mutants are played with (default: S and S+1)
  --mutant-schedules N faults: schedules per class and seed for each mutant (default: the whole
                      class, as many as the first program met)
  --no-docs           print only; do not update docs/benchmarks.md
  --docs PATH         write to PATH instead of docs/benchmarks.md

The operator runs from dist/bundle/echoperator.js when it exists and is newer than src/, else
from a temporary esbuild bundle of src/; ECHOPERATOR_CMD='["node","x.js"]' overrides.
BASELINE_CMD='["node","/old/dist/bundle/echoperator.js"]' puts that build of ours in the peer's place in
\`peers\` (its own section, "Against a baseline build of ours"), to measure a change against the code it changes.
Ctrl-C kills the operators and deletes the namespaces.`;

interface Options {
  benchmarks: Benchmark[];
  sizes: number[] | undefined;
  runs: number | undefined;
  /** undefined: each benchmark's default. */
  workers: number[] | undefined;
  concurrency: number;
  liveN: number;
  liveRate: number;
  memorySizes: number[];
  peerParts: PeerPart[];
  peerLabel: string | undefined;
  annotationsKiB: number | undefined;
  samples: number;
  fairnessModes: Mode[];
  privateCluster: boolean;
  fromSource: boolean;
  docs: string | undefined;
  faults: Omit<CampaignOptions, 'docs'>;
}

function parse(argv: string[]): Options | undefined {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      n: { type: 'string' },
      runs: { type: 'string' },
      workers: { type: 'string' },
      concurrency: { type: 'string' },
      'live-n': { type: 'string' },
      'live-rate': { type: 'string' },
      'memory-n': { type: 'string' },
      parts: { type: 'string' },
      label: { type: 'string' },
      annotations: { type: 'string' },
      samples: { type: 'string' },
      modes: { type: 'string' },
      'private-cluster': { type: 'boolean', default: false },
      'from-source': { type: 'boolean', default: false },
      'no-docs': { type: 'boolean', default: false },
      docs: { type: 'string' },
      schedules: { type: 'string' },
      programs: { type: 'string' },
      classes: { type: 'string' },
      seed: { type: 'string' },
      replay: { type: 'string' },
      mutants: { type: 'boolean', default: false },
      'mutant-seeds': { type: 'string' },
      'mutant-schedules': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return undefined;
  }
  const positiveInt = (what: string, v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer, got ${JSON.stringify(v)}`);
    return n;
  };
  for (const p of positionals)
    if (!(BENCHMARKS as readonly string[]).includes(p))
      throw new Error(`unknown benchmark ${JSON.stringify(p)}; choose from ${BENCHMARKS.join(', ')}`);
  return {
    benchmarks: positionals.length ? BENCHMARKS.filter((b) => positionals.includes(b)) : BENCHMARKS.filter((b) => !ON_REQUEST.includes(b)),
    sizes: values.n?.split(',').map((s) => positiveInt('--n', s.trim())),
    runs: values.runs ? positiveInt('--runs', values.runs) : undefined,
    workers: values.workers?.split(',').map((s) => positiveInt('--workers', s.trim())),
    concurrency: values.concurrency ? positiveInt('--concurrency', values.concurrency) : 50,
    liveN: values['live-n'] ? positiveInt('--live-n', values['live-n']) : 1000,
    liveRate: values['live-rate'] ? positiveInt('--live-rate', values['live-rate']) : 100,
    annotationsKiB: values.annotations ? annotationsKiB(positiveInt('--annotations', values.annotations)) : undefined,
    peerLabel: values.label,
    peerParts: values.parts === undefined ? [...PEER_PARTS] : values.parts.split(',').map((v) => peerPart(v.trim())),
    memorySizes: values['memory-n']?.split(',').map((v) => positiveInt('--memory-n', v.trim())) ?? [1000, 10_000],
    samples: values.samples ? positiveInt('--samples', values.samples) : 20,
    fairnessModes: values.modes ? fairnessModes(values.modes) : [...MODES],
    privateCluster: values['private-cluster'] ?? false,
    fromSource: values['from-source'] ?? false,
    docs: values['no-docs'] ? undefined : (values.docs ?? 'docs/benchmarks.md'),
    faults: faultOptions(values, positiveInt),
  };
}

/** --modes: a comma-separated subset of MODES, run in MODES' order. */
function fairnessModes(list: string): Mode[] {
  const named = list.split(',').map((s) => s.trim());
  for (const m of named)
    if (!(MODES as readonly string[]).includes(m))
      throw new Error(`--modes takes ${MODES.join(', ')} (comma-separated), got ${JSON.stringify(m)}`);
  return MODES.filter((m) => named.includes(m));
}

/** The API server refuses more than 256 KiB of annotations (keys and values) on one object. */
function annotationsKiB(k: number): number {
  if (k > 255) throw new Error(`--annotations must be at most 255 (KiB per Echo; the API server allows 256 KiB in all), got ${k}`);
  return k;
}

async function runOne(env: BenchEnv, b: Benchmark, o: Options): Promise<Section[]> {
  switch (b) {
    case 'throughput': {
      const { throughput } = await import('./throughput.js');
      return throughput(env, {
        sizes: o.sizes ?? [1000, 5000],
        rounds: o.runs ?? 3,
        workers: o.workers ?? [4, 16],
        createConcurrency: o.concurrency,
      });
    }
    case 'restart': {
      const { restart } = await import('./restart.js');
      return restart(env, { n: o.sizes?.[0] ?? 1000, workers: o.workers?.[0] ?? 4, createConcurrency: o.concurrency });
    }
    case 'memory': {
      if (o.annotationsKiB) {
        const { annotatedMemory } = await import('./memoryannotated.js');
        return annotatedMemory(env, {
          n: o.sizes?.[0] ?? 1000,
          kib: o.annotationsKiB,
          workers: o.workers?.[0] ?? 4,
          createConcurrency: o.concurrency,
        });
      }
      const { memory } = await import('./memory.js');
      return memory(env, { n: o.sizes?.[0] ?? 10_000, workers: o.workers?.[0] ?? 4, createConcurrency: o.concurrency });
    }
    case 'failover': {
      const { failover } = await import('./failover.js');
      return failover(env, { runs: o.runs ?? 5 });
    }
    case 'startup': {
      const { startup } = await import('./startup.js');
      return startup(env, { runs: o.runs ?? 5 });
    }
    case 'peers': {
      const { peers } = await import('./peers.js');
      return peers(env, {
        sizes: o.sizes ?? [1000, 5000],
        rounds: o.runs ?? 3,
        workers: o.workers?.[0] ?? 4,
        createConcurrency: o.concurrency,
        liveN: o.liveN,
        livePerSecond: o.liveRate,
        memorySizes: o.memorySizes,
        parts: o.peerParts,
        label: o.peerLabel,
      });
    }
    case 'fairness': {
      const { fairness, CHART_FILE } = await import('./fairness.js');
      return fairness(env, {
        restartN: o.sizes?.[0] ?? 10_000,
        floodN: o.sizes?.[1] ?? Math.ceil((o.sizes?.[0] ?? 10_000) / 2),
        probes: o.samples,
        probeIntervalMs: 500,
        probeDelayMs: 1000,
        rounds: o.runs ?? 3,
        modes: o.fairnessModes,
        workers: o.workers?.[0] ?? 4,
        createConcurrency: o.concurrency,
        chart: CHART_FILE,
      });
    }
    case 'transport': {
      const { transport } = await import('./transport.js');
      return transport(env, { requests: o.sizes?.[0] ?? 3000, rounds: o.runs ?? 3, concurrency: o.workers?.[0] ?? 4 });
    }
    case 'latency': {
      const { latency } = await import('./latency.js');
      return latency(env, { samples: o.samples, workers: o.workers?.[0] ?? 4 });
    }
    case 'connections':
      return (await import('./connections.js')).connections(env, { n: o.sizes?.[0] ?? 3000 });
    case 'pipelining':
      return (await import('./pipelining.js')).pipelining(env, { requests: o.sizes?.[0] ?? 100_000, phaseMs: 20_000 });
    case 'tokens':
      return (await import('./tokens.js')).tokens(env, { floodMs: 15_000 });
    case 'scrapes':
      return (await import('./scrapes.js')).scrapes(env, { scrapes: o.sizes?.[0] ?? 800, phaseMs: 20_000, probeEveryMs: 1_000 });
    case 'faults': {
      // It writes docs/reliability.md itself (or --docs PATH), never docs/benchmarks.md.
      const { faultCampaign } = await import('../faults/campaign.js');
      await faultCampaign(env, { ...o.faults, docs: o.docs && (o.docs === 'docs/benchmarks.md' ? 'docs/reliability.md' : o.docs) });
      return [];
    }
    case 'runtimes':
      return (await import('./runtimes.js')).runtimes(env, {
        n: o.sizes?.[0] ?? 1000,
        rounds: o.runs ?? 3,
        workers: o.workers?.[0] ?? 4,
        createConcurrency: o.concurrency,
      });
  }
}

async function main(): Promise<number> {
  const o = parse(process.argv.slice(2));
  if (!o) return 0;
  installSignalHandlers();
  const started = now();
  const env = await openEnv({
    privateCluster: o.privateCluster || o.benchmarks.includes('faults'),
    fromSource: o.fromSource,
    node: o.benchmarks.includes('latency'),
  });
  log(`operator: ${env.operator.describe}; Kubernetes ${env.kubernetesVersion}; benchmarks: ${o.benchmarks.join(', ')}`);
  if (env.operator.kind === 'source') log('note: the operator runs through tsx (slower start, ~90 MB more memory)');
  let failed = false;
  try {
    await installCrds(env);
    for (const b of o.benchmarks) {
      if (isInterrupted()) break;
      const t = now();
      try {
        const sections = await runOne(env, b, o);
        log(`${b}: finished in ${formatDuration(now() - t)}`);
        console.log(`\n${sections.map((s) => s.markdown).join('\n\n')}\n`);
        if (o.docs && sections.length) {
          updateDoc(o.docs, sections, BENCHMARKS);
          log(`${b}: ${o.docs} updated (sections ${sections.map((s) => s.id).join(', ')})`);
        }
      } catch (err) {
        if (isInterrupted()) break;
        failed = true;
        log(`${b} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
  } finally {
    await runCleanups();
    env.rest.close();
  }
  log(`all done in ${formatDuration(now() - started)}`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    await runCleanups();
    process.exit(1);
  },
);
