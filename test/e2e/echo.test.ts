/**
 * Echo -> Job on the real control plane (the real job and garbage-collector controllers run in
 * kube-controller-manager). These tests are about the objects the operator writes, so their pods
 * stay off the node; what a pod prints, and runs that succeed or fail, are in node-runs.test.ts.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { applyEcho, applyScheduledEcho, eventually, kubectlOk, listItems, onlyJobOf, testNamespace } from '../support/kube.js';
import { auditLogFrom } from '../support/audit.js';
import { getEcho } from '../support/runs.js';
import { getScheduledEcho } from '../support/scheduledechos.js';
import { messageOf, metricValue } from '../support/faults.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';

async function operatorFor(t: TestContext, namespaces: string[]) {
  installCrds();
  const op = await startOperator(t, { WATCH_NAMESPACES: namespaces.join(','), NAMESPACE: namespaces[0]! });
  await waitReady(op);
  return op;
}

test('an Echo gets one Job in its namespace with the expected spec, owner and labels', async (t) => {
  const ns = testNamespace(t, 'echo-job');
  await operatorFor(t, [ns]);
  applyEcho(ns, 'hello', 'Hola, 世界!');
  const job = await onlyJobOf(ns, 'hello');
  const echo = getEcho(ns, 'hello');
  assert.equal(job.metadata?.namespace, ns);
  assert.deepEqual(job.metadata?.ownerReferences, [
    { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', name: 'hello', uid: echo.metadata.uid, controller: true, blockOwnerDeletion: true },
  ]);
  assert.equal(job.metadata.labels!['app.kubernetes.io/managed-by'], 'echoperator');
  assert.equal(job.metadata.labels!['mmontes.io/echo'], 'hello');
  assert.ok(job.spec!.backoffLimit! > 0 && job.spec!.backoffLimit! <= 6);
  const pod = job.spec!.template.spec!;
  assert.equal(pod.restartPolicy, 'Never');
  assert.deepEqual(pod.containers[0]!.command, ['printf', '%s\\n', 'Hola, 世界!']);
  assert.equal(pod.securityContext!.runAsNonRoot, true);
  assert.deepEqual(pod.containers[0]!.securityContext!.capabilities!.drop, ['ALL']);
  const status = await eventually('the Echo status', () =>
    getEcho(ns, 'hello').status?.jobName ? getEcho(ns, 'hello').status : undefined,
  );
  assert.equal(status.jobName, job.metadata.name);
  assert.ok(status.phase === 'Pending' || status.phase === 'Running');
  assert.equal(status.observedGeneration, echo.metadata.generation);
  const printed = kubectlOk(['get', 'echos'], { namespace: ns });
  assert.match(printed, /PHASE/);
  assert.match(printed, new RegExp(job.metadata.name!));
});

test('same-named Echos in two namespaces get two Jobs, and odd messages are kept literally', async (t) => {
  const a = testNamespace(t, 'echo-a');
  const b = testNamespace(t, 'echo-b');
  await operatorFor(t, [a, b]);
  const shell = `$(rm -rf /) && echo "pwned" | cat; \`id\` 'q' \\n -n`;
  const unicode = 'Grüße, 世界! 👋 — ñ';
  applyEcho(a, 'same', shell);
  applyEcho(b, 'same', unicode);
  const ja = await onlyJobOf(a, 'same', 'Job in a');
  const jb = await onlyJobOf(b, 'same', 'Job in b');
  assert.notEqual(ja.metadata!.uid, jb.metadata!.uid);
  assert.equal(messageOf(ja), shell);
  assert.equal(messageOf(jb), unicode);
});

test('restarting the operator over reconciled objects writes nothing', async (t) => {
  const ns = testNamespace(t, 'echo-restart');
  const first = await operatorFor(t, [ns]);
  for (let i = 0; i < 5; i++) applyEcho(ns, `e${i}`, `message ${i}`);
  applyScheduledEcho(ns, 'tick', { message: 'tick', schedule: '0 0 1 1 *' });
  // Settled: the job controller has started every Job and every Echo's status says so. A Job it
  // starts later (a busy controller-manager) is news the restarted operator must mirror.
  await eventually(
    'all have Jobs that started, and status saying so',
    () => {
      const echos = listItems<Echo>(['get', 'echos'], { namespace: ns });
      const jobs = listItems<V1Job>(['get', 'jobs'], { namespace: ns });
      return (
        echos.length === 5 &&
        jobs.length === 5 &&
        jobs.every((j) => j.status?.startTime) &&
        echos.every((e) => e.status?.phase === 'Running' && e.status.startTime) &&
        getScheduledEcho(ns, 'tick').status?.cronJobName === 'tick'
      );
    },
    60_000,
  );
  assert.equal(await first.stop('SIGTERM'), 0);
  // Only the operator's writes count: the job controller still writes Jobs and Events meanwhile.
  const audit = auditLogFrom();
  const second = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
  await waitReady(second);
  const reconciled = async (controller: string): Promise<number> =>
    (await metricValue(second, 'controller_runtime_reconcile_total', { controller, result: 'success' })) ?? 0;
  await eventually('the restarted operator has reconciled every Echo and the ScheduledEcho', async () => {
    return (await reconciled('echo')) >= 5 && (await reconciled('scheduledecho')) >= 1;
  });
  assert.equal(await second.stop('SIGTERM'), 0);
  const writes = audit
    .writes(ns)
    .map((e) => `${e.verb} ${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''} ${e.objectRef.name}`);
  assert.deepEqual(writes, [], 'no write by the restarted operator');
});
