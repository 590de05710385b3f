/**
 * The Echo workload: creating N Echos, the "bare client" that does the operator's writes itself
 * (the same bodies, built by the operator's own functions, sent over the same RestClient), and a
 * tracker that watches Echos and Jobs and timestamps when each Echo got its Job and its status.
 */
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../../src/api/echo.js';
import { API_VERSION } from '../../../src/api/group.js';
import { writeStatus } from '../../../src/runtime/reconcile/status.js';
import { desiredJob } from '../../../src/controllers/echo/desired.js';
import { echoStatus, reconciledOk } from '../../../src/controllers/echo/status.js';
import { isAlreadyExists, isConflict } from '../../../src/kube/errors.js';
import { ECHOS } from '../../../src/api/echo.js';
import { JOBS, resourcePath } from '../../../src/kube/resources.js';
import type { KubeObject } from '../../../src/runtime/cache/store.js';
import { KubeClient } from '../../../src/runtime/client/index.js';
import { AsyncQueue, now, pool, sleep, watch, withRetry, type BenchEnv, type Watched } from './common.js';

export const JOB_IMAGE = 'busybox:1.37';
export const MESSAGE = 'Hola, 世界!';

export const echoName = (i: number): string => `echo-${String(i).padStart(5, '0')}`;

export function echoBody(name: string): Echo {
  return { apiVersion: API_VERSION, kind: 'Echo', metadata: { name }, spec: { message: MESSAGE } };
}

/**
 * Creates echo-00000 .. echo-(n-1) with `concurrency` requests in flight; onCreated gets each
 * created Echo (with its uid) as soon as its POST answered. With `perSecond`, Echo i is sent no
 * earlier than i / perSecond seconds after the start (a fixed rate, as long as the server keeps
 * up with `concurrency` in flight). Resolves with the elapsed ms.
 */
export async function createEchos(
  env: BenchEnv,
  ns: string,
  n: number,
  concurrency: number,
  onCreated?: (echo: Echo) => void,
  perSecond?: number,
  body: (name: string) => Echo = echoBody,
): Promise<number> {
  const started = now();
  const indexes = Array.from({ length: n }, (_, i) => i);
  await pool(indexes, concurrency, async (i) => {
    if (perSecond) await sleep(started + (i * 1000) / perSecond - now());
    const name = echoName(i);
    const echo = await withRetry(async () => {
      try {
        return await env.rest.request<Echo>('POST', resourcePath(ECHOS, ns), { body: body(name) });
      } catch (err) {
        // A retried POST whose first attempt went through.
        if (isAlreadyExists(err)) return env.rest.request<Echo>('GET', resourcePath(ECHOS, ns, name));
        throw err;
      }
    });
    onCreated?.(echo);
  });
  return now() - started;
}

/**
 * What the operator writes for a new Echo, done directly: 1 Job POST + 1 status PATCH, with the
 * operator's own desiredJob() / echoStatus() / writeStatus(). `suspend` keeps the job controller
 * from creating Pods (used where only the objects matter, e.g. the memory benchmark).
 */
export async function bareReconcile(env: BenchEnv, echo: Echo, opts: { suspend?: boolean } = {}): Promise<void> {
  const body = desiredJob({ ...echo, apiVersion: API_VERSION, kind: 'Echo' }, JOB_IMAGE);
  if (opts.suspend) body.spec!.suspend = true;
  const ns = echo.metadata.namespace!;
  const client = new KubeClient(env.rest);
  let job: V1Job;
  try {
    job = await withRetry(() => env.rest.request<V1Job>('POST', resourcePath(JOBS, ns), { body }));
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    job = await env.rest.request<V1Job>('GET', resourcePath(JOBS, ns, body.metadata!.name));
  }
  let current = echo;
  for (let attempt = 1; ; attempt++) {
    const desired = echoStatus(current, body.metadata!.name!, job, reconciledOk, () => new Date());
    try {
      await withRetry(() =>
        writeStatus({ client, type: ECHOS, object: current, current: current.status, desired, signal: AbortSignal.timeout(30_000) }),
      );
      return;
    } catch (err) {
      // writeStatus may be conditional on the resourceVersion; where an operator runs alongside
      // (the memory benchmark) it can have written first: re-read and write again if still needed.
      if (!isConflict(err) || attempt >= 5) throw err;
      current = await env.rest.request<Echo>('GET', resourcePath(ECHOS, ns, echo.metadata.name));
    }
  }
}

