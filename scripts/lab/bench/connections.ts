/**
 * Connections (issue 32): idle connections against the operator's metrics server (HTTPS) and
 * probe server (HTTP), each flood in its own phase, while a kubelet-like client polls /readyz.
 *
 * Each phase opens N connections (at most IN_FLIGHT being opened at once) that complete the TCP
 * (and, for HTTPS, the TLS) handshake and then send nothing, from one loopback source address or
 * spread over SOURCES of them (127.0.x.y: the flood is loopback only; /readyz is polled from
 * 127.0.0.1, an address of its own, as the kubelet probes from the node's). Measured per phase:
 * a fresh operator's peak VmRSS (sampled every 100 ms) against its idle RSS before the flood,
 * the time from the phase's first connect until every connection is closed, the longest life of
 * one connection (the first-request deadline is 10 s), the connections refused by a cap (over
 * TLS: closed before their handshake; over TCP: within REFUSED_MS of their connect, since no
 * deadline closes one that fast), and /readyz
 * answers, ok and failed (a new connection each, 1 s timeout: the kubelet's defaults). A phase is
 * bounded: connections still open CLOSE_LIMIT_MS after the last was opened, or PHASE_LIMIT_MS
 * after the phase's start, are destroyed and reported.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { CONNECTION_LIMITS } from '../../../src/observability/connectionlimits.js';
import {
  createNamespace,
  deleteNamespace,
  log,
  mib,
  now,
  probe,
  secs,
  sleep,
  startOperator,
  table,
  vmRssBytes,
  waitReady,
  type BenchEnv,
  type OperatorHandle,
} from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';

export interface ConnectionsOptions {
  /** Connections per phase. */
  n: number;
}

const SOURCES = 30;
const IN_FLIGHT = 100;
/** Closed sooner than this after its connect: refused by a cap (the deadlines close a connection no sooner than 10 s). */
const REFUSED_MS = Math.min(CONNECTION_LIMITS.firstRequestMs, CONNECTION_LIMITS.handshakeMs) / 2;
/** What "closed within the deadline" allows over it, for the server's timers and this process's own event loop. */
const SLACK_MS = 1_000;
/** After the last connection was opened, its deadline and this long again for the closes to come in. */
const CLOSE_LIMIT_MS = CONNECTION_LIMITS.firstRequestMs + 20_000;
/** A phase's bound whatever happens, opening included (3,000 took 55 s at a load average of 70). */
const PHASE_LIMIT_MS = 180_000;
const IDLE_SAMPLE_MS = 5_000;
const POLL_MS = 100;
/** RSS may grow by this share of idle during a flood (the issue's goal). */
const RSS_GOAL = 0.1;

interface Phase {
  name: string;
  server: 'metrics' | 'probes';
  sources: string[];
}

interface Outcome {
  phase: Phase;
  connected: number;
  failedToConnect: number;
  refused: number;
  accepted: number;
  allClosedMs: number;
  longestLifeMs: number;
  leftOpen: number;
  idleRss: number;
  peakRss: number;
  readyOk: number;
  readyFailed: number;
}

/** Tags RSS samples and /readyz answers with the phase running when they were taken. */
class Monitor {
  phase = 'idle';
  readonly rss = new Map<string, number[]>();
  readonly ready = new Map<string, { ok: number; failed: number }>();
  private stopped = false;
  private readonly loops: Promise<void>[] = [];

