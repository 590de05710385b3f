/**
 * The contract between a controller and the code that makes one object right.
 *
 * A reconciler is level-based: given only a key, it reads the current state from the cache,
 * computes what should exist, writes the difference and reports what to do next. It never trusts
 * the event that woke it, so missed, repeated or re-ordered events cannot make it wrong.
 */
import type { Logger } from '../log.js';

export interface ReconcileContext {
  /** Bound to controller, namespace/name and reconcileID. */
  log: Logger;
  /** Aborted when the reconcile must stop at once (leadership lost, shutdown deadline passed). */
  signal: AbortSignal;
  /** Unique per reconcile; ties log lines of one pass together. */
  reconcileID: string;
}

/**
 * undefined = done (the key's backoff is forgotten); requeueAfterMs = look again later without
 * counting a failure (e.g. waiting on a Job), at `priority` (default: the priority the key was
 * handed out with; see workqueue/fair.ts); a throw = failure, retried with per-key backoff at the
 * priority it had.
 */
export type ReconcileOutcome = { requeueAfterMs: number; priority?: number } | undefined;

export interface Reconciler {
  reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileOutcome>;
}
