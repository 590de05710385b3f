/**
 * What every benchmark needs: the control plane (reused or private), a bench RestClient (the
 * operator's own transport, src/kube/rest.ts), namespaces that are deleted again, operator child
 * processes that are killed again (also on Ctrl-C), a concurrency pool, watch-based trackers,
 * Prometheus text parsing and CPU accounting from /proc.
 *
 * Cleanup guarantee: everything a benchmark creates is registered here the moment it exists;
 * SIGINT/SIGTERM/SIGHUP kill the operators at once (synchronously) and then send the namespace
 * deletions before exiting; a normal exit kills any operator still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../src/kube/config.js';
import { ApiError, isNotFound, isTransient } from '../../src/kube/errors.js';
import { RestClient } from '../../src/kube/rest.js';
import type { ResourceType } from '../../src/kube/resources.js';
import { Informer, kubeListerWatcher } from '../../src/runtime/informer/index.js';
import type { KubeObject } from '../../src/runtime/cache/store.js';
import { clientNodeKubeConfigOnly } from '../bundle-clientnode.js';
import { acquireControlPlane, type ControlPlaneLease } from '../controlplane/session.js';
import { freePort, readState } from '../controlplane/cluster.js';
import { NO_PODS_ANNOTATIONS } from '../controlplane/network.js';

export const now = (): number => performance.now();
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function log(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

// ---------------------------------------------------------------------------------------------
// Cleanup

const children = new Set<ChildProcess>();
const cleanups = new Set<() => unknown>();
let interrupted = false;

export function isInterrupted(): boolean {
  return interrupted;
}

/** Registers an async cleanup (e.g. deleting a namespace); returns its unregister function. */
export function onCleanup(fn: () => unknown): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

function killChildren(signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }
}

export async function runCleanups(timeoutMs = 30_000): Promise<void> {
  killChildren();
  const pending = [...cleanups].map((fn) =>
    Promise.resolve()
      .then(fn)
      .catch(() => undefined),
  );
  cleanups.clear();
  await Promise.race([Promise.all(pending), sleep(timeoutMs)]);
}

/**
 * Installed before anything else is created. The control plane lease (if private) installs its
 * own handlers after ours, so ours run first: operators die before the control plane stops.
 */
