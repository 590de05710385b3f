/**
 * Which failures stall an object (kstatus' Stalled, controller-runtime's TerminalError), and the
 * status that says so. The one place the classification lives: stallOf().
 *
 * Terminal (retrying the same request gets the same answer; only a change can cure it):
 *  - 422 Invalid from the API's own validation of what we wrote (a CronJob schedule out of range,
 *    an image reference it rejects): the request is a pure function of the object's spec and the
 *    operator's settings, so it fails the same way until the spec changes (a new generation,
 *    which the primary's watch delivers) or the operator is reconfigured (a restart, which
 *    reconciles every object again). Told apart from an admission policy's refusal, which is
 *    also 422 Invalid but names no field: a policy can change at any time without a change of
 *    ours, as RBAC can, so that is retried with backoff.
 *  - 400 BadRequest from the server (its Status says reason BadRequest: it could not decode or
 *    accept the request). Not a 400 from a proxy (no Status) nor an admission webhook's denial
 *    (a webhook sets its own reason, or none).
 *  - A name taken by an object we do not control (NameTakenError). Our watch of that kind sees
 *    only objects we labelled, so its removal wakes nothing: such a stall is looked at again
 *    every STALLED_RECHECK_MS (see there).
 * Not terminal: 403 (RBAC or a quota, fixed without touching the object), 404, 409, 429, 5xx,
 * transport errors (code 0): they go back to the queue with backoff (failure.ts).
 */
import type { Condition } from '../../kube/object.js';
import { ApiError } from '../../kube/errors.js';
import { READY_CONDITION, RECONCILING_CONDITION, STALLED_CONDITION, findCondition, setConditions } from './conditions.js';

/**
 * How often an object stalled by a foreign object is looked at again: one or two requests per
 * period that write nothing while the name is still taken. Five minutes, as a user removing
 * the object that blocks it expects a recovery within minutes, and a thousand such objects cost
 * ~3 requests a second. A resync (RESYNC_PERIOD_SECONDS) re-checks every object anyway.
 */
export const STALLED_RECHECK_MS = 5 * 60_000;

/** A same-named object we did not make holds the name of the one we need. */
export class NameTakenError extends Error {
  override readonly name = 'NameTakenError';
}

export interface Stall {
  /** The condition reason: the server's (Invalid, BadRequest) or NameTaken. */
  reason: string;
  /** The server's own message, or ours for a taken name. */
  message: string;
  /** What blocks the object is not watched: look again after STALLED_RECHECK_MS. */
  unwatched: boolean;
}

const MAX_MESSAGE = 1024;

/** The stall err means, or undefined when err is worth retrying as it is. */
export function stallOf(err: unknown): Stall | undefined {
  if (err instanceof NameTakenError) return { reason: 'NameTaken', message: err.message.slice(0, MAX_MESSAGE), unwatched: true };
  if (!(err instanceof ApiError) || err.status?.kind !== 'Status') return undefined;
  const message = (err.status.message ?? err.message).slice(0, MAX_MESSAGE);
  const namesField = err.status.details?.causes?.some((c) => c.field) ?? false;
  if (err.code === 422 && namesField) return { reason: 'Invalid', message, unwatched: false };
  if (err.code === 400 && err.reason === 'BadRequest') return { reason: 'BadRequest', message, unwatched: false };
  return undefined;
}

/**
 * The conditions of a stalled object: Ready=False and Stalled=True with the stall's reason and
 * message, Reconciling gone, and `failureCondition` (when not Ready itself) False likewise;
 * every other condition kept, in place. Applied to its own result it gives the same list, so a
 * pass that finds the same stall writes nothing.
 */
export function stalledConditions(
  previous: Condition[] | undefined,
  failureCondition: string,
  stall: Stall,
  generation: number | undefined,
  now: () => Date,
): Condition[] {
  const summary = [READY_CONDITION, RECONCILING_CONDITION, STALLED_CONDITION, failureCondition];
  const kept = (previous ?? []).filter((c) => !summary.includes(c.type));
  const types = failureCondition === READY_CONDITION ? [READY_CONDITION] : [READY_CONDITION, failureCondition];
  const failed = setConditions(
    previous,
    [
      { type: READY_CONDITION, status: 'False', reason: stall.reason, message: stall.message },
      { type: STALLED_CONDITION, status: 'True', reason: stall.reason, message: stall.message },
      ...types.slice(1).map((type) => ({ type, status: 'False' as const, reason: stall.reason, message: stall.message })),
    ],
    generation,
    now,
  );
  return [...kept, ...failed];
}

/** The status of a stalled object: its conditions as above, the generation it looked at observed. */
export function stalledStatus<S extends { observedGeneration?: number; conditions?: Condition[] }>(
  current: S | undefined,
  failureCondition: string,
  stall: Stall,
  generation: number | undefined,
  now: () => Date,
): S {
  return {
    ...(current ?? ({} as S)),
    observedGeneration: generation,
    conditions: stalledConditions(current?.conditions, failureCondition, stall, generation, now),
  };
}

/** The Ready and Stalled conditions a stall recorded for this generation, if it is stalled at it. */
export function stallAt(conditions: Condition[] | undefined, generation: number | undefined): Condition[] | undefined {
  const stalled = findCondition(conditions, STALLED_CONDITION);
  const ready = findCondition(conditions, READY_CONDITION);
  if (stalled?.status !== 'True' || stalled.observedGeneration !== generation || !ready) return undefined;
  return [ready, stalled];
}
