/**
 * Memory and CPU of a process, from /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { now, sleep } from './log.js';

export function vmRssBytes(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

const CLK_TCK = 100;

/** utime + stime of a process in seconds, or undefined once it is gone. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return undefined;
  }
}

export interface ThreadTimes {
  /** Nanoseconds its threads ran (each thread's schedstat: no 10 ms ticks, so a process that idles at a fraction of a ms a second still reads). */
  cpuNs: number;
  /** Context switches of its threads, voluntary and not: each follows a wake-up of a thread. */
  switches: number;
}

/**
 * CPU time and context switches summed over the threads a process has now, or undefined once it
 * is gone. A thread that ended takes its share with it: for windows in which threads live on (idle).
 */
export function threadTimes(pid: number): ThreadTimes | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const sum = { cpuNs: 0, switches: 0 };
  for (const tid of tids) {
    try {
      sum.cpuNs += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) sum.switches += Number(m[1]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return sum;
}

/**
 * Until the whole machine (every process: etcd, the controller manager's garbage collector, not
 * only the API server) used at most `maxShare` cores over a window, or `maxMs` passed; false on
 * timeout. What one run left behind then no longer takes CPU from the next.
 */
export async function waitMachineCalm(opts: CalmOptions = {}): Promise<boolean> {
  const { maxShare = 0.5, windowMs = 3000, maxMs = 60_000 } = opts;
  const deadline = now() + maxMs;
  while (now() < deadline) {
    const before = machineBusySeconds();
    await sleep(windowMs);
    const after = machineBusySeconds();
    if (before === undefined || after === undefined) return false;
    if (after - before <= (maxShare * windowMs) / 1000) return true;
  }
  return false;
}

export interface CalmOptions {
  /** Cores (CPU-seconds per second) at or below which it counts as calm; default 0.5. */
  maxShare?: number;
  windowMs?: number;
  maxMs?: number;
}

function machineBusySeconds(): number | undefined {
  try {
    const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    const n = f.map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
    return (n[0]! + n[1]! + n[2]! + n[5]! + n[6]! + n[7]!) / CLK_TCK;
  } catch {
    return undefined;
  }
}

export interface CpuReport {
  wallSeconds: number;
  /** CPU seconds per named process over the window. */
  byProcess: Record<string, number>;
  /** All CPUs' busy seconds over the window; minus byProcess = everyone else (the noise). */
  machineBusy: number;
  others: number;
}

/** CPU accounting over a window: start() now, then report() with the pids of interest. */
export class CpuWindow {
  private readonly startWall = now();
  private readonly startMachine = machineBusySeconds();
  private readonly startSelf = process.cpuUsage();
  private readonly startByPid = new Map<number, number>();

  constructor(private readonly pids: Record<string, number>) {
    for (const pid of Object.values(pids)) this.startByPid.set(pid, processCpuSeconds(pid) ?? 0);
  }

  report(): CpuReport {
    const byProcess: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      const v = processCpuSeconds(pid);
      if (v !== undefined) byProcess[name] = v - (this.startByPid.get(pid) ?? 0);
    }
    const self = process.cpuUsage(this.startSelf);
    byProcess['bench'] = (self.user + self.system) / 1e6;
    const machineBusy = (machineBusySeconds() ?? 0) - (this.startMachine ?? 0);
    const ours = Object.values(byProcess).reduce((a, b) => a + b, 0);
    return { wallSeconds: (now() - this.startWall) / 1000, byProcess, machineBusy, others: Math.max(0, machineBusy - ours) };
  }
}

export function formatCpu(r: CpuReport): string {
  const parts = Object.entries(r.byProcess).map(([k, v]) => `${k} ${v.toFixed(1)}`);
  return `${parts.join(', ')}, others ${r.others.toFixed(1)} CPU-s in ${r.wallSeconds.toFixed(1)} s`;
}