  constructor(private readonly op: OperatorHandle) {
    this.loops.push(this.sampleRss(), this.pollReady());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  private async sampleRss(): Promise<void> {
    while (!this.stopped) {
      const rss = vmRssBytes(this.op.pid);
      if (rss !== undefined) this.rss.set(this.phase, [...(this.rss.get(this.phase) ?? []), rss]);
      await sleep(POLL_MS);
    }
  }

  private async pollReady(): Promise<void> {
    while (!this.stopped) {
      const phase = this.phase;
      const ok = await readyz(this.op.healthPort);
      const tally = this.ready.get(phase) ?? { ok: 0, failed: 0 };
      if (ok) tally.ok++;
      else tally.failed++;
      this.ready.set(phase, tally);
      await sleep(POLL_MS);
    }
  }
}

/** One kubelet-style probe: a connection of its own, 1 s to answer 200. */
async function readyz(port: number): Promise<boolean> {
  return (await probe(port, '/readyz', 1_000))?.status === 200;
}

/** Opens `n` idle connections and waits until the server closed them all, or the phase limit. */
async function flood(
  port: number,
  tls: boolean,
  sources: string[],
  n: number,
): Promise<Omit<Outcome, 'phase' | 'idleRss' | 'peakRss' | 'readyOk' | 'readyFailed'>> {
  const started = now();
  const sockets: Socket[] = [];
  const lives: number[] = [];
  let handshaken = 0;
  const closedAt: number[] = [];
  let failedToConnect = 0;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  let allIssued: () => void = () => undefined;
  const issued = new Promise<void>((resolve) => (allIssued = resolve));
  const allClosed = new Promise<void>((resolve) => {
    let closed = 0;
    const open = (i: number): void => {
      const options = { host: '127.0.0.1', port, localAddress: sources[i % sources.length] };
      const socket = tls ? connectTls({ ...options, rejectUnauthorized: false }) : connectTcp(options);
      sockets.push(socket);
      inFlight++;
      let connectedAt: number | undefined;
      let settled = false;
      const settle = (): void => {
        if (settled) return;
        settled = true;
        inFlight--;
        wake?.();
      };
      socket.once('connect', () => {
        connectedAt = now();
        if (!tls) settle();
      });
      socket.once('secureConnect', () => {
        handshaken++;
        settle();
      });
      socket.on('error', () => undefined);
      socket.once('close', () => {
        settle();
        if (connectedAt === undefined) failedToConnect++;
        else lives.push(now() - connectedAt);
        closedAt.push(now());
        if (++closed === n) resolve();
      });
    };
    void (async () => {
      for (let i = 0; i < n; i++) {
        while (inFlight >= IN_FLIGHT) await new Promise<void>((r) => (wake = r));
        open(i);
      }
      allIssued();
    })();
  });
  const limit = Promise.race([issued.then(() => sleep(CLOSE_LIMIT_MS)), sleep(PHASE_LIMIT_MS)]).then(() => 'limit' as const);
  const ended = await Promise.race([allClosed.then(() => 'closed' as const), limit]);
  const leftOpen = sockets.filter((s) => !s.closed).length;
  if (ended === 'limit') for (const s of sockets) s.destroy();
  // A TLS connection refused by a cap never gets its handshake; a TCP one is closed at once.
  const refused = tls ? lives.length - handshaken : lives.filter((ms) => ms < REFUSED_MS).length;
  return {
    connected: lives.length,
    failedToConnect,
    refused,
    accepted: lives.length - refused,
    allClosedMs: Math.max(...closedAt) - started,
    longestLifeMs: Math.max(0, ...lives),
    leftOpen,
  };
}

export async function connections(env: BenchEnv, opts: ConnectionsOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const ns = await createNamespace(env, 'bench-connections');
  const addresses = (third: number, count: number): string[] => Array.from({ length: count }, (_, i) => `127.0.${third}.${i + 1}`);
  const phases: Phase[] = [
    { name: 'metrics (HTTPS), one address', server: 'metrics', sources: addresses(1, 1) },
    { name: `metrics (HTTPS), ${SOURCES} addresses`, server: 'metrics', sources: addresses(2, SOURCES) },
    { name: 'probes (HTTP), one address', server: 'probes', sources: addresses(3, 1) },
    { name: `probes (HTTP), ${SOURCES} addresses`, server: 'probes', sources: addresses(4, SOURCES) },
  ];
  const outcomes: Outcome[] = [];
  try {
    // A fresh operator per phase: what one flood leaves in the heap does not count against the next.
    for (const phase of phases) outcomes.push(await runPhase(env, ns, phase, opts.n));
  } finally {
    await deleteNamespace(env, ns, { wait: false });
  }
  return [{ id: 'connections', markdown: report(env, m, load, opts, outcomes) }];
}

async function runPhase(env: BenchEnv, ns: string, phase: Phase, n: number): Promise<Outcome> {
  const op = await startOperator(env, { WATCH_NAMESPACES: ns, NAMESPACE: ns, METRICS_INSECURE_PLAIN_HTTP: 'false' });
  try {
    await waitReady(op);
    const monitor = new Monitor(op);
    try {
      // Startup's allocations settle first; idle is what the process holds with nothing to do.
      await sleep(IDLE_SAMPLE_MS);
      monitor.phase = 'idle';
      await sleep(IDLE_SAMPLE_MS);
      const idle = monitor.rss.get('idle') ?? [];
      const idleRss = idle.reduce((a, b) => a + b, 0) / Math.max(1, idle.length);
      monitor.phase = phase.name;
      const port = phase.server === 'metrics' ? op.metricsPort : op.healthPort;
      const result = await flood(port, phase.server === 'metrics', phase.sources, n);
      // The last closes' effect on RSS is seen too.
      await sleep(2_000);
      const rss = monitor.rss.get(phase.name) ?? [];
      const ready = monitor.ready.get(phase.name) ?? { ok: 0, failed: 0 };
      const outcome = { phase, ...result, idleRss, peakRss: Math.max(0, ...rss), readyOk: ready.ok, readyFailed: ready.failed };
      log(
        `  ${phase.name}: idle RSS ${mib(idleRss)}, peak ${mib(outcome.peakRss)}; refused ${outcome.refused}, accepted ${outcome.accepted}, all closed in ${secs(outcome.allClosedMs)}, longest ${secs(outcome.longestLifeMs)}; /readyz ${ready.ok} ok / ${ready.failed} failed`,
      );
      if (!op.alive()) throw new Error(`the operator exited during "${phase.name}":\n${op.tail()}`);
      return outcome;
    } finally {
      await monitor.stop();
    }
  } finally {
    await op.stop('SIGTERM');
  }
}

function report(env: BenchEnv, m: ReturnType<typeof machine>, load: string, opts: ConnectionsOptions, outcomes: Outcome[]): string {
  const deadlineMs = Math.max(CONNECTION_LIMITS.firstRequestMs, CONNECTION_LIMITS.handshakeMs);
  const yes = (ok: boolean): string => (ok ? 'yes' : '**no**');
  const rows = outcomes.map((o) => [
    o.phase.name,
    String(o.connected + o.failedToConnect),
    String(o.refused),
    String(o.accepted),
    secs(o.allClosedMs),
    `${secs(o.longestLifeMs)} (${yes(o.longestLifeMs <= deadlineMs + SLACK_MS && o.leftOpen === 0)})`,
    mib(o.idleRss),
    `${mib(o.peakRss)} (+${(((o.peakRss - o.idleRss) / o.idleRss) * 100).toFixed(1)} %, ${yes(o.peakRss <= o.idleRss * (1 + RSS_GOAL))})`,
    `${o.readyOk} / ${o.readyFailed}`,
  ]);
  const failures = outcomes.filter((o) => o.failedToConnect || o.leftOpen);
  return `## Connections: idle floods against the metrics and probe servers

${provenance(env, m, '', load)}

Each phase runs a fresh operator (metrics over HTTPS with its self-signed certificate); its idle RSS is the mean over ${IDLE_SAMPLE_MS / 1000} s after ${IDLE_SAMPLE_MS / 1000} s of rest from ready, its peak is sampled every ${POLL_MS} ms from the flood's start until 2 s after its last close. Each phase opens ${opts.n.toLocaleString('en-US')} connections that finish the TCP handshake (and, to the metrics server, the TLS handshake) and then send nothing, ${IN_FLIGHT} being opened at a time, from one loopback address or from ${SOURCES}; meanwhile /readyz is polled from 127.0.0.1 every ${POLL_MS} ms, a new connection each with a 1 s timeout, as the kubelet probes. Limits (src/observability/connectionlimits.ts): first request within ${secs(CONNECTION_LIMITS.firstRequestMs, 0)} of the accept, TLS handshake ${secs(CONNECTION_LIMITS.handshakeMs, 0)}, ${CONNECTION_LIMITS.maxConnections} open connections per server, ${CONNECTION_LIMITS.maxConnectionsPerAddress} per address. "Refused" = closed by a cap: over TLS, closed before the handshake; over TCP, within ${secs(REFUSED_MS, 0)} of the connect, "accepted" = held until a deadline closed it (over the whole phase: a slot freed by a deadline is taken again by the flood); "closed within the deadline" allows ${secs(SLACK_MS, 0)} over ${secs(deadlineMs, 0)} for the server's timers; the RSS goal is idle + ${RSS_GOAL * 100} %.

${table(
  [
    'phase',
    'connections',
    'refused by a cap',
    'accepted',
    'all closed after',
    'longest life (within the deadline)',
    'idle RSS',
    'peak RSS (within idle + 10 %)',
    '/readyz ok / failed',
  ],
  rows,
)}
${failures.length ? `\nNot as intended: ${failures.map((o) => `${o.phase.name}: ${o.failedToConnect} failed to connect, ${o.leftOpen} left open at the phase limit`).join('; ')}.\n` : ''}`;
}
