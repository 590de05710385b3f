/**
 * The campaign's workloads: small, deterministic sequences of user writes (as the admin, never
 * through a fault proxy), each step after the program has observed the previous one, so a clean
 * run makes the same writes in the same order every time (what the intermediate class counts).
 *
 *  - echo-basic: create 3 Echos; edit one's message while another's finished Job is removed (as
 *    a TTL controller or a user would); delete the latter.
 *  - scheduled-basic: create 2 ScheduledEchos; change one's schedule; suspend the other's CronJob
 *    by hand (the API has no suspend: a user pausing it directly, which the operator must undo).
 *  - mixed: both kinds at once: 2 Echos and a ScheduledEcho; an edit of each kind and a finished
 *    Job removed; a delete.
 *
 * Guarantees: every write is retried while the API server is unreachable or overloaded (the
 * restart class restarts it mid-workload), and a retried create or delete that went through the
 * first time counts as done. A gate (observedBy) that does not hold by its deadline does not stop the workload
 * (a broken program must still meet the rest of it); the invariants judge the outcome.
 */
import type { V1CronJob, V1Job, V1ObjectMeta } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../../src/api/echo.js';
import { API_VERSION } from '../../../src/api/group.js';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../../src/api/scheduledecho.js';
import { isAlreadyExists, isNotFound } from '../../../src/kube/errors.js';
import { CRONJOBS, JOBS, resourcePath, type ResourceType } from '../../../src/kube/resources.js';
import type { RestClient } from '../../../src/kube/rest.js';
import type { KubeObject } from '../../../src/runtime/cache/store.js';
import { eventually } from '../../testbed/eventually.js';
import { withRetry } from '../bench/api.js';
import { sleep } from '../bench/log.js';
import { isFinished } from '../../../src/controllers/echo/status.js';
import { controllerOf, renderedMessage } from './judge/pod.js';
import { jobPhase } from './judge/state.js';
import type { Violation } from './judge/types.js';
import type { WorkloadName } from './vocabulary.js';

export type Step =
  | { op: 'create-echo'; name: string; message: string }
  | { op: 'create-scheduled'; name: string; message: string; schedule: string; timeZone?: string }
  | { op: 'edit-echo'; name: string; message: string }
  | { op: 'edit-schedule'; name: string; schedule: string }
  | { op: 'suspend-cronjob'; name: string }
  | { op: 'delete-echo'; name: string }
  /**
   * Delete the Echo's Job once its run finished, by the program's word (its status), or for a
   * program keeping no status, the Job's: the run happened and must not happen again.
   */
  | { op: 'remove-finished-job'; name: string }
  /** Wait until the program observed these objects' current generation. */
  | { op: 'observed'; echos: string[]; scheduled: string[] };

const STEPS: Record<WorkloadName, Step[][]> = {
  'echo-basic': [
    [
      { op: 'create-echo', name: 'e1', message: 'one' },
      { op: 'create-echo', name: 'e2', message: 'two' },
      { op: 'create-echo', name: 'e3', message: 'three' },
    ],
    [{ op: 'observed', echos: ['e1', 'e2', 'e3'], scheduled: [] }],
    [
      { op: 'edit-echo', name: 'e1', message: 'one, again' },
      { op: 'remove-finished-job', name: 'e3' },
    ],
    [{ op: 'observed', echos: ['e1'], scheduled: [] }],
    [{ op: 'delete-echo', name: 'e3' }],
  ],
  'scheduled-basic': [
    [
      { op: 'create-scheduled', name: 's1', message: 'every five', schedule: '*/5 * * * *' },
      { op: 'create-scheduled', name: 's2', message: 'hourly', schedule: '0 * * * *' },
    ],
    [{ op: 'observed', echos: [], scheduled: ['s1', 's2'] }],
    [{ op: 'edit-schedule', name: 's1', schedule: '*/10 * * * *' }],
    [{ op: 'observed', echos: [], scheduled: ['s1'] }],
    [{ op: 'suspend-cronjob', name: 's2' }],
  ],
  mixed: [
    [
      { op: 'create-echo', name: 'e1', message: 'one' },
      { op: 'create-echo', name: 'e2', message: 'two' },
      { op: 'create-scheduled', name: 's1', message: 'every five', schedule: '*/5 * * * *' },
    ],
    [{ op: 'observed', echos: ['e1', 'e2'], scheduled: ['s1'] }],
    [
      { op: 'edit-echo', name: 'e1', message: 'one, again' },
      { op: 'edit-schedule', name: 's1', schedule: '*/10 * * * *' },
      { op: 'remove-finished-job', name: 'e2' },
    ],
    [{ op: 'observed', echos: ['e1'], scheduled: ['s1'] }],
    [{ op: 'delete-echo', name: 'e2' }],
  ],
};

