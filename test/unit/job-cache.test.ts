import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { jobForCache } from '../../src/controllers/echo/cache.js';
import { desiredJob } from '../../src/controllers/echo/desired.js';
import { runState } from '../../src/controllers/echo/status.js';

function serverJob(): V1Job {
  const echo = {
    apiVersion: 'mmontes.io/v1alpha1' as const,
    kind: 'Echo' as const,
    metadata: { name: 'hello', namespace: 'ns', uid: 'u1' },
    spec: { message: 'hi' },
  };
  const job = desiredJob(echo, 'busybox:1.37');
  job.metadata = { ...job.metadata, uid: 'j1', resourceVersion: '7', managedFields: [{ manager: 'echoperator' }] };
  job.spec = { ...job.spec!, suspend: false };
  job.status = { startTime: new Date('2026-01-01T00:00:00Z'), conditions: [{ type: 'Complete', status: 'True' }] };
  return job;
}

describe('jobForCache', () => {
  it('drops the pod template and managedFields, keeps what the Echo reconciler reads', () => {
    const original = serverJob();
    const before = runState(original);
    const cached = jobForCache(serverJob());
    assert.equal(cached.spec?.template, undefined);
    assert.equal(cached.spec?.backoffLimit, original.spec!.backoffLimit);
    assert.equal(cached.metadata?.managedFields, undefined);
    assert.deepEqual(cached.metadata?.ownerReferences, original.metadata!.ownerReferences);
    assert.deepEqual(cached.metadata?.labels, original.metadata!.labels);
    assert.deepEqual(cached.status, original.status);
    assert.deepEqual(runState(cached), before);
  });

  it('leaves a Job without a template (e.g. a DELETED event body) as it is', () => {
    const job: V1Job = { metadata: { name: 'x', namespace: 'ns' } };
    assert.deepEqual(jobForCache(job), { metadata: { name: 'x', namespace: 'ns' } });
  });
});
