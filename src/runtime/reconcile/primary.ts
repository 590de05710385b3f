/**
 * The frame every reconciler of a custom resource shares: read the object from the cache (gone,
 * or being deleted: nothing to do, the garbage collector removes what it owns); run one pass on it;
 * on failure, report it (the failure condition and a Warning Event, see failure.ts) and rethrow,
 * so the work queue backs off. Every status write is remembered, so the next pass never acts on
 * an older cached copy (read-your-writes).
 *
 * A failure that only a change can cure (stalled.ts decides which) stalls the object instead:
 * Stalled=True and Ready=False with the reason and the server's message, status.observedGeneration
 * the generation looked at, one Warning Event, and a TerminalError to the controller, so no retry
 * until the object changes (a new generation: the primary's watch) or, for a cause no watch sees,
 * until the recheck. A pass that finds the same stall again computes the same status: it writes
 * nothing and records no Event. A later pass that succeeds computes its status afresh, without
 * Stalled.
 */
import { describeError } from '../../kube/errors.js';
import type { Condition, KubeObject, ObjectMeta } from '../../kube/object.js';
import { withTypeMeta, type ResourceType } from '../../kube/resources.js';
import type { Reconciler, ReconcileContext, ReconcileOutcome } from '../controller/reconciler.js';
import type { EventRecorder } from '../events.js';
import { TerminalError } from '../controller/terminal.js';
import { reconcileFailed, reportFailure } from './failure.js';
import type { ObjectCache } from '../cache/objectcache.js';
import type { Client } from '../client/client.js';
import { STALLED_RECHECK_MS, stallOf, stalledStatus, type Stall } from './stalled.js';
import { writeStatus } from './status.js';

export interface PrimaryFrame<T extends KubeObject> {
  type: ResourceType<T>;
  cache: ObjectCache<T>;
  client: Client;
  events: EventRecorder;
  /** The condition a failed pass sets to False. */
  failureCondition: string;
  now?: () => Date;
  /** How long a stall whose cause is not watched waits for its recheck; default STALLED_RECHECK_MS. */
  stalledRecheckMs?: number;
}

/** The object a pass works on: as the server last had it, replaced by each status write of the pass. */
export interface Latest<T> {
  object: T;
}

export abstract class PrimaryReconciler<
  T extends { apiVersion?: string; kind?: string; metadata: ObjectMeta; status?: { conditions?: Condition[] } },
> implements Reconciler {
  protected readonly now: () => Date;
  protected readonly wrote: (obj: T) => void;

  constructor(private readonly frame: PrimaryFrame<T>) {
    this.now = frame.now ?? (() => new Date());
    this.wrote = (obj) => frame.cache.wrote?.(obj);
  }

  async reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileOutcome> {
    const cached = this.frame.cache.get(key);
    if (!cached || cached.metadata.deletionTimestamp) return undefined;
    const latest: Latest<T> = { object: withTypeMeta(this.frame.type, cached) };
    try {
      await this.pass(latest, ctx);
    } catch (err) {
      const { client, events, type, failureCondition } = this.frame;
      const stall = ctx.signal.aborted ? undefined : stallOf(err);
      if (stall) return this.stalled(latest.object, err, stall, ctx);
      return reconcileFailed(err, ctx, () =>
        reportFailure({
          client,
          events,
          type,
          object: latest.object,
          conditionType: failureCondition,
          error: err,
          now: this.now,
          log: ctx.log,
          signal: ctx.signal,
          wrote: this.wrote,
        }),
      );
    }
    return undefined;
  }

  /**
   * Records the stall and throws the TerminalError. The Event goes with the status write, i.e.
   * only when the stall is new to the object. When the write fails (a conflict: the cache was
   * behind), that error goes back to the queue instead, with backoff: the next pass meets the same
   * refusal and records it then. A status the server refuses for good too (stalled.ts) is left
   * as it is: nothing would cure it by retrying.
   */
  private async stalled(obj: T, err: unknown, stall: Stall, ctx: ReconcileContext): Promise<never> {
    const { client, events, type, failureCondition } = this.frame;
    let written: T | undefined;
    try {
      written = await writeStatus({
        client,
        type,
        object: obj,
        current: obj.status,
        desired: stalledStatus(obj.status, failureCondition, stall, obj.metadata.generation, this.now),
        signal: ctx.signal,
        wrote: this.wrote,
      });
    } catch (writeErr) {
      if (!stallOf(writeErr)) throw writeErr;
      ctx.log.debug('could not record the stall in status', { error: describeError(writeErr) });
    }
    if (written) events.recordEvent(obj, 'Warning', stall.reason, stall.message);
    throw new TerminalError(err, stall.unwatched ? { recheckAfterMs: this.frame.stalledRecheckMs ?? STALLED_RECHECK_MS } : {});
  }

  /** One level-based pass over `latest.object`; throws to fail (and be retried with backoff). */
  protected abstract pass(latest: Latest<T>, ctx: ReconcileContext): Promise<void>;
}
