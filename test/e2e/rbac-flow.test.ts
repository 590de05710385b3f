/**
 * The operator run with exactly the permissions the synthesized install grants (a token of its
 * ServiceAccount, nothing else: no `update` on status or CronJobs) and confined by the install's
 * ValidatingAdmissionPolicy completes the Echo and ScheduledEcho flow, with HA off and on: Jobs
 * created, a deleted CronJob re-created and a hand-edited one restored by server-side apply (an
 * UPDATE the policy checks whole), a previous run's Job deleted, status patched.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { V1CronJob } from '@kubernetes/client-node';
import { applyHiAndTick, eventually, kubectl, kubectlJson, kubectlOk, jobsOf, testNamespace } from '../support/kube.js';
import { messageOf } from '../support/faults.js';
import { getEcho } from '../support/runs.js';
import { getScheduledEcho } from '../support/scheduledechos.js';
import { confinementActive, installEchoperator } from '../support/install.js';
import { startOperator, waitReady, withOperatorOutput } from '../support/operator.js';

async function flow(t: TestContext, ha: boolean): Promise<void> {
  const watched = testNamespace(t, ha ? 'rbac-ha' : 'rbac');
  const install = installEchoperator(t, { watchNamespaces: [watched], ha: { enabled: ha } }, { workload: false });
  // The policy is in force before the operator writes anything.
  await confinementActive(install, watched);
  const op = await startOperator(t, {
    KUBECONFIG: install.kubeconfig,
    NAMESPACE: install.namespace,
    WATCH_NAMESPACES: watched,
    HA_ENABLED: String(ha),
    HA_NODE_ID: 'rbac-test',
  });
  await waitReady(op);
  // A failed step says what the operator said (the run cannot always be repeated).
  await withOperatorOutput(op, async () => {
    applyHiAndTick(watched, '*/5 * * * *');
    await eventually('the Echo status', () => getEcho(watched, 'hi').status?.jobName);
    await eventually('the ScheduledEcho status', () => getScheduledEcho(watched, 'tick').status?.cronJobName);
    // The Echo's Jobs only: the CronJob starts Jobs of its own in this namespace every 5 minutes.
    assert.equal(jobsOf(watched, 'hi').length, 1);
    // Restoring a deleted CronJob needs create through server-side apply.
    kubectlOk(['delete', 'cronjob', 'tick', '--wait=true'], { namespace: watched });
    await eventually('the CronJob restored', () => kubectl(['get', 'cronjob', 'tick'], { namespace: watched }).code === 0);
    // Repairing a hand edit is a forced apply: an UPDATE of the whole CronJob, patch only.
    kubectlOk(['patch', 'cronjob', 'tick', '--type=merge', '-p', '{"spec":{"schedule":"*/7 * * * *"}}'], { namespace: watched });
    await eventually(
      'the hand-edited schedule restored',
      () => kubectlJson<V1CronJob>(['get', 'cronjob', 'tick'], { namespace: watched }).spec.schedule === '*/5 * * * *',
    );
    // A new message deletes the previous run's Job.
    kubectlOk(['patch', 'echo', 'hi', '--type=merge', '-p', '{"spec":{"message":"again"}}'], { namespace: watched });
    await eventually('one Job for the new message', () => {
      const jobs = jobsOf(watched, 'hi').filter((j) => !j.metadata!.deletionTimestamp);
      return jobs.length === 1 && messageOf(jobs[0]!) === 'again';
    });
    if (ha) {
      assert.equal(
        kubectl(['get', 'lease', 'echoperator', '-o', 'jsonpath={.spec.holderIdentity}'], { namespace: install.namespace }).stdout,
        'rbac-test',
      );
    }
  });
  const errors = op
    .output()
    .split('\n')
    .filter((l) => /forbidden/i.test(l));
  assert.deepEqual(errors, [], 'no request was refused');
  assert.equal(await op.stop('SIGTERM'), 0);
}

test('the synthesized RBAC is enough for the whole flow (HA off)', (t) => flow(t, false));
test('the synthesized RBAC is enough for the whole flow (HA on)', (t) => flow(t, true));
