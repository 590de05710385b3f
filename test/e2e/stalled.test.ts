/**
 * Refusals that only a change can cure, on the real control plane (kstatus' Stalled,
 * controller-runtime's TerminalError): the object says Stalled=True with the server's message and
 * its generation observed, one Warning Event is recorded, and the operator stops trying until
 * the object, or what blocks it, changes; then it recovers and Stalled goes.
 *
 * No fixed waits. "Not retried" (the schedule case, no resync) is read from what the operator
 * did at the failure, which is when a retry is decided: a key comes back only by a retry with
 * backoff (workqueue_retries_total), a requeue-after (a reconcile counted as requeue_after), a
 * terminal error's recheck (logged with recheckAfterMs), a resync (off) or a change (none); each
 * would show. "Passes write nothing" (the foreign-object cases, a 5 s resync) waits for two
 * resync passes over the stalled object, then reads the audit log, which the API server writes
 * before it answers, so every write of those passes is in it.
 */
import type { CoreV1Event, V1CronJob, V1Job } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Echo } from '../../src/api/echo.js';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { jobNameFor } from '../../src/controllers/echo/desired.js';
import { auditLogFrom } from '../support/audit.js';
import { logEntries, metricValue } from '../support/faults.js';
import {
  applyEcho,
  applyScheduledEcho,
  conditionOf as condition,
  eventually,
  kubectl,
  kubectlJson,
  kubectlOk,
  listItems,
  testNamespace,
} from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { getScheduledEcho } from '../support/scheduledechos.js';
import { installCrds, startOperator, waitReady, type OperatorProcess } from '../support/operator.js';

async function operatorIn(t: TestContext, ns: string, env: Record<string, string> = {}): Promise<OperatorProcess> {
  installCrds();
  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns, ...env });
  await waitReady(op);
  return op;
}

/** Warning Events on the object, counting repeats (an aggregated Event's count). */
function warnings(ns: string, name: string): { total: number; lines: string[] } {
  const items = listItems<CoreV1Event>(['get', 'events', '--field-selector', `involvedObject.name=${name},type=Warning`], {
    namespace: ns,
  });
  return {
    total: items.reduce((n, e) => n + (e.count ?? 1), 0),
    lines: items.map((e) => `${e.reason} x${e.count ?? 1}: ${e.message}`),
  };
}

/**
 * The operator's writes that changed something: a refused attempt (the 422 or 409 that is the
 * stall itself, met again) is a request, not a write.
 */
function written(audit: ReturnType<typeof auditLogFrom>, ns: string): { changed: string[]; refused: number } {
  const all = audit.writes(ns);
  const line = (e: (typeof all)[number]) =>
    `${e.verb} ${e.objectRef.resource}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''} ${e.objectRef.name} ${e.responseStatus?.code}`;
  const ok = (e: (typeof all)[number]) => (e.responseStatus?.code ?? 0) < 400;
  return { changed: all.filter(ok).map(line), refused: all.filter((e) => !ok(e)).length };
}

async function reconciles(op: OperatorProcess, controller: string): Promise<number> {
  let n = 0;
  for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
    n += (await metricValue(op, 'controller_runtime_reconcile_total', { controller, result })) ?? 0;
  }
  return n;
}

async function stalledOf(kind: 'echo' | 'scheduledecho', ns: string, name: string, reason: string): Promise<Echo | ScheduledEcho> {
  return eventually(`${kind} ${name} Stalled (${reason})`, () => {
    const obj = kubectlJson<Echo | ScheduledEcho>(['get', kind, name], { namespace: ns });
    return condition(obj, 'Stalled')?.status === 'True' && condition(obj, 'Stalled')!.reason === reason && obj;
  });
}

/** What every stall says: Ready=False, Stalled=True, both with `message`, and its generation observed. */
function assertStalled(obj: Echo | ScheduledEcho, reason: string, message: RegExp): void {
  assert.equal(condition(obj, 'Ready')?.status, 'False');
  assert.equal(condition(obj, 'Ready')?.reason, reason);
  assert.match(condition(obj, 'Stalled')!.message, message);
  assert.equal(condition(obj, 'Ready')!.message, condition(obj, 'Stalled')!.message);
  assert.equal(condition(obj, 'Reconciling'), undefined);
  assert.equal(obj.status!.observedGeneration, obj.metadata.generation, 'status.observedGeneration is the generation looked at');
  assert.equal(condition(obj, 'Stalled')!.observedGeneration, obj.metadata.generation);
}

