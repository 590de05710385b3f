/**
 * The ScheduledEcho reconciler against the runtime's fake client and caches (src/runtime/testing):
 * its CronJob created by apply and kept as it says (a hand edit is restored), nothing written when
 * the cluster matches; a CronJob the server refuses for good (a schedule out of range) or a name
 * taken by a CronJob it does not control stalls it (Stalled=True, Ready=False,
 * observedGeneration, one Warning Event, a TerminalError); a pass that meets the same stall
 * writes nothing; the cure makes it Ready.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1CronJob } from '@kubernetes/client-node';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../src/api/scheduledecho.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../src/controllers/common/labels.js';
import { desiredCronJob } from '../../src/controllers/scheduledecho/desired.js';
import { ScheduledEchoReconciler } from '../../src/controllers/scheduledecho/reconciler.js';
import { ApiError } from '../../src/kube/errors.js';
import { CRONJOBS } from '../../src/kube/resources.js';
import type { ApplyOptions } from '../../src/runtime/client/index.js';
import { isTerminalError, terminalErrorIn } from '../../src/runtime/controller/terminal.js';
import { nopLogger } from '../../src/runtime/log.js';
import { findCondition } from '../../src/runtime/reconcile/conditions.js';
import { STALLED_RECHECK_MS } from '../../src/runtime/reconcile/stalled.js';
import { FakeCache, FakeClient, FakeEventRecorder, refusal } from '../../src/runtime/testing/index.js';

const KEY = 'ns/tick';

function scheduledEcho(schedule: string, generation = 1): ScheduledEcho {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'ScheduledEcho',
    metadata: { name: 'tick', namespace: 'ns', uid: 'se-uid', generation, resourceVersion: '10' },
    spec: { message: 'hi', schedule },
  };
}

/** What the server says of a CronJob whose schedule its validation refuses. */
function invalidSchedule(schedule: string): ApiError {
  const message = `CronJob.batch "tick" is invalid: spec.schedule: Invalid value: "${schedule}": end of range (61) above maximum (59): 61`;
  return new ApiError(422, 'Invalid', `PATCH /apis/batch/v1/namespaces/ns/cronjobs/tick: ${message}`, {
    kind: 'Status',
    status: 'Failure',
    message,
    reason: 'Invalid',
    code: 422,
    details: { causes: [{ field: 'spec.schedule', message: 'Invalid value' }] },
  });
}

const condition = (obj: ScheduledEcho | undefined, type: string) => findCondition(obj?.status?.conditions, type);
const conditions = (obj: ScheduledEcho | undefined) => obj?.status?.conditions?.map((c) => [c.type, c.status]);

/** A ScheduledEcho on the server and in the cache, its reconciler, and what the informers would deliver. */
function setup(se: ScheduledEcho) {
  const client = new FakeClient();
  client.add(SCHEDULED_ECHOS, se);
  const ses = new FakeCache<ScheduledEcho>().add(se);
  // As the operator's informer: only the CronJobs it labelled.
  const cronJobs = new FakeCache<V1CronJob>({ filter: (cj) => cj.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY });
  const events = new FakeEventRecorder();
  const reconciler = new ScheduledEchoReconciler({
    scheduledEchos: ses,
    cronJobs,
    client,
    events,
    jobImage: 'busybox',
    now: () => new Date('2026-01-01T00:00:00Z'),
  });
  const ctx = { log: nopLogger, signal: new AbortController().signal, reconcileID: 'r' };
  return {
    client,
    events,
    ses,
    pass: () =>
      reconciler.reconcile(KEY, ctx).then(
        () => undefined,
        (err: unknown) => err,
      ),
    verbs: (from = 0) => client.writes.slice(from).map((w) => w.verb),
    server: () => client.stored(SCHEDULED_ECHOS, KEY),
    cronJob: () => client.stored(CRONJOBS, KEY),
    caughtUp: () => {
      ses.syncFrom(client, SCHEDULED_ECHOS);
      cronJobs.syncFrom(client, CRONJOBS);
    },
  };
}

