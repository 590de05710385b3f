/**
 * An Echo's status, computed from its Job: a pure function, so the same Job always gives the same
 * status and a reconcile that changes nothing writes nothing.
 *
 * Besides the run's own conditions (Succeeded, Reconciled) it carries kstatus's summary (see
 * readinessConditions): an Echo is Ready once its message is printed; Reconciling while its Job
 * has not finished; Stalled when the Job failed, since a run is never repeated (only a new
 * message starts another). So a GitOps tool that health-checks an Echo waits for the print.
 */
import type { V1Job } from '@kubernetes/client-node';
import type { Echo, EchoPhase, EchoStatus } from '../../api/echo.js';
import { apiTime, compact, type ConditionInput, type Readiness, readinessConditions, setConditions } from '../../runtime/index.js';

export const SUCCEEDED_CONDITION = 'Succeeded';
export const RECONCILED_CONDITION = 'Reconciled';

export interface RunState {
  phase: EchoPhase;
  succeeded: ConditionInput;
}

function jobCondition(job: V1Job | undefined, type: string) {
  return job?.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

/**
 * The run's phase and Succeeded condition. A Job not created yet reads exactly like a created one
 * that has not started, so the status written before the create (see EchoReconciler.claimRun)
 * needs no second write after it.
 */
export function runState(job: V1Job | undefined, name = job?.metadata?.name): RunState {
  if (!job?.status?.startTime && !jobCondition(job, 'Complete') && !jobCondition(job, 'Failed')) {
    return {
      phase: 'Pending',
      succeeded: { type: SUCCEEDED_CONDITION, status: 'Unknown', reason: 'JobPending', message: `Job ${name} has not started yet` },
    };
  }
  if (jobCondition(job, 'Complete')) {
    return {
      phase: 'Succeeded',
      succeeded: { type: SUCCEEDED_CONDITION, status: 'True', reason: 'JobComplete', message: `Job ${name} printed the message` },
    };
  }
  const failed = jobCondition(job, 'Failed');
  if (failed) {
    return {
      phase: 'Failed',
      succeeded: {
        type: SUCCEEDED_CONDITION,
        status: 'False',
        reason: failed.reason || 'JobFailed',
        message: failed.message || `Job ${name} failed`,
      },
    };
  }
  return {
    phase: 'Running',
    succeeded: { type: SUCCEEDED_CONDITION, status: 'Unknown', reason: 'JobRunning', message: `Job ${name} is running` },
  };
}

/**
 * A run whose Job was removed (by hand, or by a TTL) before its outcome was recorded: it started,
 * so it may have printed, and it is not repeated; what it did is unknown, so it counts as failed.
 */
export function jobRemovedRun(name: string): RunState {
  return {
    phase: 'Failed',
    succeeded: {
      type: SUCCEEDED_CONDITION,
      status: 'False',
      reason: 'JobRemoved',
      message: `Job ${name} was removed before its outcome was recorded; the run is not repeated`,
    },
  };
}

const READINESS: Record<EchoPhase, Readiness> = {
  Pending: 'Progressing',
  Running: 'Progressing',
  Succeeded: 'Ready',
  Failed: 'Stalled',
};

/** Ready, and Reconciling or Stalled, for a run in this state. */
export function runReadiness(run: RunState): ConditionInput[] {
  return readinessConditions(READINESS[run.phase], run.succeeded.reason, run.succeeded.message);
}

/**
 * Status for `echo` whose current run is `job` (undefined: not created yet). `readiness`, when
 * given, replaces the run's Ready/Reconciling/Stalled summary (a stall recorded for this
 * generation, kept while the Job does not exist); `run`, the run's state read from the Job (a
 * Job removed before its outcome was recorded: jobRemovedRun).
 */
export function echoStatus(
  echo: Echo,
  jobName: string,
  job: V1Job | undefined,
  reconciled: ConditionInput,
  now: () => Date,
  readiness?: ConditionInput[],
  run: RunState = runState(job, jobName),
): EchoStatus {
  const status: EchoStatus = {
    phase: run.phase,
    jobName,
    startTime: apiTime(job?.status?.startTime),
    completionTime: run.phase === 'Succeeded' ? apiTime(job?.status?.completionTime) : undefined,
    observedGeneration: echo.metadata.generation,
    // Reconciled last, where reportFailure puts it: the same conditions in the same order
    // compare equal, so a pass that fails again writes nothing.
    conditions: setConditions(
      echo.status?.conditions,
      [run.succeeded, ...(readiness ?? runReadiness(run)), reconciled],
      echo.metadata.generation,
      now,
    ),
  };
  return compact(status);
}

export const reconciledOk: ConditionInput = {
  type: RECONCILED_CONDITION,
  status: 'True',
  reason: 'Reconciled',
  message: 'The Job matches the Echo',
};

export function isFinished(phase: EchoPhase | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}
