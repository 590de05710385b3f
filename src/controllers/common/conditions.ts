/**
 * Standard status conditions (metav1.Condition). lastTransitionTime changes only when status
 * changes, so recomputing the same conditions is a no-op and writes nothing.
 */
import type { Condition } from '../../api/schema.js';

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
