/**
 * Faults of the API server itself (issue 7), on a PRIVATE control plane that this file starts
 * and stops: killing kube-apiserver on the shared one would break every other test.
 *
 * The outcome is what counts, never the timing: every Echo ends with exactly one Job printing its
 * current message, an Echo's status names that Job, nothing is created twice.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { killApiserver, restartApiserver } from '../../scripts/testbed/controlplane/cluster.js';
import type { Echo } from '../../src/api/echo.js';
import { eventually, itemsOf } from '../support/kube.js';
import { startOperator, waitReady } from '../support/operator.js';
import {
  echoListManifest,
  liveJobsByOwner,
  logEntries,
  messageOf,
  metricValue,
  privateControlPlanePerFile,
  requestsEndedWith,
  type Kubectl,
} from '../support/faults.js';

const controlPlane = privateControlPlanePerFile();

function createEchos(k: Kubectl, ns: string, names: string[], message: (name: string) => string): void {
  k.ok(['create', '-f', '-'], { namespace: ns, input: echoListManifest(names, message) });
}

/**
 * What is wrong with namespace ns right now (empty = converged): every Echo has exactly one live
 * Job, printing its current message, named in its status for its current generation; or none, its
 * status saying that run's Job was removed before its outcome was recorded (a started run is never
 * repeated). (Jobs of deleted Echos are the garbage collector's business, which takes its own time
 * after an apiserver restart: the tests check instead that the operator made none.)
 */
function problems(k: Kubectl, ns: string): string[] {
  const echos = itemsOf<Echo>(k, ['get', 'echos'], { namespace: ns });
  const byOwner = liveJobsByOwner(itemsOf<V1Job>(k, ['get', 'jobs'], { namespace: ns }));
  const out: string[] = [];
  for (const echo of echos) {
    const name = echo.metadata.name;
    const jobs = byOwner.get(echo.metadata.uid!) ?? [];
    byOwner.delete(echo.metadata.uid!);
    if (jobs.length === 0 && jobRemoved(echo)) continue;
    if (jobs.length !== 1) {
      out.push(`${name}: ${jobs.length} Jobs`);
      continue;
    }
    const job = jobs[0]!;
    if (messageOf(job) !== echo.spec.message)
      out.push(`${name}: Job prints ${JSON.stringify(messageOf(job))}, not ${JSON.stringify(echo.spec.message)}`);
    if (echo.status?.jobName !== job.metadata!.name) out.push(`${name}: status.jobName ${echo.status?.jobName} != ${job.metadata!.name}`);
    if (echo.status?.observedGeneration !== echo.metadata.generation)
      out.push(`${name}: observedGeneration ${echo.status?.observedGeneration} != ${echo.metadata.generation}`);
  }
  return out;
}

/** The Echo's run was started and its Job removed before its outcome was recorded: Failed, JobRemoved, this generation. */
function jobRemoved(echo: Echo): boolean {
  const succeeded = echo.status?.conditions?.find((c) => c.type === 'Succeeded');
  return (
    echo.status?.phase === 'Failed' && succeeded?.reason === 'JobRemoved' && echo.status.observedGeneration === echo.metadata.generation
  );
}

async function converged(k: Kubectl, ns: string, timeoutMs = 60_000): Promise<void> {
  await eventually(
    `namespace ${ns} to converge`,
    () => {
      const p = problems(k, ns);
      if (p.length) throw new Error(p.slice(0, 10).join('; '));
      return true;
    },
    timeoutMs,
    500,
  );
}

/** What the job controller writes when a Job's pod succeeded (as echo.test.ts does). */
function completeJob(k: Kubectl, ns: string, job: string): void {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const cond = (type: string) => ({
    type,
    status: 'True',
    reason: 'CompletionsReached',
    message: 'Reached expected number of succeeded pods',
    lastProbeTime: now,
    lastTransitionTime: now,
  });
  const status = { completionTime: now, active: 0, ready: 0, succeeded: 1, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] };
  k.ok(['patch', 'job', job, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })], { namespace: ns });
}

function jobOf(k: Kubectl, ns: string, echo: string): V1Job {
  const jobs = itemsOf<V1Job>(k, ['get', 'jobs', '-l', `mmontes.io/echo=${echo}`], { namespace: ns }).filter(
    (j) => !j.metadata!.deletionTimestamp,
  );
  assert.equal(jobs.length, 1, `${echo} has one Job`);
  return jobs[0]!;
}

