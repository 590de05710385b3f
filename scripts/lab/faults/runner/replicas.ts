/**
 * The replicas of one schedule: each a process of the program under test that reaches the API
 * server only through a fault proxy of its own, named r0, r1, ... in start order.
 *
 * Like a pod's kubelet, the set keeps its size: a replica that exits while the schedule runs is
 * replaced by a fresh one (with a fresh, fault-free proxy), after kubelet's CrashLoopBackOff
 * (runner/backoff.ts: at once, then 10 s doubling, capped at 5 min). With leader election, the
 * replacement starts only once another replica has taken the Lease (or a bound passed), so the
 * standby the schedule prepared, not a newcomer with a fresh cache, takes over. An exit before
 * the replica was ready is a start-up exit, counted apart (the report's own column): a kubelet
 * restarts it, and it made no write the claims are about.
 *
 * Guarantees: every exit is recorded, `designed` when the set signalled the process itself or the
 * replica had lost its Lease: a renew deadline passed without a renewal whose answer reached it in
 * time, by its proxy's record (lease-loss.ts; the one designed exit besides bad settings, which a
 * schedule never gives); stopAll() leaves no process and no proxy behind.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAudit } from '../judge/audit.js';
import { exitAfterLeaseLoss } from '../judge/lease-loss.js';
import { startFaultProxy, type FaultProxy } from '../proxy/proxy.js';
import { restartDelayMs } from './backoff.js';
import type { Program, ProgramProcess } from '../programs/programs.js';

/** At most this many replacements per schedule: a program that crash-loops is not restarted forever. */
const MAX_REPLACEMENTS = 4;

export interface Replica {
  name: string;
  proxy: FaultProxy;
  proc: ProgramProcess;
  startedAt: number;
  /** When its program said it was ready (caches synced); unset while it is not (yet). */
  readyAt?: number;
  exit?: { code: number | null; signal: string | null; designed: boolean; startup: boolean; at: number };
  /** Set when the set signalled it: its exit is designed. */
  signalled: boolean;
}

export interface ReplicaSetOptions {
  program: Program;
  adminKubeconfig: string;
  namespace: string;
  auditLogPath: string;
  auditFrom: number;
  impersonate: { user: string; groups: string[] };
  env: Record<string, string>;
  log: (line: string) => void;
}

/** Another API server (its admin kubeconfig) a replica reaches: for every request, or only those whose path matches `only`. */
export interface ReplicaUpstream {
  kubeconfig: string;
  only?: RegExp;
}

export class ReplicaSet {
  readonly all: Replica[] = [];
  private stopping = false;
  private replacements = 0;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly readiness = new WeakMap<Replica, Promise<void>>();

  constructor(private readonly o: ReplicaSetOptions) {}

  /**
   * Starts the next replica; `prepare` may arm its proxy's faults before the process starts;
   * `upstream`, another API server for its proxy to reach (for every request, or those it matches).
   */
  async start(prepare?: (proxy: FaultProxy) => void, upstream?: ReplicaUpstream): Promise<Replica> {
    const name = `r${this.all.length}`;
    const proxy = await startFaultProxy({
      adminKubeconfig: upstream && !upstream.only ? upstream.kubeconfig : this.o.adminKubeconfig,
      replica: name,
      impersonate: this.o.impersonate,
      ...(upstream?.only ? { route: { match: upstream.only, adminKubeconfig: upstream.kubeconfig } } : {}),
    });
    prepare?.(proxy);
    const proc = await this.o.program.start({
      kubeconfig: proxy.kubeconfig,
      replica: name,
      namespace: this.o.namespace,
      leaseNamespace: this.o.namespace,
      env: this.o.env,
    });
    const replica: Replica = { name, proxy, proc, startedAt: Date.now(), signalled: false };
    this.all.push(replica);
    const ready = this.o.program.ready(proc).then(
      () => {
        replica.readyAt = Date.now();
      },
      () => undefined, // it exited first: the exit says so
    );
    this.readiness.set(replica, ready);
    this.track(
      proc.exited.then(async ({ code, signal }) => {
        const at = Date.now();
        await ready;
        const designed = replica.signalled || this.stopping || this.lostLease(replica, at);
        const startup = !designed && replica.readyAt === undefined;
        replica.exit = { code, signal, designed, startup, at };
        const tail = designed
          ? ''
          : `${startup ? ' at start-up' : ' UNEXPECTEDLY'}; its last output:\n${proc.output().split('\n').slice(-60).join('\n')}`;
        this.o.log(`${name} exited (code ${code}, signal ${signal})${tail}`);
        if (!this.stopping) this.track(this.replace(replica));
      }),
    );
    return replica;
  }

