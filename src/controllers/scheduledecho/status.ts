/**
 * A ScheduledEcho's status, computed from its CronJob: a pure function, so the same CronJob
 * always gives the same status and a reconcile that changes nothing writes nothing.
 *
 * Its kstatus summary (see readinessConditions) is Ready alone: a ScheduledEcho is Ready once its
 * CronJob is in place, written in the same pass that computes this status, so there is no phase
 * in which it progresses on its own. A pass that fails sets Ready=False with the error instead
 * (reportFailure), which kstatus reads as InProgress while the operator retries; a refusal only
 * a change can cure (runtime/reconcile/stalled.ts: a schedule the server rejects, a CronJob name taken)
 * adds Stalled=True, which kstatus reads as Failed. Before the first pass, the CRD's default
 * status.observedGeneration (0) already reads as InProgress.
 */
import type { V1CronJob } from '@kubernetes/client-node';
import type { ScheduledEcho, ScheduledEchoStatus } from '../../api/scheduledecho.js';
import { apiTime, compact, readinessConditions, setConditions } from '../../runtime/index.js';

export function scheduledEchoStatus(se: ScheduledEcho, name: string, cronJob: V1CronJob, now: () => Date): ScheduledEchoStatus {
  return compact({
    cronJobName: name,
    lastScheduleTime: apiTime(cronJob.status?.lastScheduleTime),
    lastSuccessfulTime: apiTime(cronJob.status?.lastSuccessfulTime),
    observedGeneration: se.metadata.generation,
    conditions: setConditions(
      se.status?.conditions,
      readinessConditions('Ready', 'CronJobReady', `CronJob ${name} runs on schedule "${se.spec.schedule}"`),
      se.metadata.generation,
      now,
    ),
  });
}
