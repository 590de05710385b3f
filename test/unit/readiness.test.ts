/**
 * The summary conditions GitOps tools read (Ready, Reconciling, Stalled, with observedGeneration)
 * on Echo and ScheduledEcho, judged by kstatus's generic rules: kstatusOf() below restates, for
 * these kinds, what github.com/fluxcd/cli-utils/pkg/kstatus/status.Compute decides for a custom
 * resource (Flux's health checks). The end-to-end proof with the real kstatus, inside Flux, is
 * test/e2e/node-gitops.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { buildCrd } from '../../src/api/crd.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import type { Condition } from '../../src/api/schema.js';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { readinessConditions } from '../../src/runtime/reconcile/conditions.js';
import { echoStatus, reconciledOk } from '../../src/controllers/echo/status.js';
import { scheduledEchoStatus } from '../../src/controllers/scheduledecho/status.js';
import { stallAt, stalledStatus } from '../../src/runtime/reconcile/stalled.js';

type KStatus = 'InProgress' | 'Current' | 'Failed';

/** kstatus's generic rules, in its order: generation not observed, Reconciling, Stalled, Ready, else Current. */
function kstatusOf(obj: {
  metadata: { generation?: number };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}): KStatus {
  const observed = obj.status?.observedGeneration;
  if (observed !== undefined && observed !== obj.metadata.generation) return 'InProgress';
  const conditions = obj.status?.conditions ?? [];
  const isTrue = (type: string): boolean => conditions.some((c) => c.type === type && c.status === 'True');
  if (isTrue('Reconciling')) return 'InProgress';
  if (isTrue('Stalled')) return 'Failed';
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready) return ready.status === 'True' ? 'Current' : 'InProgress';
  return 'Current';
}

const clock = (iso: string) => () => new Date(iso);

function echo(status?: Echo['status'], generation = 1): Echo {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'Echo',
    metadata: { name: 'hello', namespace: 'ns', uid: 'u', generation },
    spec: { message: 'hi' },
    ...(status ? { status } : {}),
  };
}

const jobs: Record<string, V1Job | undefined> = {
  'not created': undefined,
  'not started': { status: {} },
  running: { status: { startTime: new Date('2026-01-01T00:00:01Z'), active: 1 } },
  complete: {
    status: {
      startTime: new Date('2026-01-01T00:00:01Z'),
      completionTime: new Date('2026-01-01T00:00:03Z'),
      conditions: [{ type: 'Complete', status: 'True' }],
    },
  },
  failed: {
    status: {
      conditions: [
        { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
      ],
    },
  },
};

describe('readinessConditions', () => {
  it('carries Reconciling and Stalled only when they hold, with the same reason and message as Ready', () => {
    assert.deepEqual(readinessConditions('Ready', 'Done', 'all good'), [
      { type: 'Ready', status: 'True', reason: 'Done', message: 'all good' },
    ]);
    assert.deepEqual(readinessConditions('Progressing', 'Working', 'on it'), [
      { type: 'Ready', status: 'False', reason: 'Working', message: 'on it' },
      { type: 'Reconciling', status: 'True', reason: 'Working', message: 'on it' },
    ]);
    assert.deepEqual(readinessConditions('Stalled', 'Broken', 'cannot'), [
      { type: 'Ready', status: 'False', reason: 'Broken', message: 'cannot' },
      { type: 'Stalled', status: 'True', reason: 'Broken', message: 'cannot' },
    ]);
  });
});

describe("an Echo's readiness follows its run", () => {
  const expected: Record<string, { kstatus: KStatus; ready: string; reconciling?: string; stalled?: string }> = {
    'not created': { kstatus: 'InProgress', ready: 'False', reconciling: 'True' },
    'not started': { kstatus: 'InProgress', ready: 'False', reconciling: 'True' },
    running: { kstatus: 'InProgress', ready: 'False', reconciling: 'True' },
    complete: { kstatus: 'Current', ready: 'True' },
    failed: { kstatus: 'Failed', ready: 'False', stalled: 'True' },
  };
  for (const [state, want] of Object.entries(expected)) {
    it(`Job ${state}: Ready=${want.ready}, kstatus ${want.kstatus}`, () => {
      const status = echoStatus(echo(), 'hello-abc', jobs[state], reconciledOk, clock('2026-01-01T00:00:05Z'));
      const get = (type: string) => status.conditions?.find((c) => c.type === type);
      assert.equal(get('Ready')?.status, want.ready);
      assert.equal(get('Reconciling')?.status, want.reconciling);
      assert.equal(get('Stalled')?.status, want.stalled);
      assert.equal(get('Ready')?.reason, get('Succeeded')?.reason, 'Ready says why, as the run does');
      for (const c of status.conditions ?? []) assert.equal(c.observedGeneration, 1, `${c.type}.observedGeneration`);
      assert.equal(status.observedGeneration, 1);
      assert.equal(kstatusOf({ ...echo(), status }), want.kstatus);
    });
  }

  it('a failed run names the Job failure in Stalled, so a health check fails at once with it', () => {
    const status = echoStatus(echo(), 'hello-abc', jobs.failed, reconciledOk, clock('2026-01-01T00:00:05Z'));
    const stalled = status.conditions?.find((c) => c.type === 'Stalled');
    assert.equal(stalled?.reason, 'BackoffLimitExceeded');
    assert.equal(stalled?.message, 'Job has reached the specified backoff limit');
  });

  it('a new spec reads InProgress until the operator has seen it, even over a Ready status', () => {
    const done = echoStatus(echo(), 'hello-abc', jobs.complete, reconciledOk, clock('2026-01-01T00:00:05Z'));
    assert.equal(kstatusOf({ ...echo(undefined, 2), status: done }), 'InProgress');
  });

  it('from running to printed, Ready changes once and Reconciling goes away; recomputing writes the same', () => {
    const running = echoStatus(echo(), 'hello-abc', jobs.running, reconciledOk, clock('2026-01-01T00:00:02Z'));
    const done = echoStatus(echo(running), 'hello-abc', jobs.complete, reconciledOk, clock('2026-01-01T00:00:04Z'));
    const ready = done.conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.lastTransitionTime, '2026-01-01T00:00:04Z');
    assert.equal(
      done.conditions!.some((c) => c.type === 'Reconciling'),
      false,
    );
    assert.deepEqual(echoStatus(echo(done), 'hello-abc', jobs.complete, reconciledOk, clock('2026-01-01T00:09:00Z')), done);
  });
});