export function installSignalHandlers(): void {
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(s, () => {
      if (interrupted) return;
      interrupted = true;
      log(`${s}: killing operators, deleting namespaces, exiting`);
      killChildren();
      void runCleanups(15_000).finally(() => process.exit(s === 'SIGINT' ? 130 : s === 'SIGHUP' ? 129 : 143));
    });
  }
  process.on('exit', () => killChildren());
  // A bug must not leave namespaces behind: clean up, then fail.
  for (const ev of ['unhandledRejection', 'uncaughtException'] as const) {
    process.on(ev, (err: unknown) => {
      if (interrupted) return;
      interrupted = true;
      log(`${ev}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}; cleaning up`);
      killChildren();
      void runCleanups(15_000).finally(() => process.exit(1));
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Environment

export interface BenchEnv {
  lease: ControlPlaneLease;
  kubeconfig: string;
  kc: KubeConfig;
  /** The bench's client: the operator's RestClient, so both sides pay the same transport. */
  rest: RestClient;
  kubernetesVersion: string;
  /** Folder of a control plane started by our scripts (audit log, pids); undefined otherwise. */
  clusterDir: string | undefined;
  controlPlanePids: Record<string, number>;
  operator: OperatorCommand;
}

export interface OperatorCommand {
  argv: string[];
  kind: 'bundle' | 'source' | 'custom';
  describe: string;
}

export const BUNDLE_PATH = 'dist/bundle/echoperator.js';

/**
 * What runs the operator: ECHOPERATOR_CMD (a JSON array, as in the tests) if set; else the bundle
 * when it exists and is newer than every file in src/; else (missing or stale bundle) a
 * temporary esbuild bundle of the current src/, so the numbers are those of the code in the tree
 * and not inflated by tsx (~90 MB and seconds of start-up); `fromSource` runs src/ through tsx.
 */
export async function operatorCommand(opts: { fromSource?: boolean } = {}): Promise<OperatorCommand> {
  const custom = process.env.ECHOPERATOR_CMD;
  if (custom) {
    const argv = JSON.parse(custom) as string[];
    return { argv, kind: 'custom', describe: `ECHOPERATOR_CMD=${argv.join(' ')}` };
  }
  if (opts.fromSource) return sourceCommand();
  if (existsSync(BUNDLE_PATH)) {
    const stale = newerSources(statSync(BUNDLE_PATH).mtimeMs);
    if (stale.length === 0) return { argv: [process.execPath, BUNDLE_PATH], kind: 'bundle', describe: `node ${BUNDLE_PATH}` };
    log(`${BUNDLE_PATH} is older than ${stale.length} file(s) in src/ (e.g. ${stale[0]}): bundling src/ into a temporary file instead`);
  }
  return temporaryBundle(existsSync(BUNDLE_PATH) ? `${BUNDLE_PATH} is older than src/` : `no ${BUNDLE_PATH}`);
}

export function sourceCommand(): OperatorCommand {
  return {
    argv: [process.execPath, '--import', 'tsx', 'src/main.ts'],
    kind: 'source',
    describe: 'node --import tsx src/main.ts (from source)',
  };
}

/** An ESM bundle of src/main.ts in a temporary folder (removed by the cleanup), as `npm run build` makes one. */
export async function temporaryBundle(why: string): Promise<OperatorCommand> {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-bench-bundle-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const outfile = join(dir, 'echoperator.mjs');
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: ['src/main.ts'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    outfile,
    logLevel: 'error',
    // Guarded optional requires of client-node's dependencies: left out, as the build does.
    external: ['bufferutil', 'utf-8-validate', 'supports-color', 'encoding'],
    plugins: [clientNodeKubeConfigOnly],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return { argv: [process.execPath, outfile], kind: 'bundle', describe: `node <temporary esbuild bundle of src/> (${why})` };
}

/** Files under src/ changed after `mtimeMs` (a bundle built before them does not contain them). */
function newerSources(mtimeMs: number, dir = 'src'): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...newerSources(mtimeMs, p));
    else if (st.mtimeMs > mtimeMs) out.push(p);
  }
  return out;
}

/**
 * node: a private cluster gets a node (pods run; only namespaces made with `pods: true` use it).
 * Default false: thousands of Jobs, no node of ours, and no pods on one that `cluster:up` started.
 */
export async function openEnv(opts: { privateCluster: boolean; fromSource?: boolean; node?: boolean }): Promise<BenchEnv> {
  const lease = await acquireControlPlane({ private: opts.privateCluster, node: opts.node ?? false });
  onCleanup(() => lease.release());
  log(`control plane: ${lease.describe}`);
  const kc = loadKubeConfig(lease.kubeconfig);
  const rest = new RestClient(kc, { userAgent: 'echoperator-bench', maxSockets: 128 });
  const version = await rest.request<{ gitVersion?: string }>('GET', '/version');
  // Our control planes keep admin.kubeconfig in their folder, next to state.json and logs/.
  const dir = dirname(lease.kubeconfig);
  const state = readState(dir);
  return {
    lease,
    kubeconfig: lease.kubeconfig,
    kc,
    rest,
    kubernetesVersion: version.gitVersion ?? 'unknown',
    clusterDir: state ? dir : undefined,
    controlPlanePids: state
      ? { 'kube-apiserver': state.pids.kubeApiserver, etcd: state.pids.etcd, 'kube-controller-manager': state.pids.kubeControllerManager }
      : {},
    operator: await operatorCommand({ fromSource: opts.fromSource }),
  };
}

// ---------------------------------------------------------------------------------------------
// API helpers

/** Retries transient failures (429 from APF, 5xx, resets) so a benchmark is not lost to one. */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err) || i >= attempts) throw err;
      const after = err instanceof ApiError ? err.retryAfterSeconds : undefined;
      await sleep(after ? after * 1000 : 100 * 2 ** i);
    }
  }
}

export const BENCH_LABEL = 'echoperator.mmontes.io/bench';

/**
 * A fresh namespace, deleted by the cleanup if the benchmark does not delete it itself. Its pods
 * stay off any node unless `pods` (the user's latency needs them to run).
 */
export async function createNamespace(env: BenchEnv, prefix: string, opts: { pods?: boolean } = {}): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await withRetry(() =>
    env.rest.request('POST', '/api/v1/namespaces', {
      body: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { [BENCH_LABEL]: 'true' }, annotations: opts.pods ? {} : { ...NO_PODS_ANNOTATIONS } },
      },
    }),
  );
  const unregister = onCleanup(() => env.rest.request('DELETE', `/api/v1/namespaces/${name}`, { timeoutMs: 5000 }).catch(() => undefined));
  namespaceCleanups.set(name, unregister);
  return name;
}

const namespaceCleanups = new Map<string, () => void>();