describe('ScheduledEchoReconciler', () => {
  it('creates its CronJob by apply and reports Ready; the second pass writes nothing', async () => {
    const s = setup(scheduledEcho('0 0 1 1 *'));
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), ['apply', 'patchStatus']);
    const create = s.client.writes[0]!;
    assert.deepEqual((create.options as ApplyOptions).force, false, 'create-only: an unforced apply');
    assert.equal(s.cronJob()?.spec?.schedule, '0 0 1 1 *');
    assert.equal(s.cronJob()?.metadata?.ownerReferences?.[0]?.uid, 'se-uid');
    assert.deepEqual(conditions(s.server()), [['Ready', 'True']]);
    assert.deepEqual(s.events.lines(), ['Normal CronJobCreated Created CronJob tick with schedule "0 0 1 1 *"']);
    s.caughtUp();
    const writes = s.client.writes.length;
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(writes), []);
  });

  it('restores a CronJob edited by hand (a forced apply to that uid), then writes nothing', async () => {
    const s = setup(scheduledEcho('0 0 1 1 *'));
    assert.equal(await s.pass(), undefined);
    const created = s.cronJob()!;
    s.client.add(CRONJOBS, {
      ...created,
      metadata: { ...created.metadata, resourceVersion: '500' },
      spec: { ...created.spec, schedule: '5 * * * *' },
    });
    s.caughtUp();
    const writes = s.client.writes.length;
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(writes), ['apply'], 'no status write: it already says Ready');
    const restore = s.client.writes[writes]!;
    assert.equal((restore.options as ApplyOptions).force, true);
    assert.equal((restore.body as V1CronJob).metadata?.uid, created.metadata?.uid, 'to that uid only');
    assert.equal(s.cronJob()?.spec?.schedule, '0 0 1 1 *');
    assert.equal(s.events.lines().at(-1), 'Normal CronJobRestored Restored CronJob tick, which was changed outside the operator');
    s.caughtUp();
    const after = s.client.writes.length;
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(after), []);
  });
});

