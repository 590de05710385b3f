/**
 * Standard status conditions (metav1.Condition). lastTransitionTime changes only when status
 * changes, so recomputing the same conditions is a no-op and writes nothing.
 */
import type { Condition } from '../../kube/object.js';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

export function setConditions(
  previous: Condition[] | undefined,
  next: ConditionInput[],
  observedGeneration: number | undefined,
  now: () => Date,
): Condition[] {
  return next.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    const lastTransitionTime =
      old && old.status === c.status
        ? old.lastTransitionTime
        : now()
            .toISOString()
            .replace(/\.\d{3}Z$/, 'Z');
    return { type: c.type, status: c.status, observedGeneration, lastTransitionTime, reason: c.reason, message: c.message };
  });
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * The summary conditions GitOps tools read (kstatus, which Flux's health checks and `kubectl
 * wait`-style tools use, and the Argo CD health check in docs/gitops.md):
 * - Ready: True once the object is what its spec asks for; False otherwise, with the reason.
 * - Reconciling: True only while the operator is making progress on its own (kstatus: InProgress).
 * - Stalled: True only when no progress is possible without a change of spec (kstatus: Failed,
 *   which makes a Flux health check fail at once rather than at its timeout).
 * Reconciling and Stalled are "abnormal-true" conditions: absent when they do not hold, so a
 * Ready object carries Ready alone. Together with status.observedGeneration (kstatus reads any
 * generation not yet observed as InProgress) this is everything kstatus needs.
 */
export const READY_CONDITION = 'Ready';
export const RECONCILING_CONDITION = 'Reconciling';
export const STALLED_CONDITION = 'Stalled';

export type Readiness = 'Ready' | 'Progressing' | 'Stalled';

export function readinessConditions(readiness: Readiness, reason: string, message: string): ConditionInput[] {
  const ready: ConditionInput = { type: READY_CONDITION, status: readiness === 'Ready' ? 'True' : 'False', reason, message };
  if (readiness === 'Progressing') return [ready, { type: RECONCILING_CONDITION, status: 'True', reason, message }];
  if (readiness === 'Stalled') return [ready, { type: STALLED_CONDITION, status: 'True', reason, message }];
  return [ready];
}
