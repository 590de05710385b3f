/**
 * Types carry their kind: a ResourceType<T> names the objects it serves, and the builder infers
 * each cache's object type from the types declared. The `@ts-expect-error` lines are the test
 * (`npm run typecheck` fails if any of them compiles); the assertions make it a test file too.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap, V1CronJob, V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../src/api/echo.js';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../src/api/scheduledecho.js';
import { jobForCache } from '../../src/controllers/echo/cache.js';
import { CONFIGMAPS, CRONJOBS, JOBS, type ResourceType } from '../../src/kube/resources.js';
import type { ObjectCache } from '../../src/runtime/cache/index.js';
import { controllerFor, type ControllerCaches } from '../../src/runtime/controller/index.js';

/** Compiles only when A and B are the same type. */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
const same = <A, B>(proof: Equal<A, B>): boolean => proof;

const done = { reconcile: () => Promise.resolve(undefined) };

describe('typed resource types', () => {
  it('infers the primary and owned object types from the declared types', () => {
    let seen: ControllerCaches<Echo> | undefined;
    const declaration = controllerFor(ECHOS)
      .owns(JOBS, { transform: jobForCache, writes: ['create'] })
      .complete(({ caches }) => {
        seen = caches;
        assert.ok(same<typeof caches.primary, ObjectCache<Echo>>(true));
        assert.ok(same<ReturnType<typeof caches.owned<V1Job>>, ObjectCache<V1Job>>(true));
        const jobs: ObjectCache<V1Job> = caches.owned(JOBS);
        // @ts-expect-error the Jobs cache holds Jobs, not CronJobs
        const cronJobs: ObjectCache<V1CronJob> = caches.owned(JOBS);
        void [jobs, cronJobs];
        return done;
      });
    assert.equal(declaration.primary, ECHOS);
    assert.equal(seen, undefined, 'the factory runs when a manager builds the controller');
  });

  it('refuses a type paired with another kind of object', () => {
    const build = () => controllerFor(SCHEDULED_ECHOS);
    // @ts-expect-error a CronJob type owned as ConfigMaps
    build().owns<V1ConfigMap>(CRONJOBS, { writes: [] });
    // @ts-expect-error a ConfigMap type owned as CronJobs
    build().owns<V1CronJob>(CONFIGMAPS, { writes: [] });
    // @ts-expect-error a Job transform on the CronJobs cache
    build().owns(CRONJOBS, { transform: jobForCache, writes: [] });
    // @ts-expect-error an Echo transform on the ScheduledEchos cache
    controllerFor(SCHEDULED_ECHOS, { transform: (e: Echo) => e });
    // @ts-expect-error Echo and ScheduledEcho have the same fields, not the same kind
    const wrong: ResourceType<ScheduledEcho> = ECHOS;
    const widened: ResourceType = JOBS;
    assert.deepEqual([wrong.kind, widened.kind], ['Echo', 'Job']);
  });
});
