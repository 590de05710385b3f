/**
 * Persistent failures must be visible on the object, not only in logs: a failed reconcile sets
 * Reconciled=False with the error before the error goes back to the queue for a retry.
 */
import { describeError, isConflict, isForbidden, isTooManyRequests } from '../../kube/errors.js';
import type { Condition, KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resources.js';
import type { Logger } from '../log.js';
import type { ReconcileContext } from '../controller/reconciler.js';
import { setConditions } from './conditions.js';
import type { EventRecorder } from '../events.js';
import type { Client } from '../client/client.js';
import { writeStatus } from './status.js';

/**
 * Errors that say nothing about the object, only about our copy of it or the server's load: a
 * 409 Conflict (the cache was behind: our own last write, or another client's edit) and a 429
 * the transport already retried as told (see kube/retry.ts). Recording them in status or Events
 * would add writes to a server that is shedding load, and make the condition flap between the
 * real failure and this noise; they only go back to the rate-limited queue.
 */
function isNoise(err: unknown): boolean {
  return isConflict(err) || isTooManyRequests(err);
}

/**
 * What a reconciler does with an error from its pass: rethrows it, so the queue retries the key
 * with its per-key backoff (5 ms doubling to 1000 s), as controller-runtime does with every
 * error, a conflict included. Before that, unless the pass was aborted (leadership lost or
 * shutdown) or the error is noise (isNoise), runs `report` (reportFailure).
 *
 * A conflict is not looked at again after a fixed delay with the backoff forgotten: when the
 * watch lags and the next write is refused for good (a quota, an admission policy), that would
 * be a loop of a few requests every fixed delay that never backs off.
 */
export async function reconcileFailed(err: unknown, ctx: ReconcileContext, report: () => Promise<void>): Promise<never> {
  if (ctx.signal.aborted) throw err;
  if (isNoise(err)) ctx.log.debug('transient refusal; backing off', { error: describeError(err) });
  else await report();
  throw err;
}

export function failureReason(err: unknown): string {
  if (isForbidden(err)) return 'Forbidden';
  return (err as { reason?: string })?.reason && /^[A-Za-z]+$/.test((err as { reason: string }).reason)
    ? (err as { reason: string }).reason
    : 'ReconcileError';
}

/** The object a failure is reported on. */
export type Reported<S> = KubeObject & {
  metadata: { name?: string; namespace?: string; generation?: number; uid?: string; resourceVersion?: string };
  status?: S;
};

export interface FailureReport<T extends Reported<S>, S extends { conditions?: Condition[] }> {
  client: Client;
  events: EventRecorder;
  type: ResourceType<T>;
  object: T;
  /** The condition set to False with the error. */
  conditionType: string;
  error: unknown;
  now: () => Date;
  log: Logger;
  signal: AbortSignal;
  /** See StatusWrite. */
  wrote?: (obj: T) => void;
}

/**
 * Sets the failure condition and records a Warning Event (the recorder's spam filter bounds how
 * many a hot loop can produce). Best effort: if even this write fails, the retry tries again.
 */
export async function reportFailure<T extends Reported<S>, S extends { conditions?: Condition[] }>(r: FailureReport<T, S>): Promise<void> {
  const { object: obj, type, conditionType, error: err } = r;
  r.events.recordEvent(
    { ...obj, apiVersion: obj.apiVersion ?? `${type.group}/${type.version}`, kind: obj.kind ?? type.kind },
    'Warning',
    'ReconcileFailed',
    describeError(err).slice(0, 1024),
  );
  const current = obj.status ?? ({} as S);
  const failed = setConditions(
    current.conditions?.filter((c) => c.type === conditionType),
    [{ type: conditionType, status: 'False', reason: failureReason(err), message: describeError(err).slice(0, 1024) }],
    obj.metadata.generation,
    r.now,
  )[0]!;
  const conditions = [...(current.conditions ?? []).filter((c) => c.type !== conditionType), failed];
  try {
    await writeStatus({
      client: r.client,
      type,
      object: obj,
      current,
      desired: { ...current, conditions },
      signal: r.signal,
      wrote: r.wrote,
    });
  } catch (writeErr) {
    r.log.debug('could not record the failure in status', { error: describeError(writeErr) });
  }
}
