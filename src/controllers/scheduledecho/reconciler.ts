/**
 * ScheduledEcho -> one CronJob in its namespace, kept equal to what the ScheduledEcho says with
 * server-side apply; the CronJob's schedule times -> the ScheduledEcho's status.
 *
 * Guarantees: the CronJob is created by apply and every field the operator sets (desired.ts) is
 * owned by its field manager from that first write (runtime/reconcile/apply.ts), so a field edited or removed
 * by hand is restored and a field it stops setting is pruned; list entries another manager added
 * (a container) are removed by replacing the spec, which an apply cannot do; a deleted CronJob is re-created; a
 * same-named CronJob this ScheduledEcho does not control is never written to, only reported,
 * unless an earlier ScheduledEcho of its name controls it (deleted: the CronJob is deleted, as the
 * garbage collector would, and the ScheduledEcho's own made);
 * nothing is written when the cached CronJob already holds every field we set (a restart writes
 * nothing).
 */
import type { V1CronJob } from '@kubernetes/client-node';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../api/scheduledecho.js';
import {
  applyTo,
  type Client,
  containsDesired,
  controllerOf,
  createByApply,
  CRONJOBS,
  type EventRecorder,
  hasExtraListItems,
  isConflict,
  isNotFound,
  keyOf,
  type Latest,
  NameTakenError,
  type ObjectCache,
  PrimaryReconciler,
  READY_CONDITION,
  type ReconcileContext,
  writeStatus,
} from '../../runtime/index.js';
import { FIELD_MANAGER } from '../common/labels.js';
import { controlledBy, isControlledBy, isControlledByPredecessor } from '../common/owner.js';
import { desiredCronJob } from './desired.js';
import { scheduledEchoStatus } from './status.js';

export interface ScheduledEchoReconcilerDeps {
  scheduledEchos: ObjectCache<ScheduledEcho>;
  cronJobs: ObjectCache<V1CronJob>;
  client: Client;
  events: EventRecorder;
  jobImage: string;
  now?: () => Date;
  /** See PrimaryFrame. */
  stalledRecheckMs?: number;
}

export class ScheduledEchoReconciler extends PrimaryReconciler<ScheduledEcho> {
  constructor(private readonly deps: ScheduledEchoReconcilerDeps) {
    super({
      type: SCHEDULED_ECHOS,
      cache: deps.scheduledEchos,
      client: deps.client,
      events: deps.events,
      failureCondition: READY_CONDITION,
      now: deps.now,
      stalledRecheckMs: deps.stalledRecheckMs,
    });
  }

