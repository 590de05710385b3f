/**
 * ScheduledEcho -> CronJob on the real control plane.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually, kubectlOk, testNamespace } from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';
import { applyScheduledEcho, getCronJob, getScheduledEcho } from '../support/scheduledechos.js';

test('a ScheduledEcho gets a CronJob that follows edits and comes back when deleted or changed', async (t) => {
  installCrds();
  const ns = testNamespace(t, 'sched');
  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
  await waitReady(op);
  assert.equal(applyScheduledEcho(ns, 'tick', { message: 'Hola, 世界!', schedule: '*/1 * * * *' }).code, 0);
  const cj = await eventually('the CronJob', () => getCronJob(ns, 'tick'));
  const se = getScheduledEcho(ns, 'tick');
  assert.equal(cj.spec?.schedule, '*/1 * * * *');
  assert.equal(cj.spec.concurrencyPolicy, 'Forbid');
  assert.deepEqual(cj.spec.jobTemplate.spec!.template.spec!.containers[0]!.command, ['printf', '%s\\n', 'Hola, 世界!']);
  assert.equal(cj.metadata!.ownerReferences![0]!.uid, se.metadata.uid);
  assert.equal(cj.metadata!.ownerReferences![0]!.controller, true);
  await eventually('status', () => getScheduledEcho(ns, 'tick').status?.cronJobName === 'tick');

  // The status mirrors the CronJob's schedule time. Writing an old one makes the real cronjob
  // controller start the run it believes it missed and record that time instead: mirror whatever it holds.
  kubectlOk(
    [
      'patch',
      'cronjob',
      'tick',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { lastScheduleTime: '2026-01-02T03:04:00Z' } }),
    ],
    { namespace: ns },
  );
  await eventually('lastScheduleTime mirrored in status', () => {
    // RFC 3339 text on the wire, whatever client-node's type (Date) says.
    const last = getCronJob(ns, 'tick')?.status?.lastScheduleTime;
    return last && getScheduledEcho(ns, 'tick').status?.lastScheduleTime === String(last);
  });
  assert.match(kubectlOk(['get', 'scheduledechos'], { namespace: ns }), /LAST/);

  // Edits of the ScheduledEcho propagate.
  applyScheduledEcho(ns, 'tick', { message: 'changed', schedule: '0 * * * *' });
  await eventually('the new schedule and message', () => {
    const c = getCronJob(ns, 'tick');
    return c?.spec?.schedule === '0 * * * *' && c.spec.jobTemplate.spec!.template.spec!.containers[0]!.command![2] === 'changed';
  });

  // A hand edit is reverted.
  kubectlOk(['patch', 'cronjob', 'tick', '--type=merge', '-p', '{"spec":{"schedule":"5 5 * * *"}}'], { namespace: ns });
  await eventually('the hand edit reverted', () => getCronJob(ns, 'tick')?.spec?.schedule === '0 * * * *');

  // A container another manager adds is removed: an apply keeps list entries other managers own,
  // so the operator must replace the list, not merge into it.
  const sidecar = { name: 'sidecar', image: 'busybox:1.37', command: ['sleep', '1'] };
  kubectlOk(
    [
      'patch',
      'cronjob',
      'tick',
      '--type=strategic',
      '--field-manager=intruder',
      '-p',
      JSON.stringify({ spec: { jobTemplate: { spec: { template: { spec: { containers: [sidecar] } } } } } }),
    ],
    { namespace: ns },
  );
  await eventually('the added container removed', () => {
    const containers = getCronJob(ns, 'tick')?.spec?.jobTemplate.spec?.template.spec?.containers ?? [];
    return containers.length === 1 && containers[0]!.name !== 'sidecar' && containers[0]!.command![2] === 'changed';
  });

  // A deleted CronJob comes back.
  const oldUid = getCronJob(ns, 'tick')!.metadata!.uid;
  kubectlOk(['delete', 'cronjob', 'tick', '--wait=true'], { namespace: ns });
  const back = await eventually('the CronJob restored', () => {
    const c = getCronJob(ns, 'tick');
    return c && c.metadata!.uid !== oldUid && c;
  });
  assert.equal(back.spec?.schedule, '0 * * * *');
  const printed = kubectlOk(['get', 'scheduledechos'], { namespace: ns });
  assert.match(printed, /SCHEDULE/);
});

test('the server refuses an invalid schedule and names the field', (t) => {
  installCrds();
  const ns = testNamespace(t, 'sched-bad');
  const r = applyScheduledEcho(ns, 'bad', { message: 'x', schedule: 'every minute' });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /spec\.schedule/);
  const missing = applyScheduledEcho(ns, 'nomsg', { schedule: '* * * * *' });
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /spec\.message/);
});
