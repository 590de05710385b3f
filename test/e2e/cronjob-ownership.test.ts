/**
 * What the operator owns on a ScheduledEcho's CronJob, on the real control plane: every field it
 * sets is restored after a hand edit (suspend, timeZone, startingDeadlineSeconds included); its
 * server-side apply owns them from the first write, so a field it stops setting is pruned; and a
 * same-named CronJob someone else made is never taken over.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1CronJob } from '@kubernetes/client-node';
import { desiredCronJob } from '../../src/controllers/scheduledecho/desired.js';
import { FIELD_MANAGER } from '../../src/controllers/common/labels.js';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { applyScheduledEcho, eventually, kubectl, kubectlOk, testNamespace } from '../support/kube.js';
import { installCrds, operatorIn, startOperator, waitReady } from '../support/operator.js';
import { getScheduledEcho } from '../support/scheduledechos.js';

/** Yearly: the cronjob controller starts no run while a test looks at the CronJob. */
const SCHEDULE = '0 0 1 1 *';
const IMAGE = 'busybox:1.37';

function scheduledEcho(ns: string, name: string): ScheduledEcho {
  applyScheduledEcho(ns, name, { message: 'tick', schedule: SCHEDULE });
  return getScheduledEcho(ns, name);
}

function cronJob(ns: string, name: string): V1CronJob | undefined {
  const r = kubectl(['get', 'cronjob', name, '--show-managed-fields', '-o', 'json'], { namespace: ns });
  return r.code === 0 ? (JSON.parse(r.stdout) as V1CronJob) : undefined;
}

test('every CronJob field the operator owns is restored after a hand edit: suspend, timeZone, startingDeadlineSeconds', async (t) => {
  const { ns } = await operatorIn(t, 'cj-drift', { JOB_IMAGE: IMAGE });
  scheduledEcho(ns, 'tick');
  const cj = await eventually('the CronJob', () => cronJob(ns, 'tick'));
  const spec = cj.spec;
  const owned = { suspend: spec.suspend, timeZone: spec.timeZone, startingDeadlineSeconds: spec.startingDeadlineSeconds };
  assert.deepEqual(owned, { suspend: false, timeZone: 'Etc/UTC', startingDeadlineSeconds: owned.startingDeadlineSeconds });
  assert.ok(owned.startingDeadlineSeconds! > 0, 'a deadline is set');

  const handEdits: [string, string[]][] = [
    ['suspend: true', ['--type=merge', '-p', '{"spec":{"suspend":true}}']],
    ['another time zone', ['--type=merge', '-p', '{"spec":{"timeZone":"Europe/Madrid"}}']],
    ['another starting deadline', ['--type=merge', '-p', '{"spec":{"startingDeadlineSeconds":17}}']],
    ['the time zone removed', ['--type=json', '-p', '[{"op":"remove","path":"/spec/timeZone"}]']],
    ['another concurrency policy', ['--type=merge', '-p', '{"spec":{"concurrencyPolicy":"Allow"}}']],
    ['another Job backoff limit', ['--type=merge', '-p', '{"spec":{"jobTemplate":{"spec":{"backoffLimit":0}}}}']],
  ];
  for (const [what, patch] of handEdits) {
    kubectlOk(['patch', 'cronjob', 'tick', ...patch], { namespace: ns });
    await eventually(`${what}: reverted`, () => {
      const now = cronJob(ns, 'tick')!.spec;
      return (
        now.suspend === false &&
        now.timeZone === 'Etc/UTC' &&
        now.startingDeadlineSeconds === owned.startingDeadlineSeconds &&
        now.concurrencyPolicy === spec.concurrencyPolicy &&
        now.jobTemplate.spec!.backoffLimit === spec.jobTemplate.spec!.backoffLimit
      );
    });
  }
});