test('schedule "61 * * * *": Stalled with the server\'s message, no retry, one Warning Event, a restart writes nothing; a fixed schedule is Ready', async (t) => {
  const ns = testNamespace(t, 'stalled-schedule');
  let op = await operatorIn(t, ns);
  applyScheduledEcho(ns, 'tick', { message: 'tick', schedule: '61 * * * *' });
  const stalled = await stalledOf('scheduledecho', ns, 'tick', 'Invalid');
  assertStalled(stalled, 'Invalid', /^CronJob\.batch "tick" is invalid: spec\.schedule: Invalid value: "61 \* \* \* \*"/);
  assert.ok(((await metricValue(op, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'scheduledecho' })) ?? 0) >= 1);

  const before = await reconciles(op, 'scheduledecho');
  const gaveUp = await eventually('the operator to log that it gave up on tick', async () =>
    (await logEntries(op)).find((e) => e.name === 'tick' && String(e.msg).startsWith('reconcile failed for good')),
  );
  assert.equal(gaveUp.msg, 'reconcile failed for good; not retried until the object changes');
  assert.equal(gaveUp.recheckAfterMs, undefined, 'no recheck');
  assert.equal((await metricValue(op, 'workqueue_retries_total', { name: 'scheduledecho' })) ?? 0, 0, 'no retry with backoff');
  assert.equal(
    (await metricValue(op, 'controller_runtime_reconcile_total', { controller: 'scheduledecho', result: 'requeue_after' })) ?? 0,
    0,
    'no requeue-after',
  );
  const events = await eventually('the Warning Event', () => {
    const w = warnings(ns, 'tick');
    return w.total >= 1 && w;
  });
  t.diagnostic(`Warning Events: ${events.lines.join('; ')}`);
  assert.ok(events.total <= 2, `at most 2 Warning Events (got ${events.total}: ${events.lines.join('; ')})`);
  assert.match(events.lines.join('\n'), /spec\.schedule/);
  assert.equal(await reconciles(op, 'scheduledecho'), before, 'not retried meanwhile: the reconcile count is flat');

  // A restart (an upgrade) reconciles it again: the same refusal, nothing written.
  assert.equal(await op.stop('SIGTERM'), 0);
  const audit = auditLogFrom();
  op = await operatorIn(t, ns);
  await eventually('the restarted operator met the stall', async () => (await reconciles(op, 'scheduledecho')) >= 1);
  assert.equal(await op.stop('SIGTERM'), 0);
  const restart = written(audit, ns);
  t.diagnostic(`restart: ${restart.refused} refused attempt(s), writes: ${JSON.stringify(restart.changed)}`);
  assert.deepEqual(restart.changed, [], 'no write by the restarted operator');
  assert.equal(warnings(ns, 'tick').total, events.total, 'no Event either');

  op = await operatorIn(t, ns);
  applyScheduledEcho(ns, 'tick', { message: 'tick', schedule: '1 * * * *' });
  const ready = await eventually('Ready once the schedule is fixed', () => {
    const se = getScheduledEcho(ns, 'tick');
    return condition(se, 'Ready')?.status === 'True' && se;
  });
  assert.equal(condition(ready, 'Stalled'), undefined, 'Stalled removed');
  assert.equal(ready.status!.observedGeneration, ready.metadata.generation);
  assert.equal(kubectlJson<V1CronJob>(['get', 'cronjob', 'tick'], { namespace: ns }).spec.schedule, '1 * * * *');
});

/** Passes over a stalled object (a 5 s resync reconciles it again and again): they write nothing, record no Event. */
async function assertQuietWhileStalled(t: TestContext, op: OperatorProcess, ns: string, name: string, controller: string): Promise<void> {
  const audit = auditLogFrom();
  const before = await reconciles(op, controller);
  // Two resyncs (5 s apart) after the mark; a reconcile is counted once it has returned, so its writes are logged.
  const passes = await eventually(
    `two resync passes over the stalled ${controller}`,
    async () => {
      const n = (await reconciles(op, controller)) - before;
      return n >= 2 && n;
    },
    60_000,
    500,
  );
  const events = warnings(ns, name);
  const during = written(audit, ns);
  t.diagnostic(
    `${passes} passes over the stalled ${controller}, ${during.refused} refused attempts; Warning Events: ${events.lines.join('; ')}`,
  );
  assert.deepEqual(during.changed, [], 'passes that meet the same stall write nothing');
  assert.ok(events.total >= 1 && events.total <= 2, `at most 2 Warning Events (got ${events.total}: ${events.lines.join('; ')})`);
}