/**
 * N Echos, each with its Job and status written by the bare client as soon as it exists, i.e.
 * N reconciled Echos made quickly (`concurrency` requests in flight for each kind of write).
 */
export async function createReconciledEchos(
  env: BenchEnv,
  ns: string,
  n: number,
  concurrency: number,
  opts: { suspend?: boolean; body?: (name: string) => Echo } = {},
): Promise<void> {
  const queue = new AsyncQueue<Echo>();
  const writing = pool(queue, concurrency, (e) => bareReconcile(env, e, opts));
  writing.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
  await createEchos(env, ns, n, concurrency, (e) => queue.push(e), undefined, opts.body).finally(() => queue.close());
  await writing;
}

interface EchoTimes {
  created?: number;
  job?: number;
  status?: number;
}

/**
 * Watches the namespace's Echos and Jobs (started before anything is created). `done` resolves
 * with performance.now() of the event that completed "n Jobs exist and n Echos have
 * status.jobName".
 */
export class EchoTracker {
  readonly times = new Map<string, EchoTimes>();
  private jobsSeen = 0;
  private statusSeen = 0;
  private resolveDone!: (at: number) => void;
  readonly done: Promise<number>;
  doneAt: number | undefined;

  private constructor(
    readonly n: number,
    private readonly watches: Watched<KubeObject>[],
  ) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  static async start(env: BenchEnv, ns: string, n: number): Promise<EchoTracker> {
    const watches: Watched<KubeObject>[] = [];
    const tracker = new EchoTracker(n, watches);
    watches.push(
      (await watch<Echo & KubeObject>(env, ECHOS, ns, {
        onAdd: (e, at) => tracker.onEcho(e, at),
        onUpdate: (_, e, at) => tracker.onEcho(e, at),
      })) as unknown as Watched<KubeObject>,
    );
    watches.push(
      (await watch<V1Job & KubeObject>(env, JOBS, ns, {
        onAdd: (j, at) => tracker.onJob(j, at),
        onUpdate: (_, j, at) => tracker.onJob(j, at),
      })) as unknown as Watched<KubeObject>,
    );
    return tracker;
  }

  get watched(): Watched<KubeObject>[] {
    return this.watches;
  }

  /** Called by the creator when an Echo's POST answered. */
  created(name: string, at = now()): void {
    this.entry(name).created ??= at;
  }

  progress(): string {
    return `${this.jobsSeen}/${this.n} Jobs, ${this.statusSeen}/${this.n} statuses`;
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map((w) => w.stop()));
  }

  /** Per-Echo latencies in ms: POST answered -> Job seen, and -> status.jobName seen. */
  latencies(): { toJob: number[]; toStatus: number[] } {
    const toJob: number[] = [];
    const toStatus: number[] = [];
    for (const t of this.times.values()) {
      if (t.created === undefined) continue;
      if (t.job !== undefined) toJob.push(Math.max(0, t.job - t.created));
      if (t.status !== undefined) toStatus.push(Math.max(0, t.status - t.created));
    }
    return { toJob, toStatus };
  }

  private entry(name: string): EchoTimes {
    let t = this.times.get(name);
    if (!t) this.times.set(name, (t = {}));
    return t;
  }

  private onEcho(e: Echo & KubeObject, at: number): void {
    if (!e.status?.jobName) return;
    const t = this.entry(e.metadata.name!);
    if (t.status !== undefined) return;
    t.status = at;
    this.statusSeen++;
    this.check(at);
  }

  private onJob(j: V1Job & KubeObject, at: number): void {
    const owner = j.metadata?.ownerReferences?.find((r) => r.controller)?.name;
    if (!owner) return;
    const t = this.entry(owner);
    if (t.job !== undefined) return;
    t.job = at;
    this.jobsSeen++;
    this.check(at);
  }

  private check(at: number): void {
    if (this.doneAt === undefined && this.jobsSeen >= this.n && this.statusSeen >= this.n) {
      this.doneAt = at;
      this.resolveDone(at);
    }
  }
}
