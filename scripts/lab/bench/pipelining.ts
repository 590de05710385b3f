/**
 * Pipelining (issue 44, item 1): a pipelined flood against the operator's probe port while a
 * kubelet-like client polls /readyz.
 *
 * SOURCES loopback addresses (127.0.0.2 and on; /readyz is polled from 127.0.0.1, as the kubelet
 * probes from the node's address) each hold CONNECTIONS_PER_SOURCE connections; each connection
 * writes `requests` pipelined `GET /healthz` at once, again whenever that write was taken, and
 * never reads; when the server closes it (a write fails), it connects and does the same again,
 * until the phase ends. Measured: the operator's idle
 * RSS (mean over IDLE_SAMPLE_MS) cold (after as long a rest from ready) and warm (after
 * WARMUP_MS of kubelet-style probes back to back and REST_MS of rest), its peak VmRSS during the
 * warm-up and during the flood until SETTLE_MS after it (sampled every POLL_MS), /readyz answers
 * (a new connection each, every POLL_MS, 1 s timeout: the kubelet's defaults) and the slowest of
 * them, the connections the flood opened. BASELINE_CMD runs the same against another build (e.g.
 * the commit before the change), as a row of its own.
 *
 * The flood's growth is counted from the warm idle RSS, less what V8's young generation holds
 * then over what it held cold (the operator's nodejs_heap_space_size_total_bytes{space="new"}).
 * Why not from the cold idle RSS: a process that has served nothing yet pays, at its first burst
 * of any traffic, for what that first work brings in, and counted from its cold idle RSS the
 * flood's growth was mostly that (+13 to +20 MiB on Node 24; kubelet-style probes at the flood's
 * pace reached the same peak as the flood). In /proc/<pid>/smaps, between the cold idle and the
 * flood: +5.4 MiB of Node's executable (file-backed, reclaimable: the code the HTTP, compiler and
 * GC paths run from, paged in on first use), +5 MiB in the malloc arenas of V8's compiler and GC
 * threads (kept by glibc once used), and the young generation, which V8 grows to its working size
 * under load (16 MiB here) and shrinks when its memory reducer runs, which it may not do after
 * the warm-up. A running operator has paid the first two long before a flood; the third the
 * flood may pay again, so it stays counted, from its cold size, whatever V8 did after the warm-up.
 * The cold idle RSS and the warm-up's peak stay in the table.
 */
import { get } from 'node:http';
import { connect as connectTcp } from 'node:net';
import { baseline, ours, type Contestant } from './contestants.js';
import {
  createNamespace,
  deleteNamespace,
  log,
  mib,
  now,
  secs,
  sleep,
  startOperator,
  operatorMetrics,
  table,
  vmRssBytes,
  waitReady,
  type BenchEnv,
  type OperatorHandle,
} from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';

export interface PipeliningOptions {
  /** Pipelined requests each connection writes at once. */
  requests: number;
  /** Length of the flood. */
  phaseMs: number;
}

const SOURCES = 4;
const CONNECTIONS_PER_SOURCE = 8;
const IDLE_SAMPLE_MS = 5_000;
const SETTLE_MS = 2_000;
/** Kubelet-style probes back to back before the warm idle RSS: as many loops as flooding connections per address. */
const WARMUP_MS = 10_000;
const WARMUP_CLIENTS = 8;
/** From the warm-up to the warm idle sample: longer than V8's memory reducer waits (8 s), when it runs, to shrink the young generation. */
const REST_MS = 15_000;
const POLL_MS = 100;
const PROBE_TIMEOUT_MS = 1_000;
/** The goals of issue 44: RSS growth under this, every /readyz answered within PROBE_TIMEOUT_MS. */
const RSS_GROWTH_GOAL = 20 * 1_048_576;
const REQUEST = 'GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n';

