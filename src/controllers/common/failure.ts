/**
 * Persistent failures must be visible on the object, not only in logs: a failed reconcile sets
 * Reconciled=False with the error before the error goes back to the queue for a retry.
 */
import type { Condition } from '../../api/schema.js';
import { describeError, isConflict, isForbidden } from '../../kube/errors.js';
import type { ResourceType } from '../../kube/resources.js';
import type { Logger } from '../../observability/logger.js';
import { setConditions } from './conditions.js';
import type { ApiWriter, EventSink } from './ports.js';
import { writeStatus } from './status.js';

export function failureReason(err: unknown): string {
  if (isForbidden(err)) return 'Forbidden';
  return (err as { reason?: string })?.reason && /^[A-Za-z]+$/.test((err as { reason: string }).reason) ? (err as { reason: string }).reason : 'ReconcileError';
}

/**
 * Sets the failure condition and records a Warning Event (the recorder's spam filter bounds how
 * many a hot loop can produce). Best effort: if even this write fails, the retry tries again.
 */
export async function reportFailure<S extends { conditions?: Condition[] }>(
  api: ApiWriter,
  events: EventSink,
  type: ResourceType,
  obj: { apiVersion?: string; kind?: string; metadata: { name?: string; namespace?: string; generation?: number; uid?: string; resourceVersion?: string }; status?: S },
  conditionType: string,
  err: unknown,
  now: () => Date,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  // A conflict only means our copy was stale: the retry recomputes from the newer one.
  if (isConflict(err)) return;
  events.recordEvent({ ...obj, apiVersion: obj.apiVersion ?? `${type.group}/${type.version}`, kind: obj.kind ?? type.kind }, 'Warning', 'ReconcileFailed', describeError(err).slice(0, 1024));
  const current = obj.status ?? ({} as S);
  const failed = setConditions(current.conditions?.filter((c) => c.type === conditionType), [
    { type: conditionType, status: 'False', reason: failureReason(err), message: describeError(err).slice(0, 1024) },
  ], obj.metadata.generation, now)[0]!;
  const conditions = [...(current.conditions ?? []).filter((c) => c.type !== conditionType), failed];
  try {
    await writeStatus(api, type, obj, current, { ...current, conditions }, signal);
  } catch (writeErr) {
    log.debug('could not record the failure in status', { error: describeError(writeErr) });
  }
}