test(
  'kube-apiserver killed and restarted: the operator survives, reconnects, and reconciles what changed meanwhile',
  { timeout: 180_000 },
  async (t) => {
    const k = controlPlane().kubectl;
    const ns = 'outage';
    k.ok(['create', 'namespace', ns]);
    const op = await startOperator(t, { KUBECONFIG: controlPlane().state.kubeconfig, NAMESPACE: ns, WATCH_NAMESPACES: ns });
    await waitReady(op);
    const before = Array.from({ length: 8 }, (_, i) => `a${i}`);
    createEchos(k, ns, before, (n) => `before the outage: ${n}`);
    await converged(k, ns);
    const doomed = ['a3', 'a4'].map((n) => jobOf(k, ns, n).metadata!.name);

    const unansweredBefore = await requestsEndedWith(op, '<error>');
    await killApiserver(controlPlane().state, 'SIGKILL');
    // Survival is judged once the operator has met the outage and kept trying: 4 of its requests
    // (re-lists, re-watches, lease renewals, each on its backoff) went unanswered.
    await eventually(
      'the operator to retry against the dead server',
      async () => (await requestsEndedWith(op, '<error>')) >= unansweredBefore + 4,
      30_000,
    );
    assert.equal(op.proc.exitCode, null, 'the operator is still running during the outage');
    const live = await fetch(`http://127.0.0.1:${op.healthPort}/healthz`);
    assert.equal(live.status, 200, `alive during the outage: ${await live.text()}`);

    await restartApiserver(controlPlane().state, { log: () => undefined });
    const restartedAt = Date.now();
    // At once, while the operator is still backing off: new Echos, new messages, deletions.
    const afterOutage = Array.from({ length: 8 }, (_, i) => `b${i}`);
    createEchos(k, ns, afterOutage, (n) => `after the outage: ${n}`);
    for (const n of ['a0', 'a1', 'a2'])
      k.ok(['patch', 'echo', n, '--type=merge', '-p', JSON.stringify({ spec: { message: `edited after the outage: ${n}` } })], {
        namespace: ns,
      });
    k.ok(['delete', 'echo', 'a3', 'a4', '--wait=false'], { namespace: ns });

    await converged(k, ns, 90_000);
    t.diagnostic(`converged ${Date.now() - restartedAt} ms after the restart`);
    const names = itemsOf<Echo>(k, ['get', 'echos'], { namespace: ns })
      .map((e) => e.metadata.name)
      .sort();
    assert.deepEqual(names, [...before.filter((n) => n !== 'a3' && n !== 'a4'), ...afterOutage].sort());
    for (const n of ['a0', 'a1', 'a2']) assert.equal(messageOf(jobOf(k, ns, n)), `edited after the outage: ${n}`);
    const leftOfDeleted = itemsOf<V1Job>(k, ['get', 'jobs', '-l', 'mmontes.io/echo in (a3,a4)'], { namespace: ns }).map(
      (j) => j.metadata!.name,
    );
    assert.ok(
      leftOfDeleted.every((j) => doomed.includes(j)),
      `no new Job for a deleted Echo: ${leftOfDeleted.join(',')}`,
    );
    assert.equal(op.proc.exitCode, null, 'the operator never exited');
    const logs = await logEntries(op);
    assert.ok(
      logs.some((e) => e.informer === `echos/${ns}` && /watch failed|list failed|410/.test(e.msg)),
      'the echos informer noticed the outage',
    );
    const created = logs.filter((e) => e.msg === 'job created').map((e) => String(e.job));
    assert.equal(created.length, new Set(created).size, 'no Job created twice');
    assert.equal(created.length, before.length + afterOutage.length + 3, 'one create per Echo and message');
    // No error loop after recovery: the reconciles that failed while the server was down are few.
    const errors = (await metricValue(op, 'controller_runtime_reconcile_errors_total', { controller: 'echo' })) ?? NaN;
    assert.ok(errors <= 20, `reconcile errors bounded (${errors})`);
    assert.equal(await op.stop('SIGTERM'), 0, 'stops cleanly after the outage');
  },
);

