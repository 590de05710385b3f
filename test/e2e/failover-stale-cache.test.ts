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
import type { V1Job } from '@kubernetes/client-node';
import { watchProxy } from '../support/apiwatchproxy.js';
import type { Echo } from '../../src/api/echo.js';
import { controllerWork, logEntries, messageOf, type LogEntry } from '../support/faults.js';
import { applyEcho, eventually, kubectl, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { haReplicaEnv, installCrds, startOperator, waitReady, withOperatorOutput, type OperatorProcess } from '../support/operator.js';

const holder = (ns: string): string =>
  kubectl(['get', 'lease', 'echoperator', '-o', 'jsonpath={.spec.holderIdentity}'], { namespace: ns }).stdout;
const liveJobs = (ns: string): V1Job[] =>
  listItems<V1Job>(['get', 'jobs'], { namespace: ns }).filter((j) => !j.metadata!.deletionTimestamp);

/** The Echo a watch event line carries, or undefined (another object, or not an event). */
function echoIn(line: string, name: string): Echo | undefined {
  try {
    const event = JSON.parse(line) as { object?: Echo };
    return event.object?.metadata?.name === name ? event.object : undefined;
  } catch {
    return undefined;
  }
}

const heldBack = async (op: OperatorProcess): Promise<LogEntry[]> =>
  (await logEntries(op)).filter((e) => /^not deleting the previous run's Job/.test(e.msg));

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
    const firstJob = await eventually('the first run', () => getEcho(ns, 'hello').status?.jobName);
    await eventually('the standby to be sent the Echo with message "one" and its run', () =>
      proxy.delivered((line) => {
        const echo = echoIn(line, 'hello');
        return echo?.spec.message === 'one' && echo.status?.jobName === firstJob;
      }),
    );
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
    // Its workers had the Echo's key (queued by the Job events) and met the stale cache.
    await eventually('the new leader to reconcile the Echo on its stale cache', async () => (await heldBack(standby)).length > 0, 60_000);
    const during = liveJobs(ns);
    assert.deepEqual(
      during.map((j) => j.metadata!.uid),
      [uid],
      "the current run's Job was not deleted by the new leader",
    );

    // The catch-up pass: one that ends after the release, with the Echo at "two" sent and nothing left to do.
    await withOperatorOutput(standby, async () => {
      const { reconciles: beforeRelease } = await eventually('the new leader to be idle', async () => {
        const work = await controllerWork(standby, 'echo');
        return work.idle && work;
      });
      proxy.release();
      await eventually('the new leader to catch up and finish its pass', async () => {
        const sent = proxy.delivered((line) => echoIn(line, 'hello')?.spec.message === 'two');
        const work = await controllerWork(standby, 'echo');
        return sent && work.idle && work.reconciles > beforeRelease;
      });
    });
    assert.equal(getEcho(ns, 'hello').status?.observedGeneration, 2);
    const after = listItems<V1Job>(['get', 'jobs'], { namespace: ns });
    assert.deepEqual(
      after.map((j) => j.metadata!.uid),
      [uid],
      'still that very Job: not deleted and made again',
    );
    const held = await heldBack(standby);
    t.diagnostic(`the new leader held back ${held.length} time(s): ${held[0]?.msg ?? ''}`);
    assert.ok(held.length >= 1, 'the new leader did meet the stale cache (the scenario happened)');
  },
);
