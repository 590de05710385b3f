/**
 * The fault campaign's judge: turns a schedule's trace (the API server's audit log from the
 * schedule's start, the namespace's final state, the replicas' exits) into violations of the
 * issue's invariants. It believes the server, never a program: writes and their times come from
 * the audit log, outcomes from the objects the server holds.
 *
 * The rules, the same for every program (ours, the controller-runtime peer, the Go echoperator,
 * a mutant), none asked to label or name anything in a particular way:
 * - one-job-per-generation: a Job is of an Echo when its controller owner reference names the
 *   Echo's uid; it ran the generation whose message it prints and which was the latest such when
 *   the create was received; no generation gets two Job creates (judge/generations.ts says why
 *   the message and the time, not a label, decide the generation);
 * - job-when-done, status-converges, one-cronjob, cronjob-matches-spec: on the final state
 *   (judge/state.ts), re-read until they hold or the bound after the workload's end passes: a
 *   violation then says what the status says against the truth;
 * - write-outside-term: lease terms from the audit log's Lease writes (judge/terms.ts);
 * - unexpected-exit: a replica's exit the schedule did not design (a lost lease, bad settings),
 *   once it was ready: an exit at start-up is the report's own column, not a violation.
 */
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../../../src/api/echo.js';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../../../src/api/scheduledecho.js';
import { CRONJOBS, JOBS, loadKubeConfig, resourcePath, RestClient, type ResourceType } from '../../../../src/kube/index.js';
import { readAuditWithObjects, type AuditRecordWithObjects } from './audit.js';
import { echoGenerations, jobRuns, oneJobPerGeneration } from './generations.js';
import type { RemovedJob } from './removed-job.js';
import { echoViolations, scheduledEchoViolations } from './state.js';
import { writesOutsideTerm } from './terms.js';
import { iso, type FinalState, type Violation } from './types.js';

export type { FinalState, Violation } from './types.js';

export interface Trace {
  program: string;
  namespace: string;
  auditLogPath: string;
  auditFrom: number;
  lease?: { namespace: string; name: string; durationS: number };
  /** startup: it exited before it was ready (counted apart by the report, never a violation: a kubelet restarts it). */
  exits: { replica: string; code: number | null; signal: string | null; designed: boolean; startup?: boolean }[];
  /** the workload's end (last user write), and the bound status must converge within after it */
  workloadEnd: number;
  convergenceBoundMs: number;
  adminKubeconfig: string;
  /** Audit IDs of writes a fault proxy held and delivered late (the late class): not the replica's writes outside a term. */
  deliveredLate?: string[];
  /** Jobs the harness removed once they completed (the ttl class): judge/removed-job.ts. */
  removedJobs?: RemovedJob[];
}

/** The invariants on the final state: they may hold only some time after the workload's end. */
const CONVERGING = new Set<Violation['invariant']>(['job-when-done', 'status-converges', 'one-cronjob', 'cronjob-matches-spec']);
const POLL_MS = 500;

export interface JudgeInput {
  trace: Pick<Trace, 'namespace' | 'lease' | 'exits' | 'deliveredLate' | 'removedJobs'>;
  /** The audit log from the schedule's start (readAuditWithObjects). */
  records: readonly AuditRecordWithObjects[];
  state: FinalState;
}

/** Every invariant, once, on one reading of the log and the state: pure. */
export function judge({ trace, records, state }: JudgeInput): Violation[] {
  const inNamespace = records.filter((r) => r.namespace === trace.namespace);
  const generations = echoGenerations(inNamespace, state.echos);
  return [
    ...oneJobPerGeneration(jobRuns(inNamespace, state.jobs, generations), generations),
    ...echoViolations(state, trace.removedJobs),
    ...scheduledEchoViolations(state),
    ...(trace.lease ? writesOutsideTerm(records, trace.lease, trace.namespace, trace.deliveredLate) : []),
    ...trace.exits
      .filter((e) => !e.designed && !e.startup)
      .map((e) => ({
        invariant: 'unexpected-exit' as const,
        detail: `replica ${e.replica} exited (code ${e.code}, signal ${e.signal}) where the schedule designed no exit`,
      })),
  ];
}

/**
 * Judges a played schedule: re-reads the final state (and the log) until the converging
 * invariants hold or `workloadEnd + convergenceBoundMs` passes, then returns what is violated.
 * A read that fails (the API server restarting) is tried again until that deadline, then rejects.
 */
export async function checkInvariants(trace: Trace): Promise<Violation[]> {
  const rest = new RestClient(loadKubeConfig(trace.adminKubeconfig), { userAgent: 'echoperator-faults-judge' });
  try {
    const deadline = Math.max(Date.now(), trace.workloadEnd + trace.convergenceBoundMs);
    for (;;) {
      let state: FinalState;
      try {
        state = await readFinalState(rest, trace.namespace);
      } catch (err) {
        if (Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, POLL_MS));
        continue;
      }
      const violations = judge({ trace, records: readAuditWithObjects(trace.auditLogPath, trace.auditFrom), state });
      const now = Date.now();
      if (!violations.some((v) => CONVERGING.has(v.invariant))) return violations;
      if (now >= deadline) {
        const when = ` (read ${iso(now)}, ${now - trace.workloadEnd} ms after the workload's end; the bound is ${trace.convergenceBoundMs} ms)`;
        return violations.map((v) => (CONVERGING.has(v.invariant) ? { ...v, detail: v.detail + when } : v));
      }
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, deadline - now)));
    }
  } finally {
    rest.close();
  }
}

export async function readFinalState(rest: RestClient, namespace: string): Promise<FinalState> {
  const list = async <T>(type: ResourceType): Promise<T[]> =>
    (await rest.request<{ items?: T[] }>('GET', resourcePath(type, namespace))).items ?? [];
  const [echos, jobs, scheduledEchos, cronJobs] = await Promise.all([
    list<Echo>(ECHOS),
    list<V1Job>(JOBS),
    list<ScheduledEcho>(SCHEDULED_ECHOS),
    list<V1CronJob>(CRONJOBS),
  ]);
  return { echos, jobs, scheduledEchos, cronJobs };
}
