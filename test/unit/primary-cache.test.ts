/**
 * What the Echo and ScheduledEcho caches keep (primaryForCache): no annotations, no managedFields,
 * and everything the reconcilers, the Event recorder and owner references read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Echo } from '../../src/api/echo.js';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { primaryForCache } from '../../src/controllers/common/cache.js';
import { ownedObjectMeta } from '../../src/controllers/common/owner.js';
import { desiredJob } from '../../src/controllers/echo/desired.js';
import { desiredCronJob } from '../../src/controllers/scheduledecho/desired.js';
import { ECHOS } from '../../src/api/echo.js';
import { echoController } from '../../src/controllers/echo/controller.js';
import { scheduledEchoController } from '../../src/controllers/scheduledecho/controller.js';

const meta = {
  name: 'hello',
  namespace: 'ns',
  uid: 'u1',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: new Date('2026-01-01T00:00:00Z'),
  deletionTimestamp: new Date('2026-01-02T00:00:00Z'),
  finalizers: ['example.test/keep'],
  labels: { team: 'a' },
  annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', huge: 'x'.repeat(200 * 1024) },
  managedFields: [{ manager: 'kubectl', operation: 'Update' }],
};

function echo(): Echo {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'Echo',
    metadata: structuredClone(meta),
    spec: { message: 'Hola' },
    status: { phase: 'Running', jobName: 'hello-x', observedGeneration: 2 },
  };
}

describe('primaryForCache', () => {
  it('drops annotations and managedFields, keeps every other field', () => {
    const cached = primaryForCache(echo());
    const { annotations: _a, managedFields: _m, ...kept } = structuredClone(meta);
    assert.deepEqual(cached.metadata, kept);
    const whole = echo();
    assert.deepEqual({ ...cached, metadata: undefined }, { ...whole, metadata: undefined }, 'apiVersion, kind, spec, status unchanged');
  });

  it('changes nothing the operator writes from the object: desired Job and CronJob, owner references', () => {
    assert.deepEqual(desiredJob(primaryForCache(echo()), 'busybox'), desiredJob(echo(), 'busybox'));
    const se = (): ScheduledEcho => ({ ...echo(), kind: 'ScheduledEcho', spec: { message: 'Hola', schedule: '* * * * *' } });
    assert.deepEqual(desiredCronJob(primaryForCache(se()), 'busybox'), desiredCronJob(se(), 'busybox'));
    assert.deepEqual(ownedObjectMeta(primaryForCache(echo()), ECHOS, 'j', {}), ownedObjectMeta(echo(), ECHOS, 'j', {}));
  });

  it('leaves the nested objects of its input alone (it may run on a shallow copy)', () => {
    const original = echo();
    const originalMeta = original.metadata;
    primaryForCache({ ...original });
    assert.equal(original.metadata, originalMeta);
    assert.equal(Object.keys(originalMeta.annotations!).length, 2);
  });

  it('is the declared cache transform of both primaries', () => {
    assert.equal(echoController.primaryTransform, primaryForCache);
    assert.equal(scheduledEchoController.primaryTransform, primaryForCache);
  });
});
