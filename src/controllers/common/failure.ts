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

/** How soon to look again after a conditional write found our copy stale (see requeueOnConflict). */
export const CONFLICT_REQUEUE_MS = 200;

/**
 * Status writes are conditional on the cached resourceVersion, so a 409 Conflict only means the
 * cache was behind (our own previous write, or another client's edit): not a failure. The outcome
 * looks again shortly, once the watch has brought the newer copy (a status-only change wakes no
 * one, so the key must be requeued), and the write is recomputed from it. Undefined for any other
 * error. Found by the fault tests: without this, the second reconcile of nearly every new object
 * (woken by its Job's creation before the cache saw our first status write) was counted in
 * controller_runtime_reconcile_errors_total and logged as "reconcile failed".
 */
export function requeueOnConflict(err: unknown, log: Logger): { requeueAfterMs: number } | undefined {
  if (!isConflict(err)) return undefined;
  log.debug('our copy was stale (409 Conflict); looking again', { error: describeError(err) });
  return { requeueAfterMs: CONFLICT_REQUEUE_MS };
}

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