export interface WorkloadResult {
  /** Date.now() of the first and the last user write's answer. */
  firstWriteAt: number;
  lastWriteAt: number;
  /** Gates that timed out (the program did not observe a step in time). */
  lateGates: string[];
  /** What a generated sequence found as it went (generated/oracles.ts: an edit the CRD should refuse). */
  violations?: Violation[];
}

export interface WorkloadContext {
  rest: RestClient;
  namespace: string;
  /** How long one gate may wait for the program. */
  gateTimeoutMs: number;
  /** Called once, just before the first write (the faults' time zero). */
  onStart?: () => void;
}

/** Plays the workload; resolves after its last write. */
export async function runWorkload(name: WorkloadName, ctx: WorkloadContext): Promise<WorkloadResult> {
  let firstWriteAt = 0;
  let lastWriteAt = 0;
  const lateGates: string[] = [];
  ctx.onStart?.();
  for (const group of STEPS[name]) {
    await Promise.all(
      group.map(async (step) => {
        if (step.op === 'observed') {
          if (!(await observed(ctx, step.echos, step.scheduled))) lateGates.push([...step.echos, ...step.scheduled].join(','));
          return;
        }
        await write(ctx, step);
        firstWriteAt ||= Date.now();
        lastWriteAt = Date.now();
      }),
    );
  }
  return { firstWriteAt, lastWriteAt, lateGates };
}

/** One user write of a workload (or of a generated sequence, generated/play.ts). */
export async function write(ctx: WorkloadContext, step: Exclude<Step, { op: 'observed' }>): Promise<void> {
  const { rest, namespace: ns } = ctx;
  switch (step.op) {
    case 'create-echo':
      return create(rest, ECHOS, ns, {
        apiVersion: API_VERSION,
        kind: 'Echo',
        metadata: { name: step.name },
        spec: { message: step.message },
      });
    case 'create-scheduled':
      return create(rest, SCHEDULED_ECHOS, ns, {
        apiVersion: API_VERSION,
        kind: 'ScheduledEcho',
        metadata: { name: step.name },
        spec: { message: step.message, schedule: step.schedule, ...(step.timeZone ? { timeZone: step.timeZone } : {}) },
      });
    case 'edit-echo':
      return mergePatch(ctx, ECHOS, step.name, { spec: { message: step.message } });
    case 'edit-schedule':
      return mergePatch(ctx, SCHEDULED_ECHOS, step.name, { spec: { schedule: step.schedule } });
    case 'suspend-cronjob':
      // Not made yet (a broken program): nothing to suspend.
      return mergePatch(ctx, CRONJOBS, await cronJobName(ctx, step.name), { spec: { suspend: true } }, { ignoreNotFound: true });
    case 'remove-finished-job': {
      const job = await finishedJob(ctx, step.name);
      if (!job) return; // no run finished in time (a broken program): nothing to remove
      return remove(ctx, JOBS, job, { propagationPolicy: 'Background' });
    }
    case 'delete-echo':
      return remove(ctx, ECHOS, step.name);
  }
}

/** A merge patch, retried while the API server is unreachable or overloaded. */
export async function mergePatch(
  ctx: WorkloadContext,
  type: ResourceType,
  name: string,
  body: object,
  opts: { ignoreNotFound?: boolean } = {},
): Promise<void> {
  await withRetry(async () => {
    try {
      await ctx.rest.request('PATCH', resourcePath(type, ctx.namespace, name), { contentType: 'application/merge-patch+json', body });
    } catch (err) {
      if (!opts.ignoreNotFound || !isNotFound(err)) throw err;
    }
  }, 12);
}

