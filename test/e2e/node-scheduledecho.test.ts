/**
 * Runs on the real node: the kubelet and containerd run the Jobs' pods, and what the tests check is
 * what the pods did, read back through `kubectl logs` (the API server asks the kubelet), and the
 * outcome the real job controller gave the Job. Needs the node (ECHOPERATOR_NODE, on by default).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { applyScheduledEcho, eventually, kubectlJson, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { operatorFor } from '../support/runs.js';
import { getScheduledEcho } from '../support/scheduledechos.js';

test('a ScheduledEcho prints on schedule, and its status shows the schedule time', { timeout: 180_000 }, async (t) => {
  const ns = testNamespace(t, 'node-scheduled', {}, { pods: true });
  await operatorFor(t, ns);
  const message = 'Hola, 世界! (every minute)';
  applyScheduledEcho(ns, 'tick', { message, schedule: '*/1 * * * *' });
  // The next minute boundary, then the pod's run: within two minutes.
  const job = await eventually(
    'a Job of the CronJob to complete',
    () => {
      const jobs = listItems<V1Job>(['get', 'jobs'], { namespace: ns });
      return jobs.find((j) => j.status?.succeeded === 1);
    },
    130_000,
  );
  assert.equal(job.metadata!.ownerReferences![0]!.kind, 'CronJob');
  assert.equal(kubectlOk(['logs', `job/${job.metadata!.name!}`], { namespace: ns }), `${message}\n`);
  const status = await eventually(
    'the ScheduledEcho status to show the run',
    () => {
      const s = getScheduledEcho(ns, 'tick').status;
      return s?.lastScheduleTime && s.lastSuccessfulTime ? s : undefined;
    },
    60_000,
  );
  const cronJob = kubectlJson<V1CronJob>(['get', 'cronjob', job.metadata!.ownerReferences![0]!.name], { namespace: ns });
  assert.equal(status.lastScheduleTime, cronJob.status!.lastScheduleTime);
  assert.ok(Date.parse(status.lastSuccessfulTime!) >= Date.parse(status.lastScheduleTime!));
});