describe('ScheduledEchoReconciler: refusals only a change can cure stall it', () => {
  it('schedule "61 * * * *": Stalled=True with the server message, Ready=False, observedGeneration, one Event; again: nothing; fixed: Ready', async () => {
    const s = setup(scheduledEcho('61 * * * *'));
    s.client.prependReactor('apply', (request) => {
      const schedule = (request.body as V1CronJob).spec?.schedule;
      return schedule === '61 * * * *' ? invalidSchedule(schedule) : undefined;
    });
    const err = await s.pass();
    assert.ok(isTerminalError(err), 'a TerminalError');
    assert.equal(terminalErrorIn(err)!.recheckAfterMs, undefined, 'a new generation wakes it; nothing else can');
    const stalled = s.server()!;
    const message = invalidSchedule('61 * * * *').status!.message!;
    assert.equal(stalled.status?.observedGeneration, 1);
    assert.deepEqual(
      stalled.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]),
      [
        ['Ready', 'False', 'Invalid', message, 1],
        ['Stalled', 'True', 'Invalid', message, 1],
      ],
    );
    assert.deepEqual(s.events.lines(), [`Warning Invalid ${message}`]);

    for (let i = 0; i < 3; i++) {
      s.caughtUp();
      const writes = s.client.writes.length;
      assert.ok(isTerminalError(await s.pass()), 'still terminal');
      assert.deepEqual(s.verbs(writes), [], 'a pass over the same stall writes nothing');
    }
    assert.equal(s.events.events.length, 1, 'and records no Event');

    const current = s.server()!;
    s.client.add(SCHEDULED_ECHOS, {
      ...current,
      spec: { message: 'hi', schedule: '1 * * * *' },
      metadata: { ...current.metadata, generation: 2 },
    });
    s.caughtUp();
    assert.equal(await s.pass(), undefined);
    assert.equal(s.cronJob()?.spec?.schedule, '1 * * * *');
    assert.equal(s.server()?.status?.observedGeneration, 2);
    assert.deepEqual(conditions(s.server()), [['Ready', 'True']], 'Stalled removed');
  });

  it('a CronJob it does not control holds the name: NameTaken stall with a recheck that writes nothing; the CronJob gone, Ready', async () => {
    const s = setup(scheduledEcho('0 0 1 1 *'));
    s.client.add(CRONJOBS, {
      metadata: { name: 'tick', namespace: 'ns', uid: 'foreign' },
      spec: { schedule: '* * * * *', jobTemplate: {} },
    });
    const err = await s.pass();
    assert.equal(terminalErrorIn(err)?.recheckAfterMs, STALLED_RECHECK_MS, 'rechecked: the foreign CronJob is not watched');
    const stalled = s.server()!;
    assert.equal(condition(stalled, 'Stalled')?.reason, 'NameTaken');
    assert.match(condition(stalled, 'Ready')?.message ?? '', /CronJob ns\/tick already exists and is not controlled by this ScheduledEcho/);
    assert.equal(stalled.status?.observedGeneration, 1);
    assert.equal(s.events.events.length, 1);
    assert.equal(s.cronJob()?.metadata?.uid, 'foreign', 'never written to');
    assert.equal(s.cronJob()?.spec?.schedule, '* * * * *');

    s.caughtUp();
    const writes = s.client.writes.length;
    assert.ok(isTerminalError(await s.pass()), 'the recheck: still terminal');
    assert.deepEqual(s.verbs(writes), [], 'the recheck writes nothing');
    assert.equal(s.events.events.length, 1, 'and records no Event');

    s.client.remove(CRONJOBS, KEY);
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(conditions(s.server()), [['Ready', 'True']]);
    assert.equal(s.cronJob()?.metadata?.ownerReferences?.[0]?.uid, 'se-uid');
  });

  it("a deleted predecessor's CronJob holds the name (a re-create): deleted by uid, its own created in the same pass, Ready", async () => {
    const se = scheduledEcho('0 0 1 1 *');
    const s = setup(se);
    const predecessor = desiredCronJob({ ...se, metadata: { ...se.metadata, uid: 'old-uid' } }, 'busybox');
    s.client.add(CRONJOBS, { ...predecessor, metadata: { ...predecessor.metadata, uid: 'old-cronjob' } });
    s.caughtUp();
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), ['delete', 'apply', 'patchStatus']);
    assert.deepEqual(s.client.writes[0]!.body, { uid: 'old-cronjob' }, 'that CronJob only');
    assert.equal(s.cronJob()?.metadata?.ownerReferences?.[0]?.uid, 'se-uid');
    assert.deepEqual(conditions(s.server()), [['Ready', 'True']]);
    assert.deepEqual(s.events.lines(), ['Normal CronJobCreated Created CronJob tick with schedule "0 0 1 1 *"']);
  });

  it('the cache behind a delete and re-create (the server holds another uid): nothing deleted, the NameTaken stall', async () => {
    const se = scheduledEcho('0 0 1 1 *');
    const s = setup(se);
    const newer = { ...se, metadata: { ...se.metadata, uid: 'newer-uid' } };
    s.client.add(SCHEDULED_ECHOS, newer);
    s.client.add(CRONJOBS, desiredCronJob(newer, 'busybox'));
    s.caughtUp();
    s.ses.add(se);
    const err = await s.pass();
    assert.ok(isTerminalError(err));
    assert.ok(!s.verbs().includes('delete'), "the newer one's CronJob is left alone");
    assert.equal(s.cronJob()?.metadata?.ownerReferences?.[0]?.uid, 'newer-uid');
  });

  it('a stall whose status write conflicts is retried with backoff (not terminal), and recorded with its one Event by the next pass', async () => {
    const s = setup(scheduledEcho('61 * * * *'));
    s.client.prependReactor('apply', (request) => invalidSchedule((request.body as V1CronJob).spec?.schedule ?? ''));
    s.client.failNext('patchStatus', refusal(409, 'Conflict', 'the object has been modified'));
    const err = await s.pass();
    assert.ok(err instanceof ApiError && err.code === 409, 'the conflict goes back to the queue');
    assert.ok(!isTerminalError(err), 'not terminal: the stall is not recorded yet');
    assert.deepEqual(s.events.lines(), [], 'no Event without the status');
    assert.ok(isTerminalError(await s.pass()), 'the next pass records it');
    assert.equal(condition(s.server(), 'Stalled')?.status, 'True');
    assert.equal(s.events.events.length, 1);
  });
});
