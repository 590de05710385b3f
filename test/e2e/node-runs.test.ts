/**
 * Runs on the real node: the kubelet and containerd run the Jobs' pods, and what the tests check is
 * what the pods did, read back through `kubectl logs` (the API server asks the kubelet), and the
 * outcome the real job controller gave the Job. Needs the node (ECHOPERATOR_NODE, on by default).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreV1Event, V1Job, V1Pod } from '@kubernetes/client-node';
import { applyEcho, conditionOf, eventually, jobsOf, kubectl, kubectlJson, kubectlOk, listItems } from '../support/kube.js';
import { controllerWork } from '../support/faults.js';
import { getEcho, okAndFailingNamespaces, phase, printed } from '../support/runs.js';

test(
  'a run that succeeds and one whose image fails (backoffLimit honoured) show in the Echo and its Events; a new message runs once more; deleting the Echo collects its Job',
  { timeout: 300_000 },
  async (t) => {
    const { ns, failing, op } = await okAndFailingNamespaces(t, 'node');
    applyEcho(ns, 'ok', 'first');
    applyEcho(failing, 'bad', 'will fail');

    const ok = await phase(ns, 'ok', 'Succeeded');
    assert.equal(printed(ns, ok), 'first\n');
    assert.ok(ok.status!.completionTime);
    assert.equal(conditionOf(ok, 'Succeeded')!.status, 'True');

    // The job controller retries a failed pod backoffLimit times, with its own backoff (10 s, 20 s, 40 s).
    const bad = await phase(failing, 'bad', 'Failed', 240_000);
    const failed = conditionOf(bad, 'Succeeded')!;
    assert.equal(failed.status, 'False');
    assert.equal(failed.reason, 'BackoffLimitExceeded');
    const badJob = kubectlJson<V1Job>(['get', 'job', bad.status!.jobName!], { namespace: failing });
    assert.equal(badJob.status!.failed, badJob.spec!.backoffLimit! + 1, 'one pod per allowed retry, then no more');
    const pods = listItems<V1Pod>(['get', 'pods', '-l', `job-name=${bad.status!.jobName!}`], { namespace: failing });
    assert.equal(pods.length, badJob.spec!.backoffLimit! + 1);
    for (const pod of pods) assert.equal(pod.status!.containerStatuses![0]!.state!.terminated!.exitCode, 3);
    assert.match(kubectlOk(['logs', pods[0]!.metadata!.name!], { namespace: failing }), /failing on purpose/);

    const reasons = (namespace: string, name: string): (string | undefined)[] =>
      listItems<CoreV1Event>(['get', 'events', '--field-selector', `involvedObject.name=${name},involvedObject.kind=Echo`], {
        namespace,
      }).map((e) => e.reason);
    await eventually('RunSucceeded', () => reasons(ns, 'ok').includes('RunSucceeded'));
    await eventually('RunFailed', () => reasons(failing, 'bad').includes('RunFailed'));
    assert.ok(reasons(ns, 'ok').includes('JobCreated'));
    assert.match(kubectlOk(['describe', 'echo', 'bad'], { namespace: failing }), /RunFailed/);

    // A completed Echo is not run again, even after its Job is gone.
    kubectlOk(['delete', 'job', ok.status!.jobName!, '--wait=true'], { namespace: ns });
    // Provably reconciled after the deletion, not after a guessed time: the operator's one Job
    // watch of the namespace delivers the deletion (which queues 'ok') before any event of a Job
    // made later, so once the marker's run is Succeeded (written from its Job's status) and the
    // queue is idle, 'ok' has been reconciled with its Job gone.
    applyEcho(ns, 'marker', 'after the deletion');
    await phase(ns, 'marker', 'Succeeded');
    await eventually('the echo queue to be idle', async () => (await controllerWork(op, 'echo')).idle, 30_000);
    assert.equal(jobsOf(ns, 'ok').length, 0);
    kubectlOk(['delete', 'echo', 'marker', '--wait=false'], { namespace: ns });
    assert.equal(getEcho(ns, 'ok').status!.phase, 'Succeeded');

    // A new message: one new run, which prints it.
    applyEcho(ns, 'ok', 'second');
    const second = await eventually(
      'the new run to succeed',
      () => {
        const e = getEcho(ns, 'ok');
        return e.status?.phase === 'Succeeded' && e.status.jobName !== ok.status!.jobName && e;
      },
      90_000,
    );
    assert.equal(printed(ns, second), 'second\n');
    assert.equal(jobsOf(ns, 'ok').filter((j) => !j.metadata!.deletionTimestamp).length, 1);

    // Deleting the Echo: the real garbage collector removes its Job, and the Job's pods with it.
    kubectlOk(['delete', 'echo', 'ok', '--wait=false'], { namespace: ns });
    await eventually(
      'the Job and its pod are garbage-collected',
      () => jobsOf(ns, 'ok').length === 0 && kubectl(['get', 'pods', '-o', 'name'], { namespace: ns }).stdout.trim() === '',
      60_000,
    );
  },
);