test('a watch that expired (410 Gone) re-lists; the re-list misses nothing and duplicates nothing', { timeout: 180_000 }, async (t) => {
  // Technique: while the operator is frozen (SIGSTOP), the etcd revision moves past everything it
  // has seen and kube-apiserver is restarted. A restarted apiserver's watch cache starts at the
  // current revision, so when the operator wakes up, finds its watch connection dead and
  // re-watches from the resourceVersion it last saw, the server answers 410 Gone ("too old
  // resource version"), exactly what clients meet after an apiserver rollout. Everything changed
  // while it was frozen reaches it only through the re-list.
  const k = controlPlane().kubectl;
  const ns = 'expiry';
  k.ok(['create', 'namespace', ns]);
  const op = await startOperator(t, { KUBECONFIG: controlPlane().state.kubeconfig, NAMESPACE: ns, WATCH_NAMESPACES: ns });
  t.after(() => {
    if (op.proc.exitCode === null) op.proc.kill('SIGCONT');
  });
  await waitReady(op);
  const first = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'];
  createEchos(k, ns, first, (n) => `first: ${n}`);
  await converged(k, ns);
  await eventually('c3 Job started by the job controller', () => jobOf(k, ns, 'c3').status?.startTime);
  const c0Job = jobOf(k, ns, 'c0').metadata!.name;
  const c1Job = jobOf(k, ns, 'c1').metadata!.name!;
  const c2Job = jobOf(k, ns, 'c2').metadata!.name!;
  const c3Job = jobOf(k, ns, 'c3').metadata!.name!;
  assert.equal(await metricValue(op, 'informer_relists_total', { informer: `echos/${ns}` }), 0, 'no re-list before the fault');

  op.proc.kill('SIGSTOP');
  k.ok(['create', 'configmap', `bump-${Date.now()}`], { namespace: 'default' });
  await killApiserver(controlPlane().state, 'SIGKILL');
  await restartApiserver(controlPlane().state, { log: () => undefined });
  // Unseen by any watch of the frozen operator: adds, an update, deletes, a Job update and delete.
  const later = ['d0', 'd1', 'd2', 'd3', 'd4'];
  createEchos(k, ns, later, (n) => `while asleep: ${n}`);
  k.ok(['patch', 'echo', 'c0', '--type=merge', '-p', JSON.stringify({ spec: { message: 'c0, second message' } })], { namespace: ns });
  // c1 goes with its Job, as the garbage collector would do it (it takes its time after a restart).
  k.ok(['delete', 'echo', 'c1', '--wait=false'], { namespace: ns });
  k.ok(['delete', 'job', c1Job, '--wait=true', '--ignore-not-found'], { namespace: ns });
  k.ok(['delete', 'job', c2Job, '--wait=true'], { namespace: ns });
  completeJob(k, ns, c3Job);
  op.proc.kill('SIGCONT');
  const wokenAt = Date.now();

  await converged(k, ns, 90_000);
  t.diagnostic(`converged ${Date.now() - wokenAt} ms after SIGCONT`);
  assert.equal(messageOf(jobOf(k, ns, 'c0')), 'c0, second message');
  assert.notEqual(jobOf(k, ns, 'c0').metadata!.name, c0Job);
  // c2's Job, deleted by hand while the operator slept, is not made again: the run had started.
  const c2 = k.json<Echo>(['get', 'echo', 'c2'], { namespace: ns });
  assert.ok(jobRemoved(c2), `c2: ${JSON.stringify(c2.status)}`);
  assert.equal(itemsOf<V1Job>(k, ['get', 'jobs', '-l', 'mmontes.io/echo=c2'], { namespace: ns }).length, 0, 'no second run of c2');
  await eventually(
    'c3 Succeeded, learnt from the re-listed Job',
    () => k.json<Echo>(['get', 'echo', 'c3'], { namespace: ns }).status?.phase === 'Succeeded',
  );

  // The re-list happened, for the reason intended, in both informers that had seen events.
  for (const informer of [`echos/${ns}`, `jobs/${ns}`]) {
    assert.ok(((await metricValue(op, 'informer_relists_total', { informer })) ?? 0) >= 1, `${informer} re-listed`);
    assert.ok(((await metricValue(op, 'informer_watch_errors_total', { informer, reason: 'gone' })) ?? 0) >= 1, `${informer} got 410`);
  }
  const logs = await logEntries(op);
  assert.ok(
    logs.some((e) => e.informer === `echos/${ns}` && e.msg === 'watch resourceVersion expired (410); re-listing'),
    'the echos informer logged the 410 re-list',
  );
  // Nothing duplicated: each Job name was created once, c2's (deleted by hand) too.
  const created = new Map<string, number>();
  for (const e of logs) if (e.msg === 'job created') created.set(e.job!, (created.get(e.job!) ?? 0) + 1);
  for (const [job, n] of created) assert.equal(n, 1, `Job ${job} created ${n} times`);
  assert.ok(created.has(c2Job));
  assert.equal(created.size, first.length + later.length + 1, 'one create per Echo and message');
  assert.equal(itemsOf<V1Job>(k, ['get', 'jobs', '-l', 'mmontes.io/echo=c1'], { namespace: ns }).length, 0, 'no Job for the deleted Echo');
  const refused = (await logEntries(op)).filter((e) => String(e.msg).startsWith('not starting a run')).length;
  t.diagnostic(`runs not started because the server contradicted the cache: ${refused}`);
  assert.equal(await op.stop('SIGTERM'), 0);
});
