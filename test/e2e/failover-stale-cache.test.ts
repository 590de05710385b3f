/**
 * A new leader whose Echos cache lags must not delete the current run's Job (issue 13, defect
 * 3): two replicas, the standby's Echo watch stalled (through a proxy) before a message changes,
 * the leader SIGKILLed once it has started the new run. The standby takes over believing the old
 * message, so the new message's Job looks like "the previous run". Before the fix it deleted
 * that Job at once, and made it again (a new uid: the message printed twice) once its watch
 * caught up.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Job } from '@kubernetes/client-node';
import { watchProxy } from '../support/apiwatchproxy.js';
import { logEntries, messageOf } from '../support/faults.js';
import { applyEcho, eventually, kubectl, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { haReplicaEnv, installCrds, startOperator, waitReady } from '../support/operator.js';

const holder = (ns: string): string =>
  kubectl(['get', 'lease', 'echoperator', '-o', 'jsonpath={.spec.holderIdentity}'], { namespace: ns }).stdout;
const liveJobs = (ns: string): V1Job[] =>
  listItems<V1Job>(['get', 'jobs'], { namespace: ns }).filter((j) => !j.metadata!.deletionTimestamp);

test(
  "a new leader with a stalled Echo watch keeps the current message's Job (same uid), deleting nothing on stale data",
  { timeout: 180_000 },
  async (t) => {
    installCrds();
    const ns = testNamespace(t, 'stale-failover');
    const leader = await startOperator(t, { ...haReplicaEnv(ns, 'leader'), LOG_LEVEL: 'info' });
    await waitReady(leader);
    await eventually('the first replica to lead', () => holder(ns) === 'leader');
    const proxy = await watchProxy(t, { watches: /\/echos$/ });
    const standby = await startOperator(t, { KUBECONFIG: proxy.kubeconfig, ...haReplicaEnv(ns, 'standby'), LOG_LEVEL: 'info' });
    await waitReady(standby);

    applyEcho(ns, 'hello', 'one');
    await eventually('the first run', () => getEcho(ns, 'hello').status?.jobName);
    await sleep(2000); // the standby's cache has the Echo with message "one"
    proxy.stall();
    kubectlOk(['patch', 'echo', 'hello', '--type=merge', '-p', '{"spec":{"message":"two"}}'], { namespace: ns });
    const current = await eventually('the leader to start the new run and delete the previous one', () => {
      const jobs = liveJobs(ns);
      const echo = getEcho(ns, 'hello');
      return jobs.length === 1 && messageOf(jobs[0]!) === 'two' && echo.status?.jobName === jobs[0]!.metadata!.name && jobs[0];
    });
    const uid = current.metadata!.uid!;

    await leader.stop('SIGKILL');
    await eventually('the standby to take over', () => holder(ns) === 'standby', 60_000);
    await sleep(5000); // its workers have had the Echo's key (queued by the Job events) for a while
    const during = liveJobs(ns);
    assert.deepEqual(
      during.map((j) => j.metadata!.uid),
      [uid],
      "the current run's Job was not deleted by the new leader",
    );

    proxy.release();
    await eventually('the new leader to catch up', () => getEcho(ns, 'hello').status?.observedGeneration === 2);
    await sleep(2000);
    const after = listItems<V1Job>(['get', 'jobs'], { namespace: ns });
    assert.deepEqual(
      after.map((j) => j.metadata!.uid),
      [uid],
      'still that very Job: not deleted and made again',
    );
    const held = (await logEntries(standby)).filter((e) => /^not deleting the previous run's Job/.test(e.msg));
    t.diagnostic(`the new leader held back ${held.length} time(s): ${held[0]?.msg ?? ''}`);
    assert.ok(held.length >= 1, 'the new leader did meet the stale cache (the scenario happened)');
  },
);