test('a same-named CronJob the operator does not control: Stalled (NameTaken), passes over it write nothing; deleted, Ready', async (t) => {
  const ns = testNamespace(t, 'stalled-cronjob');
  const foreign = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'tick' },
    spec: {
      schedule: '0 0 1 1 *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.37' }] } } } },
    },
  };
  kubectlOk(['create', '-f', '-'], { namespace: ns, input: JSON.stringify(foreign) });
  const op = await operatorIn(t, ns, { RESYNC_PERIOD_SECONDS: '5' });
  applyScheduledEcho(ns, 'tick', { message: 'tick', schedule: '0 0 1 1 *' });
  assertStalled(
    await stalledOf('scheduledecho', ns, 'tick', 'NameTaken'),
    'NameTaken',
    /CronJob .*\/tick already exists and is not controlled by this ScheduledEcho/,
  );
  await assertQuietWhileStalled(t, op, ns, 'tick', 'scheduledecho');

  kubectlOk(['delete', 'cronjob', 'tick', '--wait=true'], { namespace: ns });
  const ready = await eventually('Ready once the foreign CronJob is gone', () => {
    const se = getScheduledEcho(ns, 'tick');
    return condition(se, 'Ready')?.status === 'True' && se;
  });
  assert.equal(condition(ready, 'Stalled'), undefined, 'Stalled removed');
  assert.equal(
    kubectlJson<V1CronJob>(['get', 'cronjob', 'tick'], { namespace: ns }).metadata!.ownerReferences![0]!.uid,
    ready.metadata.uid,
  );
});

test("a same-named Job the operator does not control: the Echo is Stalled (NameTaken), passes write nothing; deleted, the Echo's run starts", async (t) => {
  installCrds();
  const ns = testNamespace(t, 'stalled-job');
  // The Job's name derives from the Echo's uid: the Echo first, the foreign Job next, then the operator.
  applyEcho(ns, 'hello', 'hi');
  const echo = getEcho(ns, 'hello');
  const name = jobNameFor(echo);
  const foreign = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.37' }] } } },
  };
  kubectlOk(['create', '-f', '-'], { namespace: ns, input: JSON.stringify(foreign) });
  const foreignUid = kubectlJson<V1Job>(['get', 'job', name], { namespace: ns }).metadata!.uid;
  const op = await operatorIn(t, ns, { RESYNC_PERIOD_SECONDS: '5' });
  const stalled = await stalledOf('echo', ns, 'hello', 'NameTaken');
  assertStalled(stalled, 'NameTaken', /Job .* already exists and is not controlled by this Echo/);
  assert.equal(condition(stalled, 'Reconciled')?.status, 'False');
  await assertQuietWhileStalled(t, op, ns, 'hello', 'echo');
  assert.equal(kubectlJson<V1Job>(['get', 'job', name], { namespace: ns }).metadata!.uid, foreignUid, 'the foreign Job is untouched');

  kubectlOk(['delete', 'job', name, '--wait=true', '--cascade=background'], { namespace: ns });
  // Pods stay off the node in this tier, so the run starts but does not print: Ready waits for it
  // (node-runs.test.ts); what is checked here is that the stall is over and the run is ours.
  const running = await eventually('the run started once the foreign Job is gone', () => {
    const e = getEcho(ns, 'hello');
    const job = kubectl(['get', 'job', name, '-o', 'json'], { namespace: ns });
    const ours = job.code === 0 && (JSON.parse(job.stdout) as V1Job).metadata!.ownerReferences?.[0]?.uid === e.metadata.uid;
    return ours && condition(e, 'Reconciled')?.status === 'True' && e;
  });
  assert.equal(condition(running, 'Stalled'), undefined, 'Stalled removed');
  assert.equal(condition(running, 'Reconciling')?.status, 'True', 'in progress: the run goes on');
});
