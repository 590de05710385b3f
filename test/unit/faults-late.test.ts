/**
 * The late class's pure parts: its schedules (replayable, on the workloads with Echos, both modes
 * drawn), what counts as its effect, the judge's exception for writes a proxy delivered late, and
 * the proxy's slow-answer decision.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deliveredLate, lateHadEffect, lateSummary, type LateEffects } from '../../scripts/lab/faults/classes/late.js';
import { isTargetWrite, writeResource } from '../../scripts/lab/faults/classes/targets.js';
import { writesOutsideTerm } from '../../scripts/lab/faults/judge/terms.js';
import type { AuditRecord } from '../../scripts/lab/faults/judge/audit.js';
import { LateWrites } from '../../scripts/lab/faults/proxy/late.js';
import type { Upstream } from '../../scripts/lab/faults/proxy/upstream.js';
import { effectSummary, hadEffect } from '../../scripts/lab/faults/runner/effects.js';
import { noEffects } from '../../scripts/lab/faults/proxy/types.js';
import { makeSchedules, parseReplay, scheduleFromSeed, type ProgramTraits } from '../../scripts/lab/faults/schedules.js';

const ours: ProgramTraits = {
  name: 'echoperator',
  kinds: ['Echo', 'ScheduledEcho'],
  leaderElection: true,
  lease: { durationS: 4, renewS: 3, retryS: 0.5 },
};
const noElection: ProgramTraits = { name: 'go-echoperator', kinds: ['Echo', 'ScheduledEcho'], leaderElection: false };

describe('late schedules', () => {
  it('are replayable from <id>:<seed> and a function of the seed', () => {
    const [s] = makeSchedules({ seed: 3, classes: ['late'], programs: [ours], count: 1 });
    assert.ok(s);
    const { id, seed } = parseReplay(`${s.id}:${s.seed}`);
    assert.deepEqual(scheduleFromSeed(id, seed, ours), s);
    const others = [1, 2, 3, 4].map((d) => JSON.stringify(scheduleFromSeed(id, seed + d, ours).faults));
    assert.ok(
      others.some((f) => f !== JSON.stringify(s.faults)),
      'another seed, other faults',
    );
  });

  it('use the workloads with Echos only, and need leader election', () => {
    const s = makeSchedules({ seed: 1, classes: ['late'], programs: [ours], count: 40 });
    assert.equal(s.length, 40);
    assert.deepEqual([...new Set(s.map((x) => x.workload))].sort(), ['echo-basic', 'mixed']);
    assert.throws(() => scheduleFromSeed('late.scheduled-basic.0', 1, ours), /aims at Echo runs/);
    assert.deepEqual(makeSchedules({ seed: 1, classes: ['late'], programs: [noElection], count: 10 }), []);
  });

  it('draw both modes, old-term with every ending and target, within their bounds', () => {
    const faults = makeSchedules({ seed: 1, classes: ['late'], programs: [ours], count: 200 }).map((x) => x.faults);
    const oldTerm = faults.flatMap((f) => (f.class === 'late' && f.mode === 'old-term' ? [f] : []));
    const slow = faults.flatMap((f) => (f.class === 'late' && f.mode === 'slow-answer' ? [f] : []));
    assert.ok(oldTerm.length > 50 && slow.length > 50, `${oldTerm.length} old-term, ${slow.length} slow-answer`);
    assert.deepEqual(new Set(oldTerm.map((f) => f.ending)), new Set(['killed', 'partitioned']));
    assert.deepEqual(new Set(oldTerm.map((f) => f.target)), new Set(['job-create', 'status', 'any']));
    assert.deepEqual(new Set(slow.map((f) => f.target)), new Set(['writes', 'lease']));
    for (const f of oldTerm) assert.ok(f.deliverAfterTakeoverMs >= 0 && f.deliverAfterTakeoverMs <= 3000 && f.skip <= 1);
    for (const f of slow) assert.ok(f.holdMs >= 500 && f.holdMs <= 5000 && f.windowMs >= 1000);
    for (const f of slow) if (f.target === 'writes') assert.ok(f.atMs <= 300, 'a window for writes opens while the first runs are made');
  });
});

describe('write targets', () => {
  it("pick the run's Job create, the Echo's status write, or any counted write", () => {
    const jobs = '/apis/batch/v1/namespaces/ns/jobs';
    const status = '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/e1/status';
    const lease = '/apis/coordination.k8s.io/v1/namespaces/ns/leases/echoperator';
    assert.ok(isTargetWrite('job-create', 'POST', jobs));
    assert.ok(!isTargetWrite('job-create', 'DELETE', `${jobs}/j`));
    assert.ok(isTargetWrite('status', 'PATCH', status) && isTargetWrite('status', 'PUT', status));
    assert.ok(!isTargetWrite('status', 'GET', status));
    assert.ok(isTargetWrite('any', 'DELETE', `${jobs}/j`));
    assert.ok(!isTargetWrite('any', 'PUT', lease), 'a Lease write is never a target');
    assert.deepEqual(writeResource(status), { resource: 'echos/status', name: 'e1' });
  });
});

describe('late effects', () => {
  const held: LateEffects = {
    writes: [
      { replica: 'r0', held: 'request', verb: 'POST', resource: 'jobs', status: 409, heldMs: 6200, auditID: 'a-1', afterTermEnded: true },
    ],
  };
  it('count a schedule only when a write or an answer was held', () => {
    assert.equal(hadEffect('late', noEffects()), false);
    assert.equal(hadEffect('late', { ...noEffects(), late: { writes: [] } }), false, 'armed, but nothing held');
    assert.equal(hadEffect('late', { ...noEffects(), late: held }), true);
    assert.equal(lateHadEffect(undefined), false);
  });

  it('say what was held, how long, and whether after the term ended', () => {
    const answers: LateEffects = {
      writes: [
        { replica: 'r0', held: 'answer', verb: 'PUT', resource: 'leases', status: 200, heldMs: 3000 },
        { replica: 'r1', held: 'answer', verb: 'PUT', resource: 'leases', status: 200, heldMs: 3000 },
      ],
    };
    assert.equal(lateSummary(held), "r0's POST jobs delivered 6200 ms late -> 409, after its term ended");
    assert.equal(lateSummary(answers), '2 answer(s) held up to 3000 ms (2 PUT leases)');
    assert.match(effectSummary({ ...noEffects(), late: held }), /delivered 6200 ms late/);
    assert.deepEqual(deliveredLate(held), ['a-1']);
    assert.deepEqual(deliveredLate(answers), []);
  });
});

describe('write-outside-term and late deliveries', () => {
  const NS = 'faults-late';
  const lease = { namespace: NS, name: 'echoperator', durationS: 4 };
  const rec = (at: number, r: Partial<AuditRecord> & Pick<AuditRecord, 'verb' | 'resource'>): AuditRecord => ({
    at,
    done: at + 5,
    code: 200,
    namespace: NS,
    userAgent: 'test',
    ...r,
  });
  const records = [
    rec(0, { verb: 'update', resource: 'leases', name: 'echoperator', replica: 'r0' }),
    rec(5000, { verb: 'update', resource: 'leases', name: 'echoperator', replica: 'r1' }),
    rec(6000, { verb: 'create', resource: 'jobs', name: 'e1-x', code: 409, replica: 'r0', auditID: 'late-1' }),
  ];
  it('excuses the write the proxy delivered late, by its audit ID, and no other', () => {
    assert.equal(writesOutsideTerm(records, lease, NS).length, 1, 'without the exception it is outside r0 term');
    assert.deepEqual(writesOutsideTerm(records, lease, NS, ['late-1']), []);
    assert.equal(writesOutsideTerm(records, lease, NS, ['another']).length, 1);
  });
});

describe('LateWrites slow answers', () => {
  const upstream: Upstream = { request: () => assert.fail('no request in this test'), close: () => undefined };
  it('hold the selected answers for the window, and record them', () => {
    const late = new LateWrites(upstream);
    assert.equal(late.answerFate('PUT', '/x', 200), undefined, 'off until asked');
    late.slowDown((m) => m === 'PUT', 1500, 60_000);
    assert.deepEqual(late.answerFate('PUT', '/x', 200), { holdMs: 1500 });
    assert.equal(late.answerFate('GET', '/x', 200), undefined);
    assert.deepEqual(late.slowAnswers, [{ verb: 'PUT', path: '/x', status: 200, heldMs: 1500 }]);
    late.slowDown(() => true, 1500, 0);
    assert.equal(late.answerFate('PUT', '/x', 200), undefined, 'a window of 0 ends it');
    late.close();
  });
});
