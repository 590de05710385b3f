/**
 * Echo -> Job on the real control plane (the real job and garbage-collector controllers run in
 * kube-controller-manager; there is no kubelet, so the tests set a Job's outcome the way the job
 * controller would, through its status subresource).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { applyEcho, eventually, jobsOf, kubectl, kubectlJson, kubectlOk, testNamespace } from '../support/kube.js';
import { finishJob } from '../support/jobs.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';


function getEcho(ns: string, name: string): any {
  return kubectlJson(['get', 'echo', name], { namespace: ns });
}

async function operatorFor(t: any, namespaces: string[]) {
  installCrds();
  const op = await startOperator(t, { WATCH_NAMESPACES: namespaces.join(','), NAMESPACE: namespaces[0]! });
  await waitReady(op);
  return op;
}

test('an Echo gets one Job in its namespace with the expected spec, owner and labels', async (t) => {
  const ns = testNamespace(t, 'echo-job');
  await operatorFor(t, [ns]);
  applyEcho(ns, 'hello', 'Hola, 世界!');
  const [job] = await eventually('the Job', () => jobsOf(ns, 'hello').length === 1 && jobsOf(ns, 'hello'));
  const echo = getEcho(ns, 'hello');
  assert.equal(job.metadata.namespace, ns);
  assert.deepEqual(job.metadata.ownerReferences, [
    { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', name: 'hello', uid: echo.metadata.uid, controller: true, blockOwnerDeletion: true },
  ]);
  assert.equal(job.metadata.labels['app.kubernetes.io/managed-by'], 'echoperator');
  assert.equal(job.metadata.labels['mmontes.io/echo'], 'hello');
  assert.ok(job.spec.backoffLimit > 0 && job.spec.backoffLimit <= 6);
  const pod = job.spec.template.spec;
  assert.equal(pod.restartPolicy, 'Never');
  assert.deepEqual(pod.containers[0].command, ['printf', '%s\\n', 'Hola, 世界!']);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.deepEqual(pod.containers[0].securityContext.capabilities.drop, ['ALL']);
  const status = await eventually('the Echo status', () => getEcho(ns, 'hello').status?.jobName && getEcho(ns, 'hello').status);
  assert.equal(status.jobName, job.metadata.name);
  assert.ok(['Pending', 'Running'].includes(status.phase));
  assert.equal(status.observedGeneration, echo.metadata.generation);
  const printed = kubectlOk(['get', 'echos'], { namespace: ns });
  assert.match(printed, /PHASE/);
  assert.match(printed, new RegExp(job.metadata.name));
});

test('same-named Echos in two namespaces get two Jobs, and odd messages are kept literally', async (t) => {
  const a = testNamespace(t, 'echo-a');
  const b = testNamespace(t, 'echo-b');
  await operatorFor(t, [a, b]);
  const shell = `$(rm -rf /) && echo "pwned" | cat; \`id\` 'q' \\n -n`;
  const unicode = 'Grüße, 世界! 👋 — ñ';
  applyEcho(a, 'same', shell);
  applyEcho(b, 'same', unicode);
  const [ja] = await eventually('Job in a', () => jobsOf(a, 'same').length === 1 && jobsOf(a, 'same'));
  const [jb] = await eventually('Job in b', () => jobsOf(b, 'same').length === 1 && jobsOf(b, 'same'));
  assert.notEqual(ja.metadata.uid, jb.metadata.uid);
  assert.equal(ja.spec.template.spec.containers[0].command[2], shell);
  assert.equal(jb.spec.template.spec.containers[0].command[2], unicode);
});

test('Job success and failure show in the Echo; a new message runs once more; deleting the Echo collects its Job', async (t) => {
  const ns = testNamespace(t, 'echo-life');
  await operatorFor(t, [ns]);
  applyEcho(ns, 'ok', 'first');
  applyEcho(ns, 'bad', 'will fail');
  const [okJob] = await eventually('Job ok', () => jobsOf(ns, 'ok').length === 1 && jobsOf(ns, 'ok'));
  const [badJob] = await eventually('Job bad', () => jobsOf(ns, 'bad').length === 1 && jobsOf(ns, 'bad'));
  await finishJob(ns, okJob.metadata.name, 'succeeded');
  await finishJob(ns, badJob.metadata.name, 'failed');
  const ok = await eventually('ok Succeeded', () => getEcho(ns, 'ok').status?.phase === 'Succeeded' && getEcho(ns, 'ok'));
  assert.ok(ok.status.completionTime);
  assert.equal(ok.status.conditions.find((c: any) => c.type === 'Succeeded').status, 'True');
  const bad = await eventually('bad Failed', () => getEcho(ns, 'bad').status?.phase === 'Failed' && getEcho(ns, 'bad'));
  const failed = bad.status.conditions.find((c: any) => c.type === 'Succeeded');
  assert.equal(failed.status, 'False');
  assert.equal(failed.reason, 'BackoffLimitExceeded');

  // A completed Echo is not run again, even after its Job is gone.
  kubectlOk(['delete', 'job', okJob.metadata.name, '--wait=true'], { namespace: ns });
  await sleep(1500);
  assert.equal(jobsOf(ns, 'ok').length, 0);
  assert.equal(getEcho(ns, 'ok').status.phase, 'Succeeded');

  // A new message: one new run, the previous run's Job removed.
  applyEcho(ns, 'ok', 'second');
  const [second] = await eventually('a Job for the new message', () => {
    const jobs = jobsOf(ns, 'ok').filter((j) => !j.metadata.deletionTimestamp);
    return jobs.length === 1 && jobs[0].metadata.name !== okJob.metadata.name && jobs;
  });
  assert.equal(second.spec.template.spec.containers[0].command[2], 'second');
  await eventually('the new run is Pending', () => getEcho(ns, 'ok').status?.jobName === second.metadata.name);

  // Deleting the Echo: the real garbage collector removes its Job.
  kubectlOk(['delete', 'echo', 'ok', '--wait=false'], { namespace: ns });
  await eventually('the Job is garbage-collected', () => jobsOf(ns, 'ok').length === 0, 60_000);
});

test('restarting the operator over reconciled objects writes nothing', async (t) => {
  const ns = testNamespace(t, 'echo-restart');
  const first = await operatorFor(t, [ns]);
  for (let i = 0; i < 5; i++) applyEcho(ns, `e${i}`, `message ${i}`);
  await eventually('all have Jobs and status', () => {
    const echos = kubectlJson(['get', 'echos'], { namespace: ns }).items;
    const jobs = kubectlJson(['get', 'jobs'], { namespace: ns }).items;
    return echos.length === 5 && jobs.length === 5 && echos.every((e: any) => e.status?.jobName);
  });
  await sleep(1000);
  assert.equal(await first.stop('SIGTERM'), 0);
  const snapshot = (): string =>
    kubectl(['get', 'echos,jobs,cronjobs,events', '-o', 'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{"\\n"}{end}'], { namespace: ns }).stdout;
  const before = snapshot();
  const second = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
  await waitReady(second);
  await sleep(3000);
  assert.equal(snapshot(), before, 'no Echo, Job or Event changed');
  assert.equal(await second.stop('SIGTERM'), 0);
});
