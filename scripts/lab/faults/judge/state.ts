/**
 * The rules on the final state (what the namespace holds once the workload ended), the same for
 * every program:
 * - job-when-done: every Echo alive has exactly one Job it controls that prints its current
 *   message (a run of an earlier message the program keeps is not counted, nor required gone);
 * - status-converges: that Echo's status names the Job (jobName), its phase is the Job's
 *   (Complete -> Succeeded, Failed -> Failed, started -> Running, else Pending), observedGeneration
 *   is the Echo's generation, and a Ready condition, when the program writes one, is True exactly
 *   when the Job completed; a ScheduledEcho's names its CronJob (cronJobName) at its generation,
 *   and a Ready condition, when written, is True;
 * - one-cronjob: every ScheduledEcho alive controls exactly one CronJob;
 * - cronjob-matches-spec: that CronJob has the ScheduledEcho's schedule, time zone (unset, UTC and
 *   Etc/UTC are one zone: the control plane runs in UTC), suspension and message (as its pods
 *   would print it, see renderedMessage).
 * A program that writes no status at all breaks status-converges: the status is what users read.
 */
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../../../src/api/echo.js';
import type { ScheduledEcho } from '../../../../src/api/scheduledecho.js';
import type { Condition } from '../../../../src/kube/object.js';
import { quote } from './generations.js';
import { controllerOf, renderedMessage } from './pod.js';
import { removedRunOf, removedRunStatusWrong, type RemovedJob } from './removed-job.js';
import { nameOf, type FinalState, type Violation } from './types.js';

const UTC_ZONES = new Set([undefined, '', 'UTC', 'Etc/UTC']);

function alive<T extends { metadata?: { deletionTimestamp?: unknown } }>(objects: readonly T[]): T[] {
  return objects.filter((o) => !o.metadata?.deletionTimestamp);
}

function controlledBy<T extends { metadata?: { ownerReferences?: unknown } }>(objects: readonly T[], uid: string | undefined): T[] {
  return objects.filter((o) => controllerOf(o.metadata as V1Job['metadata'])?.uid === uid);
}

/** The phase an Echo's status should show for its Job. */
export function jobPhase(job: V1Job): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  const isTrue = (type: string): boolean => job.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
  if (isTrue('Complete')) return 'Succeeded';
  if (isTrue('Failed')) return 'Failed';
  return job.status?.startTime ? 'Running' : 'Pending';
}

function readyOf(conditions: readonly Condition[] | undefined): string | undefined {
  return conditions?.find((c) => c.type === 'Ready')?.status;
}

/** `removed`: Jobs the harness removed after they completed (the ttl class; judge/removed-job.ts). */
export function echoViolations(state: FinalState, removed: readonly RemovedJob[] = []): Violation[] {
  const violations: Violation[] = [];
  const jobs = alive(state.jobs);
  for (const echo of alive(state.echos)) {
    const owned = controlledBy(jobs, echo.metadata.uid);
    const current = owned.filter((j) => renderedMessage(j.spec?.template?.spec) === echo.spec.message);
    const gone = current.length === 0 ? removedRunOf(echo, removed) : undefined;
    if (gone) {
      const wrong = removedRunStatusWrong(echo, gone);
      if (wrong) violations.push({ invariant: 'status-converges', detail: wrong });
      continue;
    }
    if (current.length !== 1) {
      violations.push({
        invariant: 'job-when-done',
        detail:
          `Echo ${nameOf(echo)} generation ${echo.metadata.generation} (message ${quote(echo.spec.message)}) has ` +
          `${current.length} Jobs printing its message; the Jobs it controls: ` +
          (owned.map((j) => `${j.metadata?.name} prints ${quote(renderedMessage(j.spec?.template?.spec))}`).join(', ') || 'none'),
      });
      continue;
    }
    const wrong = echoStatusWrong(echo, current[0]!);
    if (wrong) violations.push({ invariant: 'status-converges', detail: wrong });
  }
  return violations;
}

function echoStatusWrong(echo: Echo, job: V1Job): string | undefined {
  const phase = jobPhase(job);
  const s = echo.status;
  const ready = readyOf(s?.conditions);
  const readyRight = ready === undefined || (ready === 'True') === (phase === 'Succeeded');
  if (s?.jobName === job.metadata?.name && s?.phase === phase && s?.observedGeneration === echo.metadata.generation && readyRight) {
    return undefined;
  }
  return (
    `Echo ${nameOf(echo)}: status says jobName=${s?.jobName} phase=${s?.phase} observedGeneration=${s?.observedGeneration}` +
    ` Ready=${ready}; the truth: Job ${job.metadata?.name} phase ${phase}, generation ${echo.metadata.generation}`
  );
}

export function scheduledEchoViolations(state: FinalState): Violation[] {
  const violations: Violation[] = [];
  const cronJobs = alive(state.cronJobs);
  for (const se of alive(state.scheduledEchos)) {
    const owned = controlledBy(cronJobs, se.metadata.uid);
    if (owned.length !== 1) {
      violations.push({
        invariant: 'one-cronjob',
        detail: `ScheduledEcho ${nameOf(se)} controls ${owned.length} CronJobs: ${owned.map((c) => c.metadata?.name).join(', ') || 'none'}`,
      });
      continue;
    }
    const cronJob = owned[0]!;
    const mismatch = cronJobMismatch(se, cronJob);
    if (mismatch)
      violations.push({
        invariant: 'cronjob-matches-spec',
        detail: `CronJob ${nameOf(cronJob)} of ScheduledEcho ${nameOf(se)}: ${mismatch}`,
      });
    const s = se.status;
    const ready = readyOf(s?.conditions);
    if (
      s?.cronJobName !== cronJob.metadata?.name ||
      s?.observedGeneration !== se.metadata.generation ||
      (ready !== undefined && ready !== 'True')
    ) {
      violations.push({
        invariant: 'status-converges',
        detail:
          `ScheduledEcho ${nameOf(se)}: status says cronJobName=${s?.cronJobName} observedGeneration=${s?.observedGeneration} Ready=${ready}; ` +
          `the truth: CronJob ${cronJob.metadata?.name}, generation ${se.metadata.generation}`,
      });
    }
  }
  return violations;
}

/** What differs between the ScheduledEcho's spec and its CronJob, program-neutral parts only; undefined when nothing. */
export function cronJobMismatch(se: ScheduledEcho, cronJob: V1CronJob): string | undefined {
  const spec = cronJob.spec;
  const wantSuspend = (se.spec as { suspend?: boolean }).suspend === true;
  const message = renderedMessage(spec?.jobTemplate?.spec?.template?.spec);
  const diffs: string[] = [];
  if (spec?.schedule !== se.spec.schedule) diffs.push(`schedule ${quote(spec?.schedule)}, spec ${quote(se.spec.schedule)}`);
  const zone = spec?.timeZone ?? undefined;
  const wantZone = se.spec.timeZone ?? undefined;
  if (zone !== wantZone && !(UTC_ZONES.has(zone) && UTC_ZONES.has(wantZone))) diffs.push(`timeZone ${zone}, spec ${wantZone}`);
  if ((spec?.suspend === true) !== wantSuspend) diffs.push(`suspend ${spec?.suspend}, spec ${wantSuspend}`);
  if (message !== se.spec.message) diffs.push(`prints ${quote(message)}, spec ${quote(se.spec.message)}`);
  return diffs.length ? diffs.join('; ') : undefined;
}