/** What the flood's growth is counted from. */
export interface FloodMemory {
  /** The warm idle RSS. */
  idleRss: number;
  /** The flood's peak RSS. */
  peakRss: number;
  /** What V8's young generation holds (committed) at the cold and at the warm idle; undefined when not read. */
  coldYoung: number | undefined;
  warmYoung: number | undefined;
}

interface Outcome extends FloodMemory {
  build: string;
  /** What ran: the command, for the report. */
  command: string;
  coldIdleRss: number;
  warmupProbes: number;
  warmupPeakRss: number;
  readyOk: number;
  readyFailed: number;
  /** The failed ones by reason. */
  readyFailures: string;
  slowestReadyMs: number;
  opened: number;
  exited: boolean;
}

export async function pipelining(env: BenchEnv, opts: PipeliningOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const ns = await createNamespace(env, 'bench-pipelining');
  const outcomes: Outcome[] = [];
  try {
    const builds = [ours(env), baseline(env)].filter((c): c is Contestant => c !== undefined);
    for (const build of builds) outcomes.push(await runBuild(build, ns, opts));
  } finally {
    await deleteNamespace(env, ns, { wait: false });
  }
  return [{ id: 'pipelining', markdown: report(env, m, load, opts, outcomes) }];
}

async function runBuild(build: Contestant, ns: string, opts: PipeliningOptions): Promise<Outcome> {
  const op = await startOperator(build.env, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
  try {
    await waitReady(op);
    await sleep(IDLE_SAMPLE_MS);
    const coldIdleRss = await meanRss(op.pid, IDLE_SAMPLE_MS);
    const coldYoung = await youngGeneration(op);
    const warmupPeak = peakRssOf(op.pid);
    const warmupProbes = await warmUp(op.healthPort);
    const warmupPeakRss = await warmupPeak.stop();
    await sleep(REST_MS);
    const idleRss = await meanRss(op.pid, IDLE_SAMPLE_MS);
    const warmYoung = await youngGeneration(op);
    const peak = peakRssOf(op.pid);
    let stopped = false;
    const answers: (number | string)[] = [];
    const probing = (async () => {
      while (!stopped) {
        answers.push(await readyz(op.healthPort));
        await sleep(POLL_MS);
      }
    })();
    const payload = Buffer.from(REQUEST.repeat(opts.requests));
    const floodEnds = now() + opts.phaseMs;
    let opened = 0;
    const flooders = Array.from({ length: SOURCES * CONNECTIONS_PER_SOURCE }, async (_, i) => {
      const localAddress = `127.0.0.${2 + (i % SOURCES)}`;
      while (now() < floodEnds && op.alive()) {
        opened++;
        await pipelineOnce(op.healthPort, localAddress, payload, floodEnds);
      }
    });
    await Promise.all(flooders);
    await sleep(SETTLE_MS);
    stopped = true;
    const [peakRss] = await Promise.all([peak.stop(), probing]);
    const ok = answers.filter((a) => typeof a === 'number');
    const outcome: Outcome = {
      build: build.name,
      command: build.env.operator.describe,
      coldIdleRss,
      warmupProbes,
      warmupPeakRss,
      idleRss,
      coldYoung,
      warmYoung,
      peakRss,
      readyOk: ok.length,
      readyFailed: answers.length - ok.length,
      readyFailures: failures(answers),
      slowestReadyMs: Math.max(0, ...ok),
      opened,
      exited: !op.alive(),
    };
    log(
      `  ${build.name}: cold idle RSS ${mib(coldIdleRss)}, warm-up (${warmupProbes} probes) peak ${mib(warmupPeakRss)}, warm idle RSS ${mib(idleRss)} (young generation +${mib(youngExcess(outcome))}), flood peak ${mib(peakRss)} (+${mib(floodGrowth(outcome))}); /readyz ${outcome.readyOk} ok / ${outcome.readyFailed} failed${outcome.readyFailed ? ` (${outcome.readyFailures})` : ''}, slowest ${secs(outcome.slowestReadyMs)}; ${opened} connections${outcome.exited ? `; the operator exited:\n${op.tail()}` : ''}`,
    );
    return outcome;
  } finally {
    await op.stop('SIGTERM');
  }
}

/** What the young generation holds at the warm idle over its cold size (V8 may not have shrunk it after the warm-up); undefined when not read. */
export function youngExcess(m: FloodMemory): number | undefined {
  return m.coldYoung === undefined || m.warmYoung === undefined ? undefined : Math.max(0, m.warmYoung - m.coldYoung);
}

/**
 * The flood's growth: its peak over the warm idle RSS less the young generation's excess then, so
 * that the young generation's regrowth counts whether V8 had shrunk it after the warm-up or not.
 */
export function floodGrowth(m: FloodMemory): number {
  return m.peakRss - (m.idleRss - (youngExcess(m) ?? 0));
}

/** What V8's young generation holds (committed), from the operator's own metrics; undefined when unread. */
async function youngGeneration(op: OperatorHandle): Promise<number | undefined> {
  const samples = await operatorMetrics(op).catch(() => undefined);
  const young = samples?.find((s) => s.name === 'nodejs_heap_space_size_total_bytes' && s.labels['space'] === 'new');
  return young?.value;
}

/** The mean VmRSS of `pid` over `ms`, sampled every POLL_MS. */
async function meanRss(pid: number, ms: number): Promise<number> {
  const samples: number[] = [];
  const until = now() + ms;
  while (now() < until) {
    const rss = vmRssBytes(pid);
    if (rss !== undefined) samples.push(rss);
    await sleep(POLL_MS);
  }
  return samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);
}

