/**
 * Persistent failures must be visible on the object, not only in logs: a failed reconcile sets
 * Reconciled=False with the error before the error goes back to the queue for a retry.
 */
import type { Condition } from '../../api/schema.js';
import { describeError, isConflict, isForbidden } from '../../kube/errors.js';
import type { ResourceType } from '../../kube/resources.js';
import type { Logger } from '../../observability/logger.js';
import type { ReconcileContext } from '../../runtime/controller/reconciler.js';
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
function requeueOnConflict(err: unknown, log: Logger): { requeueAfterMs: number } | undefined {
  if (!isConflict(err)) return undefined;
  log.debug('our copy was stale (409 Conflict); looking again', { error: describeError(err) });
  return { requeueAfterMs: CONFLICT_REQUEUE_MS };
}

/**
 * What a reconciler does with an error from its pass: rethrows it when the pass was aborted
 * (leadership lost or shutdown); looks again shortly after a 409 (requeueOnConflict); otherwise
 * runs `report` (reportFailure) and rethrows, so the queue retries with backoff.
 */
export async function reconcileFailed(err: unknown, ctx: ReconcileContext, report: () => Promise<void>): Promise<{ requeueAfterMs: number }> {
  if (ctx.signal.aborted) throw err;
  const stale = requeueOnConflict(err, ctx.log);
  if (stale) return stale;
  await report();
  throw err;
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
