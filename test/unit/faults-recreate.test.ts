/**
 * The recreate class's pure parts: its schedules (Echo workloads only, HA only, replayable from
 * <id>:<seed>), its oracles on hand-made audit records (a Job for the deleted uid, an old Job
 * taken by the new Echo) and its effect (how long the new leader led with the old uid cached).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { desiredJob } from '../../src/controllers/echo/desired.js';
import type { AuditRecordWithObjects } from '../../scripts/lab/faults/judge/audit.js';
import type { FinalState } from '../../scripts/lab/faults/judge/types.js';
import {
  RECREATE_WATCH_DELAYS_MS,
  RECREATED_ECHO,
  recreateHadEffect,
  recreateViolations,
  staleLeadMs,
  type RecreateEffect,
} from '../../scripts/lab/faults/classes/recreate.js';
import { effectSummary, hadEffect } from '../../scripts/lab/faults/runner/effects.js';
import { noEffects } from '../../scripts/lab/faults/proxy/types.js';
import { makeSchedule, makeSchedules, scheduleFromSeed, type ProgramTraits } from '../../scripts/lab/faults/schedules.js';

const ours: ProgramTraits = {
  name: 'echoperator',
  kinds: ['Echo', 'ScheduledEcho'],
  leaderElection: true,
  lease: { durationS: 4, renewS: 3, retryS: 0.5 },
};
const NS = 'faults-recreate';
const T0 = Date.parse('2026-11-29T00:00:00Z');
const s = (seconds: number): number => T0 + seconds * 1000;

const echo = (uid: string, message: string, status?: Echo['status']): Echo => ({
  apiVersion: 'mmontes.io/v1alpha1',
  kind: 'Echo',
  metadata: { name: RECREATED_ECHO, namespace: NS, uid, generation: 1 },
  spec: { message },
  ...(status ? { status } : {}),
});
const jobCreate = (at: number, job: V1Job, replica = 'r1'): AuditRecordWithObjects => ({
  at,
  done: at + 5,
  verb: 'create',
  resource: 'jobs',
  namespace: NS,
  name: job.metadata!.name!,
  code: 201,
  replica,
  userAgent: 'test',
  requestObject: job,
});
const echoDelete = (at: number): AuditRecordWithObjects => ({
  at,
  done: at + 5,
  verb: 'delete',
  resource: 'echos',
  namespace: NS,
  name: RECREATED_ECHO,
  code: 200,
  userAgent: 'admin',
});

const oldEcho = echo('old-uid', 'm');
const newEcho = echo('new-uid', 'm');
const oldJob = desiredJob(oldEcho, 'busybox');
const newJob = desiredJob(newEcho, 'busybox');
const state = (e: Echo): FinalState => ({ echos: [e], jobs: [], scheduledEchos: [], cronJobs: [] });
const effect = (over: Partial<RecreateEffect> = {}): RecreateEffect => ({
  oldUid: 'old-uid',
  newUid: 'new-uid',
  deletedAt: s(10),
  createdAt: s(10.1),
  staleLeadMs: 0,
  inFlight: false,
  statusJobNames: [],
  ...over,
});

describe('recreate schedules', () => {
  it('play the Echo workloads only, for programs with leader election, and replay from their seed', () => {
    const all = makeSchedules({ seed: 5, classes: ['recreate'], programs: [ours], count: 20 });
    assert.equal(all.length, 20);
    assert.deepEqual([...new Set(all.map((x) => x.workload))].sort(), ['echo-basic', 'mixed']);
    for (const x of all) {
      assert.deepEqual(scheduleFromSeed(x.id, x.seed, ours), x, x.id);
      assert.equal(x.faults.class, 'recreate');
      if (x.faults.class !== 'recreate') continue;
      assert.ok((RECREATE_WATCH_DELAYS_MS as readonly number[]).includes(x.faults.watchDelayMs));
      const max = x.faults.order === 'delete-then-kill' ? 1000 : 4000;
      assert.ok(x.faults.offsetMs >= 0 && x.faults.offsetMs <= max, `${x.id}: ${x.faults.offsetMs}`);
    }
    assert.ok(all.some((x) => x.faults.class === 'recreate' && x.faults.order === 'kill-then-delete'));
    assert.ok(all.some((x) => x.faults.class === 'recreate' && x.faults.newMessage));
    assert.equal(makeSchedules({ seed: 5, classes: ['recreate'], programs: [{ ...ours, leaderElection: false }], count: 4 }).length, 0);
    assert.throws(() => makeSchedule('recreate.scheduled-basic.0', 5, ours), /acts on an Echo/);
  });
});

describe('recreate oracles', () => {
  it('find a Job created for the old uid after its delete was answered, not one created before', () => {
    const before = recreateViolations([jobCreate(s(1), oldJob, 'r0'), echoDelete(s(10))], effect(), state(newEcho));
    assert.deepEqual(before, []);
    const after = recreateViolations(
      [jobCreate(s(1), oldJob, 'r0'), echoDelete(s(10)), jobCreate(s(14), oldJob)],
      effect(),
      state(newEcho),
    );
    assert.equal(after.length, 1);
    assert.equal(after[0]!.invariant, 'job-after-delete');
    assert.match(after[0]!.detail, /old-uid.*replica r1/);
  });

  it("find the new Echo naming the old uid's Job, sampled or in the final state", () => {
    const records = [jobCreate(s(1), oldJob, 'r0'), echoDelete(s(10)), jobCreate(s(12), newJob)];
    assert.deepEqual(recreateViolations(records, effect({ statusJobNames: [newJob.metadata!.name!] }), state(newEcho)), []);
    const sampled = recreateViolations(records, effect({ statusJobNames: [oldJob.metadata!.name!] }), state(newEcho));
    assert.deepEqual(
      sampled.map((v) => v.invariant),
      ['old-job-taken'],
    );
    const final = recreateViolations(records, effect(), state(echo('new-uid', 'm', { jobName: oldJob.metadata!.name! })));
    assert.deepEqual(
      final.map((v) => v.invariant),
      ['old-job-taken'],
    );
  });
});

describe('recreate effect', () => {
  it('counts the time the new leader led after the delete with the old uid cached', () => {
    assert.equal(staleLeadMs({ deletedAt: 1000, takeoverAt: 3000, deleteSeenAt: 7000 }, 9000), 4000);
    assert.equal(
      staleLeadMs({ deletedAt: 5000, takeoverAt: 3000, deleteSeenAt: 7000 }, 9000),
      2000,
      'from the delete when it came after the takeover',
    );
    assert.equal(staleLeadMs({ deletedAt: 1000, takeoverAt: 3000 }, 9000), 6000, 'never delivered: until the end');
    assert.equal(staleLeadMs({ deletedAt: 1000, takeoverAt: 8000, deleteSeenAt: 7000 }, 9000), 0, 'delivered before the takeover');
    assert.equal(staleLeadMs({ deletedAt: 1000 }, 9000), 0, 'no takeover');
  });

  it('makes a schedule effective only when the new leader led stale or took over mid-re-create', () => {
    const e = { ...noEffects() };
    assert.equal(hadEffect('recreate', e), false);
    assert.equal(recreateHadEffect(effect()), false);
    assert.equal(hadEffect('recreate', { ...e, recreate: effect({ staleLeadMs: 2500, takeoverAt: s(12) }) }), true);
    assert.equal(hadEffect('recreate', { ...e, recreate: effect({ inFlight: true, takeoverAt: s(10.05) }) }), true);
    assert.match(
      effectSummary({ ...e, recreate: effect({ staleLeadMs: 2500, takeoverAt: s(12) }) }),
      /took over 2000 ms after the delete.*led 2500 ms/,
    );
  });
});