/** A delete, retried like a write; one already gone counts as done. */
export async function remove(ctx: WorkloadContext, type: ResourceType, name: string, query?: Record<string, string>): Promise<void> {
  await withRetry(async () => {
    try {
      await ctx.rest.request('DELETE', resourcePath(type, ctx.namespace, name), query ? { query } : {});
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }, 12);
}

/** The ScheduledEcho's CronJob, by its status, else its own name (controllers/scheduledecho/desired.ts names it so). */
export async function cronJobName(ctx: WorkloadContext, scheduledEcho: string): Promise<string> {
  const se = await withRetry(() => ctx.rest.request<ScheduledEcho>('GET', resourcePath(SCHEDULED_ECHOS, ctx.namespace, scheduledEcho)), 12);
  return se.status?.cronJobName ?? scheduledEcho;
}

async function create(rest: RestClient, type: ResourceType, ns: string, body: Echo | ScheduledEcho): Promise<void> {
  await withRetry(async () => {
    try {
      await rest.request('POST', resourcePath(type, ns), { body });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }, 12);
}

type Observable = KubeObject & { status?: { observedGeneration?: number; jobName?: string; cronJobName?: string } };

/** Whether an object's status reflects its current generation and names what was made for it. */
export function statusObserved(o: Observable): boolean {
  const s = o.status;
  return s?.observedGeneration === o.metadata?.generation && Boolean(s?.jobName ?? s?.cronJobName);
}

/**
 * Whether the program has acted on an object's current spec: its status says so, or (for a
 * program that keeps no such status, as the Go echoperator) what it controls shows it: a Job
 * printing the Echo's message, a CronJob on the ScheduledEcho's schedule.
 */
export function observedBy(o: Echo | ScheduledEcho, jobs: readonly V1Job[], cronJobs: readonly V1CronJob[]): boolean {
  if (statusObserved(o)) return true;
  const mine = <T extends { metadata?: V1ObjectMeta }>(xs: readonly T[]): T[] =>
    xs.filter((x) => controllerOf(x.metadata)?.uid === o.metadata.uid);
  return o.kind === 'Echo'
    ? mine(jobs).some((j) => renderedMessage(j.spec?.template.spec) === o.spec.message)
    : mine(cronJobs).some((c) => c.spec?.schedule === o.spec.schedule);
}

/**
 * The Job that prints the Echo's current message, once its run finished: by the program's word
 * (its status names that Job and a final phase), or, for a program keeping no status, the Job's.
 */
export function finishedJobOf(echo: Echo, jobs: readonly V1Job[]): V1Job | undefined {
  const job = jobs.find(
    (j) => controllerOf(j.metadata)?.uid === echo.metadata.uid && renderedMessage(j.spec?.template.spec) === echo.spec.message,
  );
  if (!job) return undefined;
  const done = echo.status ? isFinished(echo.status.phase) && echo.status.jobName === job.metadata?.name : jobPhase(job) === 'Succeeded';
  return done ? job : undefined;
}

/** The name of the Echo's Job once its run finished (finishedJobOf), or undefined at the gate's deadline. */
export async function finishedJob(ctx: WorkloadContext, echoName: string): Promise<string | undefined> {
  return eventually(
    `the run of ${echoName} to finish`,
    async () => {
      const [echo, jobs] = await Promise.all([
        ctx.rest.request<Echo>('GET', resourcePath(ECHOS, ctx.namespace, echoName), { timeoutMs: 5000 }),
        ctx.rest.request<{ items?: V1Job[] }>('GET', resourcePath(JOBS, ctx.namespace), { timeoutMs: 5000 }),
      ]);
      return finishedJobOf(echo, jobs.items ?? [])?.metadata?.name;
    },
    ctx.gateTimeoutMs,
    100,
  ).catch(() => undefined);
}

export async function observed(ctx: WorkloadContext, echos: string[], scheduled: string[]): Promise<boolean> {
  const deadline = Date.now() + ctx.gateTimeoutMs;
  const list = async <T>(type: ResourceType, wanted: string[]): Promise<T[]> =>
    wanted.length
      ? ((await ctx.rest.request<{ items?: T[] }>('GET', resourcePath(type, ctx.namespace), { timeoutMs: 5000 })).items ?? [])
      : [];
  while (Date.now() < deadline) {
    try {
      const [es, ss, jobs, cronJobs] = await Promise.all([
        list<Echo>(ECHOS, echos),
        list<ScheduledEcho>(SCHEDULED_ECHOS, scheduled),
        list<V1Job>(JOBS, echos),
        list<V1CronJob>(CRONJOBS, scheduled),
      ]);
      const seen = (items: (Echo | ScheduledEcho)[], names: string[]): boolean =>
        names.every((n) => items.some((o) => o.metadata.name === n && observedBy(o, jobs, cronJobs)));
      if (seen(es, echos) && seen(ss, scheduled)) return true;
    } catch {
      // the API server restarting: not yet
    }
    await sleep(100);
  }
  return false;
}
