/**
 * ScheduledEcho -> one CronJob in its namespace, kept equal to what the ScheduledEcho says with
 * server-side apply; the CronJob's schedule times -> the ScheduledEcho's status.
 *
 * Guarantees: a CronJob deleted or edited by hand is restored; nothing is written when the cached
 * CronJob already holds every field we manage (a restart writes nothing).
 */
import type { V1CronJob } from '@kubernetes/client-node';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../api/scheduledecho.js';
import { isAlreadyExists, isNotFound } from '../../kube/errors.js';
import { CRONJOBS, resourcePath, withTypeMeta } from '../../kube/resources.js';
import type { Reconciler, ReconcileContext, ReconcileOutcome } from '../../runtime/controller/reconciler.js';
import { containsDesired } from '../common/compare.js';
import { READY_CONDITION } from '../common/conditions.js';
import { reconcileFailed, reportFailure } from '../common/failure.js';
import { FIELD_MANAGER } from '../common/labels.js';
import { CONTROLLER_OWNER_INDEX } from '../../runtime/cache/index.js';
import type { EventRecorder } from '../../runtime/events.js';
import type { ApiWriter, ObjectCache } from '../common/ports.js';
import { writeStatus } from '../common/status.js';
import { desiredCronJob } from './desired.js';
import { scheduledEchoStatus } from './status.js';

export interface ScheduledEchoReconcilerDeps {
  scheduledEchos: ObjectCache<ScheduledEcho>;
  cronJobs: ObjectCache<V1CronJob>;
  api: ApiWriter;
  events: EventRecorder;
  jobImage: string;
  now?: () => Date;
}

export class ScheduledEchoReconciler implements Reconciler {
  private readonly now: () => Date;
  /** Every status write is remembered, so the next pass never acts on an older cached copy. */
  private readonly wrote: (se: ScheduledEcho) => void;

  constructor(private readonly deps: ScheduledEchoReconcilerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.wrote = (se) => deps.scheduledEchos.wrote?.(se);
  }

  async reconcile(key: string, ctx: ReconcileContext): Promise<ReconcileOutcome> {
    const se = this.deps.scheduledEchos.get(key);
    if (!se || se.metadata.deletionTimestamp) return undefined;
    try {
      await this.reconcileScheduledEcho(withTypeMeta(SCHEDULED_ECHOS, se), ctx);
    } catch (err) {
      return reconcileFailed(err, ctx, () =>
        reportFailure(
          this.deps.api,
          this.deps.events,
          SCHEDULED_ECHOS,
          se,
          READY_CONDITION,
          err,
          this.now,
          ctx.log,
          ctx.signal,
          this.wrote,
        ),
      );
    }
    return undefined;
  }

  private async reconcileScheduledEcho(se: ScheduledEcho, ctx: ReconcileContext): Promise<void> {
    const { api, events } = this.deps;
    const desired = desiredCronJob(se, this.deps.jobImage);
    const name = desired.metadata!.name!;
    const ns = se.metadata.namespace!;
    const owned = this.deps.cronJobs.byIndex(CONTROLLER_OWNER_INDEX, se.metadata.uid!);

    for (const stale of owned.filter((c) => c.metadata?.name !== name)) {
      try {
        await api.request('DELETE', resourcePath(CRONJOBS, ns, stale.metadata?.name), {
          body: { propagationPolicy: 'Background', preconditions: { uid: stale.metadata?.uid } },
          signal: ctx.signal,
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }

    // The cache holds only CronJobs labelled as ours. One it lacks is created, not applied: a
    // forced apply would take over a same-named CronJob of someone else's.
    let cronJob = owned.find((c) => c.metadata?.name === name) ?? this.deps.cronJobs.get(`${ns}/${name}`);
    let change: 'created' | 'changed' | undefined;
    if (!cronJob) {
      const result = await this.createCronJob(se, desired, ctx);
      cronJob = result.cronJob;
      if (result.created) change = 'created';
    }
    if (cronJob.metadata?.ownerReferences?.find((r) => r.controller)?.uid !== se.metadata.uid) {
      throw new Error(`CronJob ${ns}/${name} already exists and is not controlled by this ScheduledEcho; delete or rename it`);
    }
    // Owner references are compared by the check above (others may add theirs beside ours).
    const { ownerReferences: _ours, ...desiredMeta } = desired.metadata!;
    if (!containsDesired({ ...desired, metadata: desiredMeta }, cronJob)) {
      cronJob = await api.request<V1CronJob>('PATCH', resourcePath(CRONJOBS, ns, name), {
        query: { fieldManager: FIELD_MANAGER, force: true },
        body: desired,
        contentType: 'application/apply-patch+yaml',
        signal: ctx.signal,
      });
      change ??= 'changed';
    }
    if (change) {
      const specChanged = se.status?.observedGeneration !== se.metadata.generation;
      const [reason, message] = !se.status?.cronJobName
        ? ['CronJobCreated', `Created CronJob ${name} with schedule "${se.spec.schedule}"`]
        : specChanged && change === 'changed'
          ? ['CronJobUpdated', `Updated CronJob ${name} to the new spec`]
          : ['CronJobRestored', `Restored CronJob ${name}, which was ${change === 'created' ? 'deleted' : 'changed'} outside the operator`];
      ctx.log.info('cronjob written', { cronJob: name, reason });
      events.recordEvent(se, 'Normal', reason, message);
    }

    await writeStatus(api, SCHEDULED_ECHOS, se, se.status, scheduledEchoStatus(se, name, cronJob, this.now), ctx.signal, this.wrote);
  }

  /** POST; on AlreadyExists the existing one is returned for the caller's ownership check. */
  private async createCronJob(
    se: ScheduledEcho,
    desired: V1CronJob,
    ctx: ReconcileContext,
  ): Promise<{ cronJob: V1CronJob; created: boolean }> {
    const ns = se.metadata.namespace!;
    try {
      const cronJob = await this.deps.api.request<V1CronJob>('POST', resourcePath(CRONJOBS, ns), {
        query: { fieldManager: FIELD_MANAGER },
        body: desired,
        signal: ctx.signal,
      });
      return { cronJob, created: true };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const cronJob = await this.deps.api.request<V1CronJob>('GET', resourcePath(CRONJOBS, ns, desired.metadata!.name), {
        signal: ctx.signal,
      });
      return { cronJob, created: false };
    }
  }
}
