/**
 * The ScheduledEcho controller: For(ScheduledEcho).Owns(CronJob). A ScheduledEcho wakes it when
 * created, deleted, or changed in spec or deletion, not by status writes. ScheduledEchos are cached
 * without their annotations (primaryForCache); only CronJobs we labelled are cached; the
 * reconciler creates, repairs and deletes them. Every write but DELETE is a PATCH (server-side
 * apply, whose first write needs `create` too, and a merge patch of managedFields;
 * runtime/reconcile/apply.ts): no `update`.
 */
import { SCHEDULED_ECHOS } from '../../api/scheduledecho.js';
import { controllerFor, CRONJOBS, generationChangedOrDeleted } from '../../runtime/index.js';
import { primaryForCache } from '../common/cache.js';
import { MANAGED_SELECTOR } from '../common/labels.js';
import { ScheduledEchoReconciler } from './reconciler.js';

/** What the ScheduledEcho controller is given from the operator's settings. */
export interface ScheduledEchoContext {
  /** The image of the pods its CronJobs run (JOB_IMAGE). */
  jobImage: string;
}

export const scheduledEchoController = controllerFor(SCHEDULED_ECHOS, { transform: primaryForCache })
  .withEventFilter(generationChangedOrDeleted)
  .owns(CRONJOBS, { labelSelector: MANAGED_SELECTOR, writes: ['create', 'patch', 'delete'] })
  .complete(
    ({ caches, client, events }, context: ScheduledEchoContext) =>
      new ScheduledEchoReconciler({
        scheduledEchos: caches.primary,
        cronJobs: caches.owned(CRONJOBS),
        client,
        events,
        jobImage: context.jobImage,
      }),
  );