  async startReady(prepare?: (proxy: FaultProxy) => void, upstream?: ReplicaUpstream): Promise<Replica> {
    const r = await this.start(prepare, upstream);
    await this.o.program.ready(r.proc);
    await this.readiness.get(r);
    return r;
  }

  /** Signals a replica (a designed fault: SIGKILL for a crash). */
  kill(r: Replica, signal: NodeJS.Signals = 'SIGKILL'): void {
    r.signalled = true;
    r.proc.kill(signal);
  }

  running(): Replica[] {
    return this.all.filter((r) => !r.exit);
  }

  /** The replica whose proxy made the latest successful Lease write (the audit log's word). */
  leader(): Replica | undefined {
    const name = this.leaseWrites().at(-1)?.replica;
    return this.all.find((r) => r.name === name);
  }

  /** Resolves once `r` has written the Lease successfully, or after timeoutMs (false). */
  async holdsLease(r: Replica, timeoutMs: number): Promise<boolean> {
    return this.until(() => this.leaseWrites().some((w) => w.replica === r.name), timeoutMs);
  }

  exits(): { replica: string; code: number | null; signal: string | null; designed: boolean; startup: boolean }[] {
    return this.all.flatMap((r) =>
      r.exit ? [{ replica: r.name, code: r.exit.code, signal: r.exit.signal, designed: r.exit.designed, startup: r.exit.startup }] : [],
    );
  }

  /** Counted writes of every replica so far. */
  writeCount(): number {
    return this.all.reduce((n, r) => n + r.proxy.writes().length, 0);
  }

  /** SIGTERM to every replica (SIGKILL after graceMs), then closes every proxy. */
  async stopAll(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const r of this.running()) r.proc.kill('SIGTERM');
    await Promise.race([Promise.all(this.all.map((r) => r.proc.exited)), new Promise((res) => setTimeout(res, graceMs))]);
    for (const r of this.running()) r.proc.kill('SIGKILL');
    await Promise.all(this.all.map((r) => r.proc.exited));
    await Promise.allSettled([...this.pending]);
    await Promise.all(this.all.map((r) => r.proxy.close()));
    // For a replay: every replica's output kept, to read what the program did.
    const keep = process.env.FAULTS_OUTPUT_DIR;
    if (keep) {
      mkdirSync(keep, { recursive: true });
      for (const r of this.all) writeFileSync(join(keep, `${this.o.namespace}-${r.name}.log`), r.proc.output());
    }
  }

  private async replace(gone: Replica): Promise<void> {
    if (this.replacements >= MAX_REPLACEMENTS) return;
    const delay = restartDelayMs(this.replacements);
    this.replacements++;
    const backOffUntil = gone.exit!.at + delay;
    const lease = this.o.program.leaderElection ? this.o.program.lease : undefined;
    if (lease && this.running().length > 0) {
      // Let the prepared standby take over first; a crash-looping program still gets a replacement.
      const since = gone.exit!.at;
      await this.until(() => this.leaseWrites().some((w) => w.replica !== gone.name && w.done > since), (lease.durationS * 3 + 5) * 1000);
    }
    if (delay > 0) {
      this.o.log(`${gone.name}: back-off ${delay / 1000} s before its replacement (as kubelet's CrashLoopBackOff)`);
      await this.until(() => Date.now() >= backOffUntil, delay + 1000);
    }
    if (this.stopping) return;
    try {
      await this.start();
    } catch (err) {
      this.o.log(`could not start a replacement for ${gone.name}: ${String(err)}`);
    }
  }

  /** Whether `r` led and its hold had lapsed by `at`, by what its proxy passed on (lease-loss.ts). */
  private lostLease(r: Replica, at: number): boolean {
    const renewS = this.o.program.lease?.renewS;
    return renewS !== undefined && exitAfterLeaseLoss(r.proxy.leaseRenewals(), renewS * 1000, at);
  }

  private leaseWrites(): { replica: string; done: number }[] {
    return readAudit(this.o.auditLogPath, this.o.auditFrom)
      .filter((r) => r.resource === 'leases' && r.namespace === this.o.namespace && r.replica && r.code >= 200 && r.code < 300)
      .map((r) => ({ replica: r.replica!, done: r.done }));
  }

  private async until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stopping) {
      if (cond()) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((err: unknown) => this.o.log(`replica bookkeeping failed: ${String(err)}`)).finally(() => this.pending.delete(q));
    this.pending.add(q);
  }
}
