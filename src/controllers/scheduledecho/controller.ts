/**
 * The ScheduledEcho controller: For(ScheduledEcho).Owns(CronJob). ScheduledEchos are cached
 * without their annotations (primaryForCache); only CronJobs we labelled are cached; the
 * reconciler creates, repairs and deletes them. Every write but DELETE is a PATCH (server-side
 * apply, whose first write needs `create` too, and a merge patch of managedFields;
 * common/apply.ts): no `update`.
 */
import { SCHEDULED_ECHOS } from '../../api/scheduledecho.js';
import { CRONJOBS } from '../../kube/resources.js';
import { controllerFor } from '../../runtime/controller/builder.js';
import { primaryForCache } from '../common/cache.js';
import { MANAGED_SELECTOR } from '../common/labels.js';
import type { ReconcilerDeps } from '../common/ports.js';
import { ScheduledEchoReconciler } from './reconciler.js';

export const scheduledEchoController = controllerFor(SCHEDULED_ECHOS, { transform: primaryForCache })
  .owns(CRONJOBS, { labelSelector: MANAGED_SELECTOR, writes: ['create', 'patch', 'delete'] })
  .complete(
    (caches, deps: ReconcilerDeps) =>
      new ScheduledEchoReconciler({ scheduledEchos: caches.primary, cronJobs: caches.owned(CRONJOBS), ...deps }),
  );
