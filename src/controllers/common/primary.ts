/**
 * The frame every reconciler of a custom resource shares: read the object from the cache (gone,
 * or being deleted: nothing to do, the garbage collector removes what it owns); run one pass on it;
 * on failure, report it (the failure condition and a Warning Event, see failure.ts) and rethrow,
 * so the work queue backs off. Every status write is remembered, so the next pass never acts on
 * an older cached copy (read-your-writes).
 */
import type { ResourceType } from '../../kube/resources.js';
import { withTypeMeta } from '../../kube/resources.js';
import type { Reconciler, ReconcileContext, ReconcileOutcome } from '../../runtime/controller/reconciler.js';
import type { EventRecorder } from '../../runtime/events.js';
import type { Condition, ObjectMeta } from '../../api/schema.js';
import { reconcileFailed, reportFailure } from './failure.js';
import type { ApiWriter, ObjectCache } from './ports.js';

export interface PrimaryFrame<T> {
  type: ResourceType;
  cache: ObjectCache<T>;
  api: ApiWriter;
  events: EventRecorder;
  /** The condition a failed pass sets to False. */
  failureCondition: string;
  now?: () => Date;
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
      const { api, events, type, failureCondition } = this.frame;
      return reconcileFailed(err, ctx, () =>
        reportFailure(api, events, type, latest.object, failureCondition, err, this.now, ctx.log, ctx.signal, this.wrote),
      );
    }
    return undefined;
  }

  /** One level-based pass over `latest.object`; throws to fail (and be retried with backoff). */
  protected abstract pass(latest: Latest<T>, ctx: ReconcileContext): Promise<void>;
}
