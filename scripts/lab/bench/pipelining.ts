/**
 * Pipelining (issue 44, item 1): a pipelined flood against the operator's probe port while a
 * kubelet-like client polls /readyz.
 *
 * SOURCES loopback addresses (127.0.0.2 and on; /readyz is polled from 127.0.0.1, as the kubelet
 * probes from the node's address) each hold CONNECTIONS_PER_SOURCE connections; each connection
 * writes `requests` pipelined `GET /healthz` at once, again whenever that write was taken, and
 * never reads; when the server closes it (a write fails), it connects and does the same again,
 * until the phase ends. Measured: the operator's idle
 * RSS (mean over IDLE_SAMPLE_MS after as long a rest from ready), its peak VmRSS during the flood
 * and until SETTLE_MS after it (sampled every POLL_MS), /readyz answers (a new connection each,
 * every POLL_MS, 1 s timeout: the kubelet's defaults) and the slowest of them, the connections
 * the flood opened. BASELINE_CMD runs the same against another build (e.g. the commit before the
 * change), as a row of its own.
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
  table,
  vmRssBytes,
  waitReady,
  type BenchEnv,
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
const POLL_MS = 100;
const PROBE_TIMEOUT_MS = 1_000;
/** The goals of issue 44: RSS growth under this, every /readyz answered within PROBE_TIMEOUT_MS. */
const RSS_GROWTH_GOAL = 20 * 1_048_576;
const REQUEST = 'GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n';

interface Outcome {
  build: string;
  /** What ran: the command, for the report. */
  command: string;
  idleRss: number;
  peakRss: number;
  readyOk: number;
  readyFailed: number;
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
    const idle: number[] = [];
    const idleUntil = now() + IDLE_SAMPLE_MS;
    while (now() < idleUntil) {
      const rss = vmRssBytes(op.pid);
      if (rss !== undefined) idle.push(rss);
      await sleep(POLL_MS);
    }
    const idleRss = idle.reduce((a, b) => a + b, 0) / Math.max(1, idle.length);
    let stopped = false;
    let peakRss = 0;
    const sampling = (async () => {
      while (!stopped) {
        peakRss = Math.max(peakRss, vmRssBytes(op.pid) ?? 0);
        await sleep(POLL_MS);
      }
    })();
    const answers: (number | undefined)[] = [];
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
    await Promise.all([sampling, probing]);
    const ok = answers.filter((ms) => ms !== undefined);
    const outcome: Outcome = {
      build: build.name,
      command: build.env.operator.describe,
      idleRss,
      peakRss,
      readyOk: ok.length,
      readyFailed: answers.length - ok.length,
      slowestReadyMs: Math.max(0, ...ok),
      opened,
      exited: !op.alive(),
    };
    log(
      `  ${build.name}: idle RSS ${mib(idleRss)}, peak ${mib(peakRss)}; /readyz ${outcome.readyOk} ok / ${outcome.readyFailed} failed, slowest ${secs(outcome.slowestReadyMs)}; ${opened} connections${outcome.exited ? `; the operator exited:\n${op.tail()}` : ''}`,
    );
    return outcome;
  } finally {
    await op.stop('SIGTERM');
  }
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

/** One kubelet-style probe: a connection of its own; resolves with the ms to a 200, or undefined. */
function readyz(port: number): Promise<number | undefined> {
  const started = now();
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/readyz', agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 && now() - started <= PROBE_TIMEOUT_MS ? now() - started : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(undefined));
  });
}

function report(env: BenchEnv, m: ReturnType<typeof machine>, load: string, opts: PipeliningOptions, outcomes: Outcome[]): string {
  const yes = (ok: boolean): string => (ok ? 'yes' : '**no**');
  const rows = outcomes.map((o) => [
    o.build,
    mib(o.idleRss),
    `${mib(o.peakRss)} (+${mib(o.peakRss - o.idleRss)}, ${yes(o.peakRss - o.idleRss < RSS_GROWTH_GOAL)})`,
    `${o.readyOk} / ${o.readyFailed} (${yes(o.readyFailed === 0)})`,
    secs(o.slowestReadyMs),
    String(o.opened),
    o.exited ? '**yes**' : 'no',
  ]);
  return `## Pipelining: a pipelined flood against the probe server

${provenance(env, m, '', load)}

Each build runs as a fresh operator. Its idle RSS is the mean over ${secs(IDLE_SAMPLE_MS, 0)} after ${secs(IDLE_SAMPLE_MS, 0)} of rest from ready; its peak is sampled every ${POLL_MS} ms from the flood's start until ${secs(SETTLE_MS, 0)} after its end. For ${secs(opts.phaseMs, 0)}, ${SOURCES} loopback addresses (127.0.0.2 to 127.0.0.${1 + SOURCES}) hold ${CONNECTIONS_PER_SOURCE} connections each; each connection writes ${opts.requests.toLocaleString('en-US')} pipelined \`GET /healthz\` at once, again whenever the write was taken, and never reads, and connects again once the server closes it (a write fails). Meanwhile /readyz is polled from 127.0.0.1 every ${POLL_MS} ms, a new connection each with a ${secs(PROBE_TIMEOUT_MS, 0)} timeout, as the kubelet probes. Goals (issue 44): RSS grows less than ${mib(RSS_GROWTH_GOAL)}, and every /readyz is answered 200 within ${secs(PROBE_TIMEOUT_MS, 0)}.

${outcomes.map((o) => `- ${o.build}: ${o.command}`).join('\n')}

${table(['build', 'idle RSS', 'peak RSS (growth under the goal)', '/readyz ok / failed (none failed)', 'slowest /readyz ok', 'flood connections', 'operator exited'], rows)}`;
}
