/**
 * Argo CD's own code judges the operator's objects (control plane tier: pods stay off the node,
 * so an Echo's run stays in progress). Each object is read back from the cluster in the state
 * named and handed to the harness (Argo CD's util/lua and gitops-engine's health, with the
 * argocd-cm the docs ship); the assertion is on Argo CD's answer. A run that completes needs a
 * pod: node-argocd-health.test.ts.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Echo } from '../../src/api/echo.js';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { jobNameFor } from '../../src/controllers/echo/desired.js';
import { argoCdHealth, type ArgoCdHealth } from '../support/argocd.js';
import {
  applyEcho,
  applyScheduledEcho,
  conditionOf as condition,
  eventually,
  kubectlJson,
  kubectlOk,
  testNamespace,
} from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';
import { getEcho } from '../support/runs.js';
import { addOnsReady } from '../support/addons.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const read = (kind: 'echo' | 'scheduledecho', ns: string, name: string): Echo | ScheduledEcho =>
  kubectlJson<Echo | ScheduledEcho>(['get', kind, name], { namespace: ns });

/** Polls the object until `ready` holds, then returns Argo CD's answer for it as read. */
async function healthWhen(
  t: TestContext,
  kind: 'echo' | 'scheduledecho',
  ns: string,
  name: string,
  what: string,
  ready: (obj: Echo | ScheduledEcho) => boolean,
) {
  const obj = await eventually(`${kind} ${name}: ${what}`, () => {
    const o = read(kind, ns, name);
    return ready(o) && o;
  });
  return { obj, health: await judged(t, `${kind} ${name}, ${what}`, obj) };
}

/** Argo CD's answer, also printed: the run's output shows what Argo CD said in each state. */
async function judged(t: TestContext, state: string, obj: unknown): Promise<ArgoCdHealth> {
  const health = await argoCdHealth(obj);
  t.diagnostic(`Argo CD: ${state}: ${JSON.stringify(health)}`);
  return health;
}

test(
  'Argo CD health of real Echos and ScheduledEchos: new and running are Progressing, a CronJob in place is Healthy, Stalled is Degraded, a spec change not yet observed is Progressing',
  { timeout: 180_000 },
  async (t) => {
    installCrds();
    const ns = testNamespace(t, 'argocd-health');
    // Created before any operator watches the namespace: the state Argo CD sees right after a sync.
    applyEcho(ns, 'hello', 'hi');
    applyEcho(ns, 'taken', 'blocked');
    applyScheduledEcho(ns, 'tick', { message: 'tick', schedule: '*/5 * * * *' });
    applyScheduledEcho(ns, 'bad-schedule', { message: 'never', schedule: '61 * * * *' });
    // A Job the operator does not control, under the name the Echo's run would take.
    const taken = getEcho(ns, 'taken');
    kubectlOk(['create', '-f', '-'], {
      namespace: ns,
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: jobNameFor(taken) },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.37' }] } } },
      }),
    });

    for (const [kind, name] of [
      ['echo', 'hello'],
      ['scheduledecho', 'tick'],
    ] as const) {
      const obj = read(kind, ns, name);
      assert.equal(obj.status?.observedGeneration ?? 0, 0, `${kind} ${name} not yet observed`);
      assert.deepEqual(await judged(t, `${kind} ${name}, new`, obj), {
        status: 'Progressing',
        message: 'Waiting for the operator to observe generation 1',
      });
    }

    const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
    await waitReady(op);

    const running = await healthWhen(t, 'echo', ns, 'hello', 'its run in progress', (o) => condition(o, 'Reconciling')?.status === 'True');
    assert.equal(running.health.status, 'Progressing');
    assert.equal(running.health.message, condition(running.obj, 'Reconciling')!.message);

    const placed = await healthWhen(t, 'scheduledecho', ns, 'tick', 'Ready', (o) => condition(o, 'Ready')?.status === 'True');
    assert.deepEqual(placed.health, { status: 'Healthy', message: condition(placed.obj, 'Ready')!.message });

    const badSchedule = await healthWhen(
      t,
      'scheduledecho',
      ns,
      'bad-schedule',
      'Stalled',
      (o) => condition(o, 'Stalled')?.status === 'True',
    );
    assert.equal(badSchedule.health.status, 'Degraded');
    assert.equal(badSchedule.health.message, condition(badSchedule.obj, 'Stalled')!.message);
    assert.match(badSchedule.health.message, /schedule/);

    const nameTaken = await healthWhen(t, 'echo', ns, 'taken', 'Stalled', (o) => condition(o, 'Stalled')?.status === 'True');
    assert.equal(nameTaken.health.status, 'Degraded');
    assert.match(nameTaken.health.message, /Job .* already exists and is not controlled by this Echo/);

    // A spec change the operator has not seen yet: stopped, it cannot observe the new generation.
    await op.stop();
    applyScheduledEcho(ns, 'tick', { message: 'tick', schedule: '*/10 * * * *' });
    const changed = read('scheduledecho', ns, 'tick');
    assert.equal(changed.metadata.generation, 2);
    assert.equal(changed.status!.observedGeneration, 1, 'observedGeneration behind');
    assert.equal(condition(changed, 'Ready')!.status, 'True', 'still Ready for the old spec');
    assert.deepEqual(await judged(t, 'scheduledecho tick, spec changed, not yet observed', changed), {
      status: 'Progressing',
      message: 'Waiting for the operator to observe generation 2',
    });

    // Observed again: Healthy for the new spec.
    await waitReady(await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns }));
    const again = await healthWhen(t, 'scheduledecho', ns, 'tick', 'generation 2 observed', (o) => o.status?.observedGeneration === 2);
    assert.equal(again.health.status, 'Healthy');
  },
);

test('a kind argocd-cm has no check for is an error, never an answer', async () => {
  await assert.rejects(
    argoCdHealth({ apiVersion: 'mmontes.io/v1alpha1', kind: 'Unknown', metadata: { name: 'x', generation: 1 } }),
    /argocd-cm has no health check for mmontes.io\/Unknown/,
  );
});