  protected async pass(latest: Latest<ScheduledEcho>, ctx: ReconcileContext): Promise<void> {
    const se = latest.object;
    const { client, events } = this.deps;
    const desired = desiredCronJob(se, this.deps.jobImage);
    const name = desired.metadata!.name!;
    const ns = se.metadata.namespace!;
    const owned = controlledBy(this.deps.cronJobs, se, SCHEDULED_ECHOS);

    for (const stale of owned.filter((c) => c.metadata?.name !== name)) {
      try {
        await client.delete(
          CRONJOBS,
          { namespace: ns, name: stale.metadata?.name ?? '' },
          {
            propagationPolicy: 'Background',
            preconditions: { uid: stale.metadata?.uid },
            signal: ctx.signal,
          },
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }

    // The cache holds only CronJobs labelled as ours: one it lacks is created, or, when the name is
    // taken, read from the server (ours if the cache is behind or our labels were removed by hand).
    let cronJob = owned.find((c) => c.metadata?.name === name) ?? this.deps.cronJobs.get(`${ns}/${name}`);
    let change: 'created' | 'changed' | undefined;
    if (!cronJob) {
      const result = await this.createCronJob(se, desired, ctx);
      cronJob = result.cronJob;
      if (result.created) change = 'created';
    }
    if (!isControlledBy(cronJob, se, SCHEDULED_ECHOS) && (await this.removedPredecessors(se, cronJob, ctx))) {
      const result = await this.createCronJob(se, desired, ctx);
      cronJob = result.cronJob;
      if (result.created) change = 'created';
    }
    if (!isControlledBy(cronJob, se, SCHEDULED_ECHOS)) {
      throw new NameTakenError(`CronJob ${ns}/${name} already exists and is not controlled by this ScheduledEcho; delete or rename it`);
    }
    // Owner references are compared by the check above (others may add theirs beside ours).
    const { ownerReferences: _ours, ...desiredMeta } = desired.metadata!;
    if (!containsDesired({ ...desired, metadata: desiredMeta }, cronJob)) {
      cronJob = hasExtraListItems(desired.spec, cronJob.spec)
        ? await this.replaceSpec(desired, cronJob, ctx)
        : await applyTo(client, CRONJOBS, desired, { uid: cronJob.metadata!.uid!, fieldManager: FIELD_MANAGER, signal: ctx.signal });
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

    await writeStatus({
      client,
      type: SCHEDULED_ECHOS,
      object: se,
      current: se.status,
      desired: scheduledEchoStatus(se, name, cronJob, this.now),
      signal: ctx.signal,
      wrote: this.wrote,
    });
  }

  /**
   * A JSON merge patch of the whole spec (and our labels): it replaces the lists that an apply
   * would merge into, so entries another field manager owns (a container added by hand, or by the
   * Go echoperator before a switch) go. Conditional on the resourceVersion read, so a cache that is
   * behind gets a 409 and a retry rather than overwriting a newer CronJob.
   */
  private replaceSpec(desired: V1CronJob, live: V1CronJob, ctx: ReconcileContext): Promise<V1CronJob> {
    return this.deps.client.patch(
      CRONJOBS,
      keyOf(live),
      { metadata: { labels: desired.metadata?.labels }, spec: desired.spec },
      { resourceVersion: live.metadata?.resourceVersion, signal: ctx.signal },
    );
  }

  /**
   * Deletes the CronJob of an earlier ScheduledEcho of this name (deleted, then this one created
   * under the name), which the garbage collector would remove only in its own time (tens of
   * seconds): a re-created ScheduledEcho gets its CronJob at once instead of a NameTaken stall.
   * Only once the server confirms this ScheduledEcho holds the name (a cache behind a delete and
   * re-create would otherwise take the newer one's CronJob for a predecessor's), and only that
   * CronJob (a uid precondition). True when it is gone.
   */
  private async removedPredecessors(se: ScheduledEcho, cronJob: V1CronJob, ctx: ReconcileContext): Promise<boolean> {
    if (!isControlledByPredecessor(cronJob, se, SCHEDULED_ECHOS)) return false;
    const { client } = this.deps;
    const live = await client.get(SCHEDULED_ECHOS, keyOf(se), { signal: ctx.signal }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (live?.metadata.uid !== se.metadata.uid) return false;
    try {
      await client.delete(CRONJOBS, keyOf(cronJob), {
        propagationPolicy: 'Background',
        preconditions: { uid: cronJob.metadata?.uid },
        signal: ctx.signal,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    ctx.log.info('deleted the cronjob of a deleted predecessor', { cronJob: cronJob.metadata?.name, owner: controllerOf(cronJob)?.uid });
    return true;
  }

  /** Creates by apply; when the name is taken, the existing one is returned for the caller's ownership check. */
  private async createCronJob(
    se: ScheduledEcho,
    desired: V1CronJob,
    ctx: ReconcileContext,
  ): Promise<{ cronJob: V1CronJob; created: boolean }> {
    try {
      return {
        cronJob: await createByApply(this.deps.client, CRONJOBS, desired, { fieldManager: FIELD_MANAGER, signal: ctx.signal }),
        created: true,
      };
    } catch (err) {
      if (!isConflict(err)) throw err;
      const key = { namespace: se.metadata.namespace, name: desired.metadata!.name! };
      const cronJob = await this.deps.client.get(CRONJOBS, key, { signal: ctx.signal }).catch((getErr: unknown) => {
        // Deleted meanwhile: the conflict stands, and the next try creates it.
        throw isNotFound(getErr) ? err : getErr;
      });
      return { cronJob, created: false };
    }
  }
}