/** Applies what a later version would (no component label, no time zone) and checks both are pruned. */
function assertLaterVersionPrunes(ns: string, se: ScheduledEcho): void {
  const next: V1CronJob = desiredCronJob({ ...se, kind: 'ScheduledEcho' }, IMAGE);
  delete next.metadata!.labels!['app.kubernetes.io/component'];
  delete next.spec.timeZone;
  kubectlOk(['apply', '--server-side', `--field-manager=${FIELD_MANAGER}`, '-f', '-'], { namespace: ns, input: JSON.stringify(next) });
  const after = cronJob(ns, 'tick')!;
  assert.equal(after.metadata!.labels!['app.kubernetes.io/component'], undefined, 'the label is pruned');
  assert.equal(after.spec.timeZone, undefined, 'spec.timeZone is pruned');
  assert.equal(after.metadata!.labels!['app.kubernetes.io/managed-by'], 'echoperator', 'what is still applied stays');
}

const operatorEntries = (cj: V1CronJob): (string | undefined)[] =>
  cj.metadata!.managedFields!.filter((m) => m.manager === FIELD_MANAGER).map((m) => m.operation);

test('the operator owns its CronJob by server-side apply from the first write, so a field it stops setting is pruned', async (t) => {
  const { ns, op } = await operatorIn(t, 'cj-prune', { JOB_IMAGE: IMAGE });
  const se = scheduledEcho(ns, 'tick');
  const cj = await eventually('the CronJob', () => cronJob(ns, 'tick'));
  assert.deepEqual(
    operatorEntries(cj),
    ['Apply'],
    'one entry of the operator, an apply: nothing it set is co-owned by an update of its own',
  );
  assert.equal(await op.stop('SIGTERM'), 0);
  assertLaterVersionPrunes(ns, se);
});

test('a CronJob an earlier version created by POST passes into apply ownership, so pruning works on it too', async (t) => {
  installCrds();
  const ns = testNamespace(t, 'cj-upgrade');
  const se = scheduledEcho(ns, 'tick');
  // As the earlier version made it: a POST (an Update entry of the operator's field manager),
  // without the fields this version also owns.
  const earlier: V1CronJob = desiredCronJob({ ...se, kind: 'ScheduledEcho' }, IMAGE);
  delete earlier.spec.timeZone;
  delete earlier.spec.startingDeadlineSeconds;
  kubectlOk(['create', `--field-manager=${FIELD_MANAGER}`, '-f', '-'], { namespace: ns, input: JSON.stringify(earlier) });
  assert.deepEqual(operatorEntries(cronJob(ns, 'tick')!), ['Update']);

  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns, JOB_IMAGE: IMAGE });
  await waitReady(op);
  await eventually('the CronJob owned by one apply entry, with the fields this version sets', () => {
    const cj = cronJob(ns, 'tick')!;
    return cj.spec.timeZone === 'Etc/UTC' && operatorEntries(cj).join() === 'Apply';
  });
  assert.equal(await op.stop('SIGTERM'), 0);
  assertLaterVersionPrunes(ns, se);
});

test('a same-named CronJob someone else made is never taken over, even when it holds what the operator would set', async (t) => {
  const { ns } = await operatorIn(t, 'cj-foreign', { JOB_IMAGE: IMAGE });
  // The CronJob the operator would make, minus what marks it as the operator's (its owner
  // reference and labels): an unguarded apply would merge into it without a single conflict.
  const placeholder = {
    apiVersion: 'mmontes.io/v1alpha1' as const,
    kind: 'ScheduledEcho' as const,
    metadata: { name: 'tick', namespace: ns, uid: 'x' },
  };
  const foreign = desiredCronJob({ ...placeholder, spec: { message: 'tick', schedule: SCHEDULE } }, IMAGE);
  delete foreign.metadata!.ownerReferences;
  delete foreign.metadata!.labels;
  kubectlOk(['create', '-f', '-'], { namespace: ns, input: JSON.stringify(foreign) });
  const before = cronJob(ns, 'tick')!;

  scheduledEcho(ns, 'tick');
  const ready = await eventually('the ScheduledEcho says why it has no CronJob', () =>
    getScheduledEcho(ns, 'tick').status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False'),
  );
  assert.match(ready.message, /not controlled by this ScheduledEcho/);
  const now = cronJob(ns, 'tick')!;
  assert.equal(now.metadata!.resourceVersion, before.metadata!.resourceVersion, 'the foreign CronJob is untouched');
  assert.equal(now.metadata!.ownerReferences, undefined);
  assert.deepEqual(
    now.metadata!.managedFields!.map((m) => m.manager),
    before.metadata!.managedFields!.map((m) => m.manager),
  );
});
