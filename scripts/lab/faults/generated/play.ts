/**
 * Plays a generated sequence (sequence.ts) as the admin, one operation after the other, each
 * waiting, with the gate's deadline, for the program to act where the fixed workloads do: after a
 * create or an edit until the program observed it (workloads.ts observed), after a delete until the
 * object is gone (its finalizers removed), after a hand edit or delete of a CronJob until it
 * matches its spec again; a hand delete of a Job waits for its run to finish first. A refused edit
 * is checked as it happens (oracles.ts refusedEdit). A gate that does not hold by its deadline is
 * recorded and the sequence goes on (the judge's status-converges, as for a workload's gates).
 *
 * Guarantees: the writes are those of workloads.ts (retried while the API server is unreachable or
 * overloaded); runSequence resolves after the last operation, with the same result as runWorkload.
 */
import { ECHOS } from '../../../../src/api/echo.js';
import { SCHEDULED_ECHOS } from '../../../../src/api/scheduledecho.js';
import { ApiError } from '../../../../src/kube/errors.js';
import { CRONJOBS, JOBS, resourcePath, type ResourceType } from '../../../../src/kube/resources.js';
import { eventually } from '../../../testbed/eventually.js';
import { withRetry } from '../../bench/api.js';
import { readFinalState } from '../judge/invariants.js';
import type { Violation } from '../judge/types.js';
import { cronJobName, finishedJob, mergePatch, observed, remove, write, type WorkloadContext, type WorkloadResult } from '../workloads.js';
import { refusedEdit, restored, type EditAnswer, type Snapshot } from './oracles.js';
import type { GeneratedOp, RefusedOp } from './sequence.js';

/** The label a hand edit puts on an Echo's Job. */
const HAND_LABEL = 'faults.echoperator.mmontes.io/hand-edit';

export async function runSequence(ops: readonly GeneratedOp[], ctx: WorkloadContext): Promise<WorkloadResult> {
  let firstWriteAt = 0;
  let lastWriteAt = 0;
  const lateGates: string[] = [];
  const violations: Violation[] = [];
  const gate = async (what: string, holds: Promise<boolean>): Promise<void> => {
    if (!(await holds)) lateGates.push(what);
  };
  ctx.onStart?.();
  for (const [i, op] of ops.entries()) {
    const step = `${i + 1}. ${op.op} ${op.name}`;
    const wrote = await apply(ctx, op, violations);
    if (wrote) {
      firstWriteAt ||= Date.now();
      lastWriteAt = Date.now();
    }
    switch (op.op) {
      case 'create-echo':
      case 'edit-echo':
      case 'recreate-echo':
        await gate(step, observed(ctx, [op.name], []));
        break;
      case 'create-scheduled':
      case 'edit-scheduled':
      case 'recreate-scheduled':
        await gate(step, observed(ctx, [], [op.name]));
        break;
      case 'delete-echo':
        await gate(step, gone(ctx, ECHOS, op.name));
        break;
      case 'delete-scheduled':
        await gate(step, gone(ctx, SCHEDULED_ECHOS, op.name));
        break;
      case 'suspend-cronjob':
      case 'reschedule-cronjob':
      case 'delete-cronjob':
        await gate(
          step,
          until(ctx, async () => restored(await readFinalState(ctx.rest, ctx.namespace), op.name)),
        );
        break;
      default:
        break;
    }
  }
  return { firstWriteAt, lastWriteAt, lateGates, violations };
}

/** Makes the operation's writes; false when it made none (a hand edit that found nothing to edit). */
async function apply(ctx: WorkloadContext, op: GeneratedOp, violations: Violation[]): Promise<boolean> {
  switch (op.op) {
    case 'create-echo':
    case 'edit-echo':
    case 'delete-echo':
    case 'remove-finished-job':
    case 'suspend-cronjob':
      await write(ctx, op);
      return true;
    case 'create-scheduled':
      await write(ctx, { ...op, op: 'create-scheduled' });
      return true;
    case 'recreate-echo':
    case 'recreate-scheduled': {
      const type = op.op === 'recreate-echo' ? ECHOS : SCHEDULED_ECHOS;
      await remove(ctx, type, op.name);
      if (!(await gone(ctx, type, op.name))) return true; // still terminating: the create would find it
      await write(ctx, op.op === 'recreate-echo' ? { ...op, op: 'create-echo' } : { ...op, op: 'create-scheduled' });
      return true;
    }
    case 'edit-scheduled':
      await mergePatch(ctx, SCHEDULED_ECHOS, op.name, { spec: op.spec });
      return true;
    case 'delete-scheduled':
      await remove(ctx, SCHEDULED_ECHOS, op.name);
      return true;
    case 'label-job': {
      const job = await finishedJob(ctx, op.name);
      if (job) await mergePatch(ctx, JOBS, job, { metadata: { labels: { [HAND_LABEL]: 'true' } } }, { ignoreNotFound: true });
      return job !== undefined;
    }
    case 'reschedule-cronjob':
      await mergePatch(ctx, CRONJOBS, await cronJobName(ctx, op.name), { spec: { schedule: op.schedule } }, { ignoreNotFound: true });
      return true;
    case 'delete-cronjob':
      await remove(ctx, CRONJOBS, await cronJobName(ctx, op.name));
      return true;
    case 'refused-echo':
    case 'refused-scheduled': {
      const v = await tryRefused(ctx, op);
      if (v) violations.push(v);
      return v !== undefined; // a refused edit writes nothing
    }
  }
}

/** Sends an edit the CRD refuses, and judges the answer against the object before and after. */
async function tryRefused(ctx: WorkloadContext, op: RefusedOp): Promise<Violation | undefined> {
  const type = op.op === 'refused-echo' ? ECHOS : SCHEDULED_ECHOS;
  const get = (): Promise<Snapshot> => withRetry(() => ctx.rest.request<Snapshot>('GET', resourcePath(type, ctx.namespace, op.name)), 12);
  const before = await get();
  const leaf = op.field.slice('spec.'.length);
  const answer: EditAnswer = await withRetry(async () => {
    try {
      await ctx.rest.request('PATCH', resourcePath(type, ctx.namespace, op.name), {
        contentType: 'application/merge-patch+json',
        body: { spec: { [leaf]: op.value } },
      });
      return { accepted: true } as const;
    } catch (err) {
      if (err instanceof ApiError && err.code !== 0 && err.code !== 429 && err.code < 500) return { accepted: false, error: err } as const;
      throw err;
    }
  }, 12);
  return refusedEdit(op, answer, before, await get());
}

/** Whether the object is gone (finalizers done) within the gate's deadline. */
function gone(ctx: WorkloadContext, type: ResourceType, name: string): Promise<boolean> {
  return until(ctx, async () => {
    try {
      await ctx.rest.request('GET', resourcePath(type, ctx.namespace, name), { timeoutMs: 5000 });
      return false;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return true;
      throw err;
    }
  });
}

/** Whether `holds` comes true within the gate's deadline (an error, as the API server restarting: not yet). */
function until(ctx: WorkloadContext, holds: () => Promise<boolean>): Promise<boolean> {
  return eventually('the gate', holds, ctx.gateTimeoutMs, 100).then(
    () => true,
    () => false,
  );
}
