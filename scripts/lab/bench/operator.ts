/**
 * Operator processes under benchmark: spawned, waited for, killed again (also on Ctrl-C).
 *
 * Their stdout and stderr go to a file, not to a pipe this process reads: a pipe fills whenever
 * the bench's own busy loop reads it late, and a program whose log writes block (Node's stderr to
 * a pipe is synchronous on Linux) then stalls for as long, which no container runtime's log
 * reader makes it do. Measured: ~0.9 s of a 20 s flood of 2,000 Echos spent blocked in writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../testbed/controlplane/cluster.js';
import { type BenchEnv } from './env.js';
import { now, sleep } from './log.js';
import { onCleanup, trackChild } from './cleanup.js';

export interface OperatorHandle {
  proc: ChildProcess;
  pid: number;
  healthPort: number;
  metricsPort: number;
  /** performance.now() just before spawn. */
  spawnedAt: number;
  exited: Promise<number>;
  /** The last lines it logged. */
  tail(lines?: number): string;
  alive(): boolean;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number>;
}

export async function startOperator(env: BenchEnv, vars: Record<string, string>): Promise<OperatorHandle> {
  const healthPort = await freePort();
  const metricsPort = await freePort();
  const [cmd, ...args] = env.operator.argv;
  const output = outputFile();
  const spawnedAt = now();
  const proc = spawn(cmd!, args, {
    stdio: ['ignore', output.fd, output.fd],
    env: {
      ...process.env,
      KUBECONFIG: env.kubeconfig,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      HEALTH_PORT: String(healthPort),
      METRICS_PORT: String(metricsPort),
      // Scraped over plain HTTP from this machine (no TLS, no token); a test of the secure
      // endpoint sets it to false.
      METRICS_INSECURE_PLAIN_HTTP: 'true',
      ...vars,
    },
  });
  // The child holds its own copy of the descriptor; ours is only for reading the tail.
  const untrack = trackChild(proc);
  const exited = new Promise<number>((resolve) =>
    proc.on('exit', (code, signal) => {
      untrack();
      resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 2));
    }),
  );
  const alive = (): boolean => proc.exitCode === null && proc.signalCode === null;
  return {
    proc,
    pid: proc.pid!,
    healthPort,
    metricsPort,
    spawnedAt,
    exited,
    alive,
    tail: (n = 20) => tailOf(output.fd, n),
    stop: async (signal = 'SIGTERM', timeoutMs = 40_000) => {
      if (alive()) proc.kill(signal);
      const code = await Promise.race([exited, sleep(timeoutMs).then(() => -1)]);
      if (code === -1) {
        proc.kill('SIGKILL');
        return exited;
      }
      return code;
    },
  };
}

/** A file for an operator's output in a temporary folder, open for reading and writing, removed by the cleanup. */
function outputFile(): { fd: number } {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-bench-log-'));
  const fd = openSync(join(dir, 'output.log'), 'w+');
  onCleanup(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  return { fd };
}

/** The last n lines of the file open at fd (from its last MiB). */
function tailOf(fd: number, n: number): string {
  const size = fstatSync(fd).size;
  const length = Math.min(size, 1 << 20);
  const buf = Buffer.alloc(length);
  readSync(fd, buf, 0, length, size - length);
  return buf.toString('utf8').split('\n').filter(Boolean).slice(-n).join('\n');
}

/**
 * Polls /readyz as the kubelet probes (see probe); resolves with performance.now() of the first
 * 200 and of the first answer at all.
 */
export async function waitReady(
  op: OperatorHandle,
  opts: { intervalMs?: number; timeoutMs?: number } = {},
): Promise<{ readyAt: number; listeningAt: number }> {
  const deadline = now() + (opts.timeoutMs ?? 120_000);
  let listeningAt = 0;
  for (;;) {
    if (!op.alive()) throw new Error(`operator exited before it was ready:\n${op.tail()}`);
    const answer = await probe(op.healthPort, '/readyz', 2000);
    if (answer) {
      listeningAt ||= answer.at;
      if (answer.status === 200) return { readyAt: answer.at, listeningAt };
    }
    if (now() > deadline) throw new Error(`operator not ready in time:\n${op.tail()}`);
    await sleep(opts.intervalMs ?? 50);
  }
}

/**
 * One GET as the kubelet probes: a connection of its own, closed after (its prober turns
 * keep-alive off), so no connection of the bench's stays open into what is measured next (an
 * open one keeps the operator's deadline checks running). The status and performance.now() when
 * the answer's headers came, or undefined when none came within timeoutMs.
 */
export function probe(port: number, path: string, timeoutMs: number): Promise<{ status: number; at: number } | undefined> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs }, (res) => {
      const answer = { status: res.statusCode ?? 0, at: now() };
      res.resume();
      res.on('end', () => resolve(answer));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(undefined));
  });
}
