/**
 * The ttl class: a finished run's Job removed (as the TTL-after-finished controller does with
 * `ttlSecondsAfterFinished: 0`; no program here sets a TTL, so the runner stands in for that
 * controller: it deletes the Job, propagationPolicy Background, as soon as the server shows it
 * Complete) while the program's replica has not seen the completion: its proxy holds the Job
 * watch events back. Two ways, drawn:
 *  - merge: the Job's MODIFIED events are held (a merge window longer than the run), so the
 *    DELETED event supersedes them: the replica sees the Job created, then gone, never finished
 *    (what a re-list after the removal shows an informer);
 *  - delay: every Job event reaches the replica holdMs late, the completion and the removal
 *    together.
 * The Echo is the class's own (EXPIRING_ECHO, created at the workload's start), so the workload
 * goes on as in a clean run.
 *
 * Oracles: the run is not repeated (one-job-per-generation, from the audit log); the status does
 * not stay stuck (judge/removed-job.ts: it names the removed Job with a finished phase). Effect:
 * the Job was gone before the program recorded that the run finished (the Echo's status, read
 * as the delete is answered).
 *
 * Pure but for playTtl.
 */
import type { V1Job } from '@kubernetes/client-node';
import { isFinished } from '../../../../src/controllers/echo/status.js';
import { isNotFound } from '../../../../src/kube/errors.js';
import { JOBS, resourcePath } from '../../../../src/kube/resources.js';
import { eventually } from '../../../testbed/eventually.js';
import { withRetry } from '../../bench/api.js';
import { sleep } from '../../bench/log.js';
import { controllerOf, renderedMessage } from '../judge/pod.js';
import { jobPhase } from '../judge/state.js';
import type { RemovedJob } from '../judge/removed-job.js';
import { intBetween } from '../random.js';
import type { FaultRun } from '../runner/context.js';
import { createTarget, getEcho, listJobs, skipped } from './target.js';

/** The schedule being played, as this class's code sees it. */
type FaultContext = FaultRun<{ ttl?: TtlEffect }>;

export const EXPIRING_ECHO = 'expiring';
export const EXPIRING_MESSAGE = 'removed once done';
/** The Job watches: the ones whose events the replica's proxy holds. */
export const JOB_WATCHES = /\/jobs$/;
const RUN_TIMEOUT_MS = 30_000;
const POLL_MS = 50;

export interface TtlFaults {
  class: 'ttl';
  hold: 'merge' | 'delay';
  /** The merge window, or the delay, ms. */
  holdMs: number;
  /** ms from the server showing the Job Complete to its removal (the TTL controller's queue). */
  removeAfterMs: number;
}

export function ttlFaults(random: () => number): TtlFaults {
  const hold = random() < 0.5 ? 'merge' : 'delay';
  return {
    class: 'ttl',
    hold,
    // A merge window outlasts the run (created to removed, a few seconds); a delay outlasts the removal.
    holdMs: hold === 'merge' ? intBetween(random, 6000, 9000) : intBetween(random, 1500, 4000),
    removeAfterMs: intBetween(random, 0, 300),
  };
}

export interface TtlEffect extends RemovedJob {
  hold: TtlFaults['hold'];
  /** The delete's answer came before the Echo's status recorded the run finished. */
  goneBeforeRecorded: boolean;
  /** What the status said then. */
  statusThen: string;
}

export function ttlHadEffect(e: TtlEffect | undefined): boolean {
  return e?.goneBeforeRecorded === true;
}

export function ttlSummary(e: TtlEffect): string {
  return `Job ${e.name} removed once Complete (${e.hold}), ${e.goneBeforeRecorded ? 'before' : 'after'} the status recorded it (status then: ${e.statusThen})`;
}

/** The Job of the Echo with uid `uid` printing `message`, once the server shows it Complete. */
export function completedJobOf(jobs: readonly V1Job[], uid: string, message: string): V1Job | undefined {
  return jobs.find(
    (j) => controllerOf(j.metadata)?.uid === uid && renderedMessage(j.spec?.template?.spec) === message && jobPhase(j) === 'Succeeded',
  );
}

export async function playTtl(ctx: FaultContext, f: TtlFaults): Promise<void> {
  const { rest, namespace: ns } = ctx;
  const r = ctx.replicas.all[0];
  if (!r || r.exit) return skipped(ctx, 'no running replica');
  const from = Date.now();
  if (f.hold === 'merge') r.proxy.mergeWatchEvents(f.holdMs, JOB_WATCHES);
  else r.proxy.delayWatches(f.holdMs, JOB_WATCHES);
  try {
    const echo = await createTarget(rest, ns, EXPIRING_ECHO, EXPIRING_MESSAGE);
    const uid = echo.metadata.uid!;
    const job = await eventually(
      `the Job of ${EXPIRING_ECHO} to complete`,
      async () => completedJobOf(await listJobs(rest, ns), uid, EXPIRING_MESSAGE),
      RUN_TIMEOUT_MS,
      POLL_MS,
    ).catch(() => undefined);
    if (!job) return skipped(ctx, `no Job of ${EXPIRING_ECHO} completed within ${RUN_TIMEOUT_MS} ms`);
    await sleep(f.removeAfterMs);
    const name = job.metadata!.name!;
    await withRetry(async () => {
      try {
        await rest.request('DELETE', resourcePath(JOBS, ns, name), {
          query: { propagationPolicy: 'Background' },
          body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: job.metadata!.uid } },
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }, 12);
    const removedAt = Date.now();
    const s = (await getEcho(rest, ns, EXPIRING_ECHO)).status;
    ctx.effects.ttl = {
      name,
      ownerUid: uid,
      message: EXPIRING_MESSAGE,
      hold: f.hold,
      goneBeforeRecorded: !(s?.jobName === name && isFinished(s.phase)),
      statusThen: s ? `jobName=${s.jobName} phase=${s.phase}` : 'none',
    };
    ctx.timeline.push({ kind: 'fault', from: removedAt, to: removedAt, label: `Job ${name} removed (TTL)` });
    // What the proxy holds reaches the replica within holdMs: the fault ends once it has.
    await sleep(f.holdMs + 500);
  } finally {
    if (f.hold === 'merge') r.proxy.mergeWatchEvents(0);
    else r.proxy.delayWatches(0);
    ctx.timeline.push({ kind: 'fault', replica: r.name, from, to: Date.now(), label: `Job watch ${f.hold} ${f.holdMs} ms` });
  }
}
