/**
 * The final-state rule for an Echo whose run's Job was removed after it completed (the ttl class:
 * as the TTL-after-finished controller removes a finished Job), replacing job-when-done's "one
 * Job printing its message" for that Echo, since that Job is gone by design.
 *
 * What a correct status is then: the run happened and must not happen again, so the status names
 * the removed Job (jobName) at the Echo's generation with a finished phase. Succeeded is the truth
 * (only a Complete Job is removed); Failed is accepted too, for a program that could not see the
 * outcome before the Job vanished and says so rather than guess. A Pending or Running phase naming
 * a Job that no longer exists is stuck: nothing will ever move it. A Ready condition, when written,
 * must agree with the phase (True exactly when Succeeded). A re-run is not this rule's: the audit
 * log shows the second create (one-job-per-generation), and its Job makes the usual rule apply.
 */
import type { Echo } from '../../../../src/api/echo.js';
import { quote } from './generations.js';
import { nameOf } from './types.js';

/** A Job the harness removed: its name, the uid of the Echo that controlled it, what it printed. */
export interface RemovedJob {
  name: string;
  ownerUid: string;
  message: string;
}

/** The removed Job that ran this Echo's current message, if the harness removed one. */
export function removedRunOf(echo: Echo, removed: readonly RemovedJob[]): RemovedJob | undefined {
  return removed.find((j) => j.ownerUid === echo.metadata.uid && j.message === echo.spec.message);
}

/** What is wrong with the status of an Echo whose run's Job was removed; undefined when nothing. */
export function removedRunStatusWrong(echo: Echo, job: RemovedJob): string | undefined {
  const s = echo.status;
  const ready = s?.conditions?.find((c) => c.type === 'Ready')?.status;
  const finished = s?.phase === 'Succeeded' || s?.phase === 'Failed';
  const readyRight = ready === undefined || (ready === 'True') === (s?.phase === 'Succeeded');
  if (s?.jobName === job.name && finished && s.observedGeneration === echo.metadata.generation && readyRight) return undefined;
  return (
    `Echo ${nameOf(echo)} (message ${quote(echo.spec.message)}): its Job ${job.name} completed and was removed (as a TTL does); ` +
    `status says jobName=${s?.jobName} phase=${s?.phase} observedGeneration=${s?.observedGeneration} Ready=${ready}, ` +
    `not a finished run of that Job at generation ${echo.metadata.generation}: stuck`
  );
}