/** Samples the VmRSS of `pid` every POLL_MS until stop(), which resolves with the peak. */
function peakRssOf(pid: number): { stop(): Promise<number> } {
  let stopped = false;
  let peak = 0;
  const sampling = (async () => {
    while (!stopped) {
      peak = Math.max(peak, vmRssBytes(pid) ?? 0);
      await sleep(POLL_MS);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await sampling;
      return peak;
    },
  };
}

/**
 * For WARMUP_MS, WARMUP_CLIENTS loops each send kubelet-style probes of /healthz back to back, from
 * the flood's addresses: traffic a server answers in full, at about the flood's pace of new
 * connections. Resolves with the number of probes sent.
 */
async function warmUp(port: number): Promise<number> {
  const ends = now() + WARMUP_MS;
  let sent = 0;
  const loops = Array.from({ length: WARMUP_CLIENTS }, async (_, i) => {
    while (now() < ends) {
      sent++;
      await probe(port, '/healthz', `127.0.0.${2 + (i % SOURCES)}`);
    }
  });
  await Promise.all(loops);
  return sent;
}

/**
 * One connection that writes `payload`, again each time the last write is taken, and never reads
 * (so it learns of a close only when a write fails); resolves when it closes, or is destroyed at
 * `until`.
 */
function pipelineOnce(port: number, localAddress: string, payload: Buffer, until: number): Promise<void> {
  return new Promise((resolve) => {
    const send = (): void => {
      if (!socket.destroyed && now() < until) socket.write(payload, (err) => !err && send());
    };
    const socket = connectTcp({ host: '127.0.0.1', port, localAddress }, send);
    socket.pause();
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), Math.max(0, until - now()));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A /readyz probe from 127.0.0.1 (the node's address, which the flood does not use). */
function readyz(port: number): Promise<number | string> {
  return probe(port, '/readyz');
}

/**
 * One kubelet-style probe: a connection of its own; resolves with the ms to a 200 within
 * PROBE_TIMEOUT_MS, or why not (the status, "timeout", "late", an error's code).
 */
function probe(port: number, path: string, localAddress?: string): Promise<number | string> {
  const started = now();
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, localAddress, agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => {
        const ms = now() - started;
        resolve(res.statusCode !== 200 ? `status ${res.statusCode}` : ms > PROBE_TIMEOUT_MS ? 'late' : ms);
      });
      res.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** "3 × timeout, 1 × ECONNRESET": the failures by reason. */
function failures(answers: readonly (number | string)[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) if (typeof a === 'string') counts.set(a, (counts.get(a) ?? 0) + 1);
  return [...counts].map(([why, n]) => `${n} × ${why}`).join(', ');
}

function report(env: BenchEnv, m: ReturnType<typeof machine>, load: string, opts: PipeliningOptions, outcomes: Outcome[]): string {
  const yes = (ok: boolean): string => (ok ? 'yes' : '**no**');
  const rows = outcomes.map((o) => [
    o.build,
    mib(o.coldIdleRss),
    `${mib(o.warmupPeakRss)} (${o.warmupProbes})`,
    `${mib(o.idleRss)} (${youngExcess(o) === undefined ? 'n/a' : `+${mib(youngExcess(o))}`})`,
    `${mib(o.peakRss)} (+${mib(floodGrowth(o))}, ${yes(floodGrowth(o) < RSS_GROWTH_GOAL)})`,
    `${o.readyOk} / ${o.readyFailed} (${o.readyFailed === 0 ? 'yes' : `**no**: ${o.readyFailures}`})`,
    secs(o.slowestReadyMs),
    String(o.opened),
    o.exited ? '**yes**' : 'no',
  ]);
  return `## Pipelining: a pipelined flood against the probe server

${provenance(env, m, '', load)}

Each build runs as a fresh operator. Its cold idle RSS is the mean over ${secs(IDLE_SAMPLE_MS, 0)} after ${secs(IDLE_SAMPLE_MS, 0)} of rest from ready. Then, for ${secs(WARMUP_MS, 0)}, ${WARMUP_CLIENTS} loops from the flood's addresses send kubelet-style probes of /healthz back to back, a new connection each (the warm-up: traffic the server answers in full, at about the flood's pace of connections); its warm idle RSS is the mean over ${secs(IDLE_SAMPLE_MS, 0)} after ${secs(REST_MS, 0)} of rest from that. The flood's peak is sampled every ${POLL_MS} ms from its start until ${secs(SETTLE_MS, 0)} after its end, and its growth is counted from the warm idle RSS less what V8's young generation then holds over its cold size (the operator's \`nodejs_heap_space_size_total_bytes{space="new"}\`): the first traffic of a fresh process brings in code and allocator arenas that any traffic needs (see the warm-up's peak) and that a running operator holds before a flood, while the young generation's regrowth stays counted (scripts/lab/bench/pipelining.ts says more). For ${secs(opts.phaseMs, 0)}, ${SOURCES} loopback addresses (127.0.0.2 to 127.0.0.${1 + SOURCES}) hold ${CONNECTIONS_PER_SOURCE} connections each; each connection writes ${opts.requests.toLocaleString('en-US')} pipelined \`GET /healthz\` at once, again whenever the write was taken, and never reads, and connects again once the server closes it (a write fails). Meanwhile /readyz is polled from 127.0.0.1 every ${POLL_MS} ms, a new connection each with a ${secs(PROBE_TIMEOUT_MS, 0)} timeout, as the kubelet probes. Goals (issue 44): RSS grows less than ${mib(RSS_GROWTH_GOAL)}, and every /readyz is answered 200 within ${secs(PROBE_TIMEOUT_MS, 0)}.

${outcomes.map((o) => `- ${o.build}: ${o.command}`).join('\n')}

${table(['build', 'cold idle RSS', 'warm-up peak RSS (probes)', 'warm idle RSS (young generation over cold)', 'flood peak RSS (growth under the goal)', '/readyz ok / failed (none failed)', 'slowest /readyz ok', 'flood connections', 'operator exited'], rows)}`;
}
