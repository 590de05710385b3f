/**
 * The Echo controller: For(Echo).Owns(Job). An Echo wakes it when created, deleted, or changed in
 * spec (generation) or deletion, not by status writes (its own included). Echos are cached without their annotations
 * (primaryForCache); only Jobs we labelled are cached, without their pod template (jobForCache);
 * the reconciler creates a run's Job and deletes a previous run's.
 */
import { ECHOS } from '../../api/echo.js';
import { controllerFor, generationChangedOrDeleted, JOBS } from '../../runtime/index.js';
import { primaryForCache } from '../common/cache.js';
import { MANAGED_SELECTOR } from '../common/labels.js';
import { jobForCache } from './cache.js';
import { EchoReconciler } from './reconciler.js';

/** What the Echo controller is given from the operator's settings. */
export interface EchoContext {
  /** The image of the pods that print (JOB_IMAGE). */
  jobImage: string;
}

export const echoController = controllerFor(ECHOS, { transform: primaryForCache })
  .withEventFilter(generationChangedOrDeleted)
  .owns(JOBS, { labelSelector: MANAGED_SELECTOR, transform: jobForCache, writes: ['create', 'delete'] })
  .complete(
    ({ caches, client, events }, context: EchoContext) =>
      new EchoReconciler({ echos: caches.primary, jobs: caches.owned(JOBS), client, events, jobImage: context.jobImage }),
  );