/** Deletes the namespace and (by default) waits until it is gone, so the next run starts quiet. */
export async function deleteNamespace(env: BenchEnv, name: string, opts: { wait?: boolean; timeoutMs?: number } = {}): Promise<number> {
  const started = now();
  // Emptying it first makes the namespace controller's job trivial: left to itself it finds Pods
  // still terminating (the job controller's finalizers) and waits ~30 s (their grace period)
  // before it looks again; this way a namespace of N Jobs and Pods is gone in a few seconds.
  const purge = [
    ['/apis/batch/v1', 'jobs', { propagationPolicy: 'Background' }],
    ['/apis/batch/v1', 'cronjobs', { propagationPolicy: 'Background' }],
    ['/api/v1', 'pods', { gracePeriodSeconds: 0 }],
    ['/apis/mmontes.io/v1alpha1', 'echos', {}],
    ['/apis/mmontes.io/v1alpha1', 'scheduledechos', {}],
    ['/api/v1', 'events', {}],
  ] as const;
  await Promise.all(
    purge.map(([base, resource, body]) =>
      env.rest.request('DELETE', `${base}/namespaces/${name}/${resource}`, { body, timeoutMs: 120_000 }).catch(() => undefined),
    ),
  );
  try {
    await withRetry(() => env.rest.request('DELETE', `/api/v1/namespaces/${name}`, { body: { propagationPolicy: 'Background' } }));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (opts.wait ?? true) {
    const deadline = started + (opts.timeoutMs ?? 600_000);
    for (;;) {
      try {
        await env.rest.request('GET', `/api/v1/namespaces/${name}`);
      } catch (err) {
        if (isNotFound(err)) break;
      }
      if (now() > deadline) {
        log(`namespace ${name} still terminating after ${Math.round((now() - started) / 1000)} s; going on`);
        break;
      }
      await sleep(500);
    }
  }
  namespaceCleanups.get(name)?.();
  namespaceCleanups.delete(name);
  return now() - started;
}

/** Server-side applies crds/ and waits until they are served (the tests do the same). */
export async function installCrds(env: BenchEnv): Promise<void> {
  await runKubectl(env, ['apply', '--server-side', '--force-conflicts', '--field-manager=echoperator-tests', '-f', 'crds/']);
  await runKubectl(env, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/echos.mmontes.io', 'crd/scheduledechos.mmontes.io']);
}

function runKubectl(env: BenchEnv, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', env.kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${err.trim()}`))));
  });
}

