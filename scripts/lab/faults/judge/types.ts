/**
 * What the judge's rules take and give: a violation, and the namespace's objects at the end of a
 * schedule (the final state) as the API server lists them.
 */
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../../../src/api/echo.js';
import type { ScheduledEcho } from '../../../../src/api/scheduledecho.js';

export interface Violation {
  invariant:
    | 'one-job-per-generation'
    | 'job-when-done'
    | 'one-cronjob'
    | 'cronjob-matches-spec'
    | 'status-converges'
    | 'write-outside-term'
    | 'unexpected-exit'
    /** The recreate class (classes/recreate.ts). */
    | 'job-after-delete'
    | 'old-job-taken'
    /** generated/oracles.ts: an edit the CRD should refuse, refused naming its field, changing nothing. */
    | 'edit-refused';
  detail: string;
}

export interface FinalState {
  echos: Echo[];
  jobs: V1Job[];
  scheduledEchos: ScheduledEcho[];
  cronJobs: V1CronJob[];
}

/** "ns/name" of an object, for the details. */
export function nameOf(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** An instant of the audit log, as the details show it. */
export function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
}
