/**
 * A replica's process: spawned with only the environment it is given (nothing of the caller's
 * operator settings leaks in), its output kept, killed on Ctrl-C and at exit like every bench
 * process (cleanup.ts), and the two ways the campaign learns that it is ready: a readiness probe
 * answering 200, or a line in its log.
 *
 * Guarantees: `exited` settles exactly once, also when the process could not be spawned; a wait
 * for readiness rejects as soon as the process ends, and after its deadline otherwise, never hangs.
 */
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../testbed/controlplane/cluster.js';
import { trackChild } from '../../bench/cleanup.js';
import type { ProgramProcess } from './types.js';

/** How much output a replica keeps (the newest). */
const OUTPUT_LIMIT = 1 << 20;
/** Long enough for a cold start on a loaded machine (a tsx start compiles src/). */
const READY_TIMEOUT_MS = 120_000;
/** The repository: where a command from source (tsx src/main.ts) runs. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

export interface ReplicaSpec {
  replica: string;
  argv: string[];
  /** The whole environment besides PATH and HOME. */
  env: Record<string, string>;
}

export function spawnReplica(spec: ReplicaSpec): ProgramProcess {
  const [cmd, ...args] = spec.argv;
  const child = spawn(cmd!, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...spec.env },
  });
  const untrack = trackChild(child);
  let out = '';
  const keep = (d: Buffer): void => {
    out += d.toString('utf8');
    if (out.length > OUTPUT_LIMIT) out = out.slice(-OUTPUT_LIMIT / 2);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    // 'close', not 'exit': by then everything the process wrote has been read.
    child.once('close', (code, signal) => resolve({ code, signal }));
    child.once('error', (err) => {
      keep(Buffer.from(`could not run ${cmd}: ${err.message}\n`));
      resolve({ code: null, signal: null });
    });
  }).finally(untrack);
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    replica: spec.replica,
    pid: child.pid ?? -1,
    exited,
    kill: (signal = 'SIGKILL') => {
      if (alive()) child.kill(signal);
    },
    output: () => out,
  };
}

/** Resolves once `probe` answers true; rejects when the process ends first or the deadline passes. */
async function readyWhen(p: ProgramProcess, what: string, probe: () => Promise<boolean> | boolean): Promise<void> {
  let ended = false;
  const exit = p.exited.then((e) => {
    ended = true;
    return e;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const poll = async (): Promise<undefined> => {
    while (!ended) {
      if (await probe()) return undefined;
      if (Date.now() > deadline) throw new Error(`${p.replica}: no ${what} after ${READY_TIMEOUT_MS} ms:\n${p.output().slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return undefined;
  };
  const e = await Promise.race([exit, poll()]);
  if (e) throw new Error(`${p.replica} exited (code ${e.code}, signal ${e.signal}) before ${what}:\n${p.output().slice(-4000)}`);
}

/** Ready once GET http://127.0.0.1:<port>/readyz answers 200. */
export function readyzOk(p: ProgramProcess, port: number): Promise<void> {
  return readyWhen(p, `a 200 from /readyz on port ${port}`, async () => {
    try {
      // Bounded: a probe server that accepts and never answers must not hold the wait.
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      return res.ok;
    } catch {
      return false; // not listening yet
    }
  });
}

/** Ready once the replica's output matches `line`. */
export function logged(p: ProgramProcess, line: RegExp): Promise<void> {
  return readyWhen(p, `a log line matching ${String(line)}`, () => line.test(p.output()));
}

/** Replicas whose readiness is GET /readyz on a probe port chosen at spawn. */
export interface ProbedReplicas {
  /** Spawns a replica; `env` is given its probe port. */
  spawn(replica: string, argv: readonly string[], env: (healthPort: number) => Record<string, string>): Promise<ProgramProcess>;
  ready(p: ProgramProcess): Promise<void>;
}

export function probedReplicas(): ProbedReplicas {
  const ports = new WeakMap<ProgramProcess, number>();
  return {
    spawn: async (replica, argv, env) => {
      const healthPort = await freePort();
      const p = spawnReplica({ replica, argv: [...argv], env: env(healthPort) });
      ports.set(p, healthPort);
      return p;
    },
    ready: (p) => {
      const port = ports.get(p);
      return port === undefined ? Promise.reject(new Error(`${p.replica} was not spawned here`)) : readyzOk(p, port);
    },
  };
}