/** GET of a non-JSON endpoint (the API server's /metrics): RestClient.stream hands us the lines. */
export async function getText(rest: RestClient, path: string, timeoutMs = 30_000): Promise<string> {
  const lines: string[] = [];
  await rest.stream(path, {}, AbortSignal.timeout(timeoutMs), (line) => lines.push(line));
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Concurrency

/** Runs fn over items with at most `concurrency` in flight; items may be an async iterable. */
export async function pool<T>(items: Iterable<T> | AsyncIterable<T>, concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  const it = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failed && !interrupted) {
      const next = await it.next();
      if (next.done) return;
      try {
        await fn(next.value);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (failed) throw failed.error;
  if (interrupted) throw new Error('interrupted');
}

/** An unbounded async queue: a producer pushes, pool() consumers iterate until close(). */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private readonly waiters: ((r: IteratorResult<T>) => void)[] = [];
  private closed = false;

  push(item: T): void {
    const w = this.waiters.shift();
    if (w) w({ value: item, done: false });
    else this.items.push(item);
  }

  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w({ value: undefined as never, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.head < this.items.length) {
          const value = this.items[this.head]!;
          this.items[this.head++] = undefined as never;
          return Promise.resolve({ value, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined as never, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Watching: the bench's own informers (src/runtime/informer), timestamps taken on receipt

export interface Watched<T extends KubeObject> {
  informer: Informer<T>;
  /** performance.now() of the last add/update/delete delivered. */
  lastEventAt(): number;
  events(): number;
  stop(): Promise<void>;
}

export async function watch<T extends KubeObject>(
  env: BenchEnv,
  type: ResourceType,
  namespace: string,
  handler: { onAdd?(obj: T, at: number): void; onUpdate?(oldObj: T, obj: T, at: number): void; onDelete?(obj: T, at: number): void },
  opts: { fieldSelector?: string; labelSelector?: string } = {},
): Promise<Watched<T>> {
  const informer = new Informer<T>({
    name: `bench/${type.resource}/${namespace}`,
    listerWatcher: kubeListerWatcher<T>(env.rest, type, { namespace, ...opts }),
  });
  let last = now();
  let count = 0;
  informer.addEventHandler({
    onAdd: (o) => {
      last = now();
      count++;
      handler.onAdd?.(o, last);
    },
    onUpdate: (a, b) => {
      last = now();
      count++;
      handler.onUpdate?.(a, b, last);
    },
    onDelete: (o) => {
      last = now();
      count++;
      handler.onDelete?.(o, last);
    },
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal).catch((err) => log(`watch ${type.resource} failed: ${String(err)}`));
  if (!(await informer.waitForSync(AbortSignal.timeout(60_000)))) throw new Error(`watch of ${type.resource} in ${namespace} did not sync`);
  return {
    informer,
    lastEventAt: () => last,
    events: () => count,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** Resolves once nothing was delivered by any of `watches` for quietMs (or maxMs passed). */
export async function waitQuiet(
  watches: { lastEventAt(): number }[],
  quietMs: number,
  maxMs: number,
  extra?: () => Promise<boolean>,
): Promise<boolean> {
  const deadline = now() + maxMs;
  for (;;) {
    const last = Math.max(...watches.map((w) => w.lastEventAt()));
    if (now() - last >= quietMs && (!extra || (await extra()))) return true;
    if (now() > deadline) return false;
    await sleep(200);
  }
}

// ---------------------------------------------------------------------------------------------
// Operator processes

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
  const spawnedAt = now();
  const proc = spawn(cmd!, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      KUBECONFIG: env.kubeconfig,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      HEALTH_PORT: String(healthPort),
      METRICS_PORT: String(metricsPort),
      ...vars,
    },
  });
  children.add(proc);
  const lines: string[] = [];
  const keep = (d: Buffer): void => {
    for (const l of d.toString('utf8').split('\n')) if (l) lines.push(l);
    if (lines.length > 400) lines.splice(0, lines.length - 200);
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  const exited = new Promise<number>((resolve) =>
    proc.on('exit', (code, signal) => {
      children.delete(proc);
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
    tail: (n = 20) => lines.slice(-n).join('\n'),
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

/** Polls /readyz; resolves with performance.now() of the first 200 and of the first answer at all. */
export async function waitReady(
  op: OperatorHandle,
  opts: { intervalMs?: number; timeoutMs?: number } = {},
): Promise<{ readyAt: number; listeningAt: number }> {
  const deadline = now() + (opts.timeoutMs ?? 120_000);
  let listeningAt = 0;
  for (;;) {
    if (!op.alive()) throw new Error(`operator exited before it was ready:\n${op.tail()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${op.healthPort}/readyz`, { signal: AbortSignal.timeout(2000) });
      const at = now();
      listeningAt ||= at;
      await res.arrayBuffer();
      if (res.ok) return { readyAt: at, listeningAt };
    } catch {
      // not listening yet
    }
    if (now() > deadline) throw new Error(`operator not ready in time:\n${op.tail()}`);
    await sleep(opts.intervalMs ?? 50);
  }
}

// ---------------------------------------------------------------------------------------------
// Prometheus text

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[3]) for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return out;
}

export function sumOf(samples: Sample[], name: string, match: Record<string, string | RegExp> = {}): number {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    let ok = true;
    for (const [k, v] of Object.entries(match)) {
      const actual = s.labels[k] ?? '';
      if (typeof v === 'string' ? actual !== v : !v.test(actual)) ok = false;
    }
    if (ok) total += s.value;
  }
  return total;
}

export async function operatorMetrics(op: OperatorHandle): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return parseProm(await res.text());
}

/** The Echo controller has reconciled at least minReconciles times and nothing is queued or in flight. */
export async function echoQueueDrained(op: OperatorHandle, minReconciles: number): Promise<boolean> {
  const m = await operatorMetrics(op).catch(() => undefined);
  if (!m) return false;
  return (
    sumOf(m, 'controller_runtime_reconcile_total', { controller: 'echo' }) >= minReconciles &&
    sumOf(m, 'workqueue_depth', { name: 'echo' }) === 0 &&
    sumOf(m, 'controller_runtime_active_workers', { controller: 'echo' }) === 0
  );
}

// ---------------------------------------------------------------------------------------------
// Memory and CPU from /proc

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

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export const secs = (ms: number, digits = 2): string => `${(ms / 1000).toFixed(digits)} s`;
export const mib = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${(bytes / 1048576).toFixed(1)} MiB`);
export const ratio = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

export function minMax(xs: number[], f: (x: number) => string): string {
  if (xs.length <= 1) return '';
  return `${f(Math.min(...xs))} .. ${f(Math.max(...xs))}`;
}

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * The audit log of a control plane started by scripts/controlplane/cluster.ts with its audit
 * policy (older ones have none); the file itself appears with the first logged write.
 */
export function auditLogPath(env: BenchEnv): string | undefined {
  if (!env.clusterDir || !existsSync(join(env.clusterDir, 'audit-policy.yaml'))) return undefined;
  return join(env.clusterDir, 'logs', 'audit.log');
}
