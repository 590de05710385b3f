/**
 * The ttl class's pure parts: its schedules (Echo workloads, replayable), the status rule for an
 * Echo whose finished Job was removed (judge/removed-job.ts, through the judge), its effect, and
 * the proxy's Job-only merge that hides a completion behind the Job's DELETED event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { desiredJob } from '../../src/controllers/echo/desired.js';
import { completedJobOf, EXPIRING_ECHO, ttlHadEffect, type TtlEffect } from '../../scripts/lab/faults/classes/ttl.js';
import { judge, type FinalState } from '../../scripts/lab/faults/judge/invariants.js';
import type { AuditRecordWithObjects } from '../../scripts/lab/faults/judge/audit.js';
import { WatchFaults, WatchStream } from '../../scripts/lab/faults/proxy/watch.js';
import { effectSummary, hadEffect } from '../../scripts/lab/faults/runner/effects.js';
import { noEffects } from '../../scripts/lab/faults/proxy/types.js';
import { makeSchedules, scheduleFromSeed, type ProgramTraits } from '../../scripts/lab/faults/schedules.js';

const NS = 'faults-ttl';
const peer: ProgramTraits = { name: 'controller-runtime-naive', kinds: ['Echo'], leaderElection: true };
const echo = (status?: Echo['status']): Echo => ({
  apiVersion: 'mmontes.io/v1alpha1',
  kind: 'Echo',
  metadata: { name: EXPIRING_ECHO, namespace: NS, uid: 'uid-1', generation: 1 },
  spec: { message: 'm' },
  ...(status ? { status } : {}),
});
const job = desiredJob(echo(), 'busybox');
const name = job.metadata!.name!;
const removed = { name, ownerUid: 'uid-1', message: 'm' };
const createdAt = Date.parse('2026-11-29T00:00:00Z');
const create = (replica: string, at: number): AuditRecordWithObjects => ({
  at,
  done: at + 5,
  verb: 'create',
  resource: 'jobs',
  namespace: NS,
  name,
  code: 201,
  replica,
  userAgent: 'test',
  requestObject: job,
});
const final = (e: Echo, jobs: V1Job[] = []): FinalState => ({ echos: [e], jobs, scheduledEchos: [], cronJobs: [] });
const run = (e: Echo, records: AuditRecordWithObjects[] = [create('r0', createdAt)], jobs: V1Job[] = [], removedJobs = [removed]) =>
  judge({ trace: { namespace: NS, exits: [], removedJobs }, records, state: final(e, jobs) }).map((v) => v.invariant);

describe('ttl schedules', () => {
  it('play the Echo workloads, a merge window outlasting the run or a delay, and replay from their seed', () => {
    const all = makeSchedules({ seed: 3, classes: ['ttl'], programs: [peer], count: 12 });
    assert.equal(all.length, 12);
    assert.deepEqual([...new Set(all.map((x) => x.workload))], ['echo-basic']);
    for (const x of all) {
      assert.deepEqual(scheduleFromSeed(x.id, x.seed, peer), x);
      if (x.faults.class !== 'ttl') assert.fail(x.id);
      const [lo, hi] = x.faults.hold === 'merge' ? [6000, 9000] : [1500, 4000];
      assert.ok(x.faults.holdMs >= lo && x.faults.holdMs <= hi && x.faults.removeAfterMs <= 300, x.id);
    }
    assert.deepEqual(new Set(all.map((x) => (x.faults.class === 'ttl' ? x.faults.hold : ''))), new Set(['merge', 'delay']));
  });
});

describe('an Echo whose finished Job was removed', () => {
  const done = (phase: 'Succeeded' | 'Failed' | 'Pending', jobName = name) => echo({ phase, jobName, observedGeneration: 1 });

  it('is right with a finished phase naming the removed Job, and no second run', () => {
    assert.deepEqual(run(done('Succeeded')), []);
    assert.deepEqual(run(done('Failed')), [], 'a program that could not see the outcome may say Failed');
  });

  it('is stuck while its status says Pending for a Job that no longer exists', () => {
    assert.deepEqual(run(done('Pending')), ['status-converges']);
    assert.deepEqual(run(echo()), ['status-converges']);
  });

  it('shows a re-run as two Jobs of one generation', () => {
    const again = { ...job, status: { conditions: [{ type: 'Complete', status: 'True' }] } } as V1Job;
    const v = run(done('Succeeded'), [create('r0', createdAt), create('r0', createdAt + 3000)], [again]);
    assert.deepEqual(v, ['one-job-per-generation']);
  });

  it('is judged by the usual rule when the harness removed nothing', () => {
    assert.deepEqual(run(done('Succeeded'), undefined, [], []), ['job-when-done']);
  });
});

describe('ttl effect', () => {
  const e = (goneBeforeRecorded: boolean): TtlEffect => ({
    ...removed,
    hold: 'merge',
    goneBeforeRecorded,
    statusThen: 'jobName=x phase=Pending',
  });

  it('counts a schedule whose Job was gone before the status recorded its end', () => {
    assert.equal(ttlHadEffect(undefined), false);
    assert.equal(hadEffect('ttl', { ...noEffects(), ttl: e(false) }), false);
    assert.equal(hadEffect('ttl', { ...noEffects(), ttl: e(true) }), true);
    assert.match(effectSummary({ ...noEffects(), ttl: e(true) }), /removed once Complete \(merge\), before the status recorded it/);
  });

  it("finds the Echo's Job once the server shows it Complete", () => {
    assert.equal(completedJobOf([job], 'uid-1', 'm'), undefined);
    const complete = { ...job, status: { conditions: [{ type: 'Complete', status: 'True' }] } } as V1Job;
    assert.equal(completedJobOf([complete], 'uid-1', 'm'), complete);
    assert.equal(completedJobOf([complete], 'uid-2', 'm'), undefined);
  });
});

describe('the proxy hiding a completion', () => {
  it('merges the Job watch alone: its DELETED supersedes the held MODIFIED, and every passed event is heard', async () => {
    const line = (type: string, kind: string, rv: string) =>
      JSON.stringify({ type, object: { kind, metadata: { name: 'j', namespace: NS, uid: 'u', resourceVersion: rv } } });
    const faults = new WatchFaults();
    faults.mergeMs = 60_000;
    faults.mergeMatch = /\/jobs$/;
    const heard: string[] = [];
    faults.delivered = (path, ev) => heard.push(`${path} ${ev.type} ${ev.object.metadata?.resourceVersion}`);
    const written: string[] = [];
    const stream = (path: string) => new WatchStream(path, faults, { write: (l) => written.push(l), end: () => undefined });
    const jobs = stream('/apis/batch/v1/namespaces/ns/jobs');
    const echos = stream('/apis/mmontes.io/v1alpha1/namespaces/ns/echos');
    jobs.receive(Buffer.from(`${line('ADDED', 'Job', '1')}\n${line('MODIFIED', 'Job', '2')}\n${line('MODIFIED', 'Job', '3')}\n`));
    echos.receive(Buffer.from(`${line('MODIFIED', 'Echo', '4')}\n`));
    jobs.receive(Buffer.from(`${line('DELETED', 'Job', '5')}\n`));
    jobs.stop();
    echos.stop();
    assert.deepEqual(heard, [
      '/apis/batch/v1/namespaces/ns/jobs ADDED 1',
      '/apis/mmontes.io/v1alpha1/namespaces/ns/echos MODIFIED 4',
      '/apis/batch/v1/namespaces/ns/jobs DELETED 5',
    ]);
    assert.equal(written.length, 3);
    assert.equal(faults.effects.eventsMerged, 2);
  });
});