describe("a ScheduledEcho's readiness", () => {
  const se = (status?: ScheduledEcho['status']): ScheduledEcho => ({
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'ScheduledEcho',
    metadata: { name: 'tick', namespace: 'ns', uid: 'u', generation: 3 },
    spec: { message: 'hi', schedule: '*/1 * * * *' },
    ...(status ? { status } : {}),
  });
  const cronJob: V1CronJob = {
    spec: { schedule: '*/1 * * * *', jobTemplate: {} },
    status: { lastScheduleTime: new Date('2026-01-01T00:01:00Z') },
  };

  it('is Ready once its CronJob is in place (Ready alone: it has no phase of its own progress)', () => {
    const status = scheduledEchoStatus(se(), 'tick', cronJob, clock('2026-01-01T00:01:05Z'));
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.observedGeneration]),
      [['Ready', 'True', 3]],
    );
    assert.equal(status.observedGeneration, 3);
    assert.equal(status.lastScheduleTime, '2026-01-01T00:01:00Z');
    assert.equal(kstatusOf({ ...se(), status }), 'Current');
    assert.deepEqual(
      scheduledEchoStatus(se(status), 'tick', cronJob, clock('2026-01-01T00:09:00Z')),
      status,
      'recomputing writes the same',
    );
  });
});

describe('before the operator has written any status', () => {
  it('the CRDs default status.observedGeneration to 0, which kstatus reads as InProgress (no status at all reads Current)', () => {
    for (const crd of CUSTOM_RESOURCES.map(buildCrd)) {
      const status = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.status!;
      assert.deepEqual(status.default, { observedGeneration: 0 }, crd.metadata.name);
      assert.equal(kstatusOf({ metadata: { generation: 1 }, status: status.default }), 'InProgress');
    }
    assert.equal(kstatusOf({ metadata: { generation: 1 } }), 'Current', 'what the default is for');
  });
});

describe('a stalled object (a refusal only a change can cure) reads Failed', () => {
  const stall = { reason: 'Invalid', message: 'CronJob.batch "tick" is invalid: spec.schedule', unwatched: false };
  it('ScheduledEcho and Echo: kstatus Failed at the generation looked at, InProgress at a newer one; the same stall twice is the same status', () => {
    const se: ScheduledEcho = {
      apiVersion: 'mmontes.io/v1alpha1',
      kind: 'ScheduledEcho',
      metadata: { name: 'tick', namespace: 'ns', uid: 'u', generation: 2 },
      spec: { message: 'hi', schedule: '61 * * * *' },
      // What an earlier generation left: Ready.
      status: scheduledEchoStatus(
        { ...se0(), metadata: { ...se0().metadata, generation: 1 } },
        'tick',
        { spec: { schedule: '61 * * * *', jobTemplate: {} } },
        clock('2026-01-01T00:00:00Z'),
      ),
    };
    const status = stalledStatus(se.status, 'Ready', stall, 2, clock('2026-01-01T00:00:05Z'));
    assert.equal(kstatusOf({ ...se, status }), 'Failed');
    assert.equal(kstatusOf({ ...se, metadata: { ...se.metadata, generation: 3 }, status }), 'InProgress');
    assert.deepEqual(stalledStatus(status, 'Ready', stall, 2, clock('2026-01-01T00:09:00Z')), status, 'recomputing changes nothing');

    const claimed = echoStatus(echo(), 'hello-abc', undefined, reconciledOk, clock('2026-01-01T00:00:01Z'));
    const stalledEcho = stalledStatus(claimed, 'Reconciled', stall, 1, clock('2026-01-01T00:00:02Z'));
    assert.equal(kstatusOf({ ...echo(), status: stalledEcho }), 'Failed');
    assert.deepEqual(
      stalledEcho.conditions!.map((c) => `${c.type}=${c.status}`),
      ['Succeeded=Unknown', 'Ready=False', 'Stalled=True', 'Reconciled=False'],
      'Reconciling gone',
    );
    // The claim of a pass that meets the stall again keeps it (see EchoReconciler.claimRun).
    const again = echoStatus(
      echo(stalledEcho),
      'hello-abc',
      undefined,
      stalledEcho.conditions!.find((c) => c.type === 'Reconciled')!,
      clock('2026-01-01T00:09:00Z'),
      stallAt(stalledEcho.conditions, 1),
    );
    assert.deepEqual(again, stalledEcho);
  });
});

function se0(): ScheduledEcho {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'ScheduledEcho',
    metadata: { name: 'tick', namespace: 'ns', uid: 'u', generation: 1 },
    spec: { message: 'hi', schedule: '1 * * * *' },
  };
}
