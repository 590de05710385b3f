/**
 * The generated class: its sequences are functions of the seed, mix every kind of operation, are
 * valid for the program's kinds (each names an object alive at that point, no Echo ends with its
 * run's Job removed by hand), give every program the same Echo operations, and its pure oracles
 * (a refused edit, a restored CronJob) fire on a violating input and stay quiet on a clean one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { desiredCronJob } from '../../src/controllers/scheduledecho/desired.js';
import { refusedEdit, restored } from '../../scripts/lab/faults/generated/oracles.js';
import {
  describeSequence,
  ECHO_NAMES,
  FAULT_SHIFT_MS,
  generatedSeedName,
  interleave,
  SCHEDULED_NAMES,
  sequenceLines,
  type GeneratedFaults,
  type GeneratedOp,
  type RefusedOp,
} from '../../scripts/lab/faults/generated/sequence.js';
import { makeSchedules, parseReplay, scheduleFromSeed, type ProgramTraits } from '../../scripts/lab/faults/schedules.js';
import { mulberry32 } from '../../scripts/lab/faults/random.js';

const lease = { durationS: 4, renewS: 3, retryS: 0.5 };
const ours: ProgramTraits = { name: 'echoperator', kinds: ['Echo', 'ScheduledEcho'], leaderElection: true, lease };
const peer: ProgramTraits = { name: 'controller-runtime-advised', kinds: ['Echo'], leaderElection: true, lease };
const noHa: ProgramTraits = { name: 'go-echoperator', kinds: ['Echo', 'ScheduledEcho'], leaderElection: false };

const sequences = (program: ProgramTraits, count = 200, seed = 5): { id: string; seed: number; faults: GeneratedFaults }[] =>
  makeSchedules({ seed, classes: ['generated'], programs: [program], count }).map((s) => {
    assert.equal(s.faults.class, 'generated');
    return { id: s.id, seed: s.seed, faults: s.faults };
  });

const isEchoOp = (o: GeneratedOp): boolean => ECHO_NAMES.includes(o.name as (typeof ECHO_NAMES)[number]);

/** Replays a sequence on a model of what is alive; throws naming the first invalid operation. */
function checkValid(ops: readonly GeneratedOp[]): void {
  const alive = new Set<string>();
  const jobRemoved = new Set<string>();
  for (const [i, o] of ops.entries()) {
    const at = `op ${i + 1} ${o.op} ${o.name}`;
    if (o.op === 'create-echo' || o.op === 'create-scheduled') {
      assert.ok(!alive.has(o.name), `${at}: already alive`);
      alive.add(o.name);
      continue;
    }
    assert.ok(alive.has(o.name), `${at}: not alive`);
    if (o.op === 'delete-echo' || o.op === 'delete-scheduled') {
      alive.delete(o.name);
      jobRemoved.delete(o.name);
    }
    if (o.op === 'edit-echo' || o.op === 'recreate-echo') jobRemoved.delete(o.name);
    if (o.op === 'remove-finished-job' || o.op === 'label-job') assert.ok(!jobRemoved.has(o.name), `${at}: its Job is gone already`);
    if (o.op === 'remove-finished-job') jobRemoved.add(o.name);
  }
  assert.deepEqual([...jobRemoved], [], 'every Echo whose Job was removed by hand is edited or deleted after');
}

describe('generated sequences', () => {
  it('are functions of the seed: the same schedules twice, another campaign seed another, replayable from <id>:<seed>', () => {
    assert.deepEqual(sequences(ours), sequences(ours));
    assert.notDeepEqual(
      sequences(ours, 20, 6).map((s) => s.faults.ops),
      sequences(ours, 20).map((s) => s.faults.ops),
    );
    for (const s of sequences(ours, 30)) {
      const replay = parseReplay(`${s.id}:${s.seed}`);
      assert.deepEqual(scheduleFromSeed(replay.id, replay.seed, ours).faults, s.faults, s.id);
    }
  });

  it('draw every operation, with 5 to 17 operations each, and every mixed fault', () => {
    const all = sequences(ours);
    assert.equal(all.length, 200);
    const counts = new Map<string, number>();
    for (const { faults } of all) {
      assert.ok(faults.ops.length >= 5 && faults.ops.length <= 17, `${faults.ops.length} operations`);
      for (const o of faults.ops) counts.set(o.op, (counts.get(o.op) ?? 0) + 1);
      counts.set(`fault:${faults.fault?.class ?? 'none'}`, (counts.get(`fault:${faults.fault?.class ?? 'none'}`) ?? 0) + 1);
    }
    const ops: GeneratedOp['op'][] = [
      'create-echo',
      'edit-echo',
      'delete-echo',
      'recreate-echo',
      'remove-finished-job',
      'label-job',
      'refused-echo',
      'create-scheduled',
      'edit-scheduled',
      'delete-scheduled',
      'recreate-scheduled',
      'suspend-cronjob',
      'reschedule-cronjob',
      'delete-cronjob',
      'refused-scheduled',
    ];
    for (const op of ops) assert.ok((counts.get(op) ?? 0) >= 5, `${op}: ${counts.get(op) ?? 0}`);
    for (const f of ['none', 'intermediate', 'unobserved', 'overload', 'partition'])
      assert.ok((counts.get(`fault:${f}`) ?? 0) >= 10, `${f}: ${counts.get(`fault:${f}`) ?? 0}`);
    const refused = all.flatMap((s) => s.faults.ops.filter((o): o is RefusedOp => o.op.startsWith('refused-')));
    assert.deepEqual(new Set(refused.map((o) => o.field)), new Set(['spec.message', 'spec.schedule', 'spec.timeZone']));
  });

  it('are valid for the kinds: objects alive where named, no run left removed, ScheduledEchos only where the program has them', () => {
    for (const p of [ours, peer, noHa])
      for (const s of sequences(p)) {
        checkValid(s.faults.ops);
        if (!p.kinds.includes('ScheduledEcho')) assert.ok(s.faults.ops.every(isEchoOp), s.id);
        assert.ok(s.faults.ops.some((o) => o.op === 'create-echo' || o.op === 'create-scheduled'));
      }
  });

  it('give a program without ScheduledEcho exactly the Echo operations of ours, under the same number', () => {
    const mine = sequences(ours);
    const theirs = sequences(peer);
    assert.deepEqual(
      theirs.map((s) => s.id.replace('echo-basic', 'mixed')),
      mine.map((s) => s.id),
    );
    for (const [i, s] of theirs.entries()) {
      assert.equal(s.seed, mine[i]!.seed, s.id);
      assert.deepEqual(s.faults.ops, mine[i]!.faults.ops.filter(isEchoOp), s.id);
    }
    assert.equal(generatedSeedName('generated.mixed.12'), generatedSeedName('generated.echo-basic.12'));
    assert.equal(generatedSeedName('stale.mixed.12'), 'stale.mixed.12');
  });

  it('mix a failover only where leader election is on, and start timed faults within the sequence', () => {
    for (const s of sequences(noHa)) assert.notEqual(s.faults.fault?.class, 'partition', s.id);
    for (const s of sequences(ours)) {
      const f = s.faults.fault;
      if (f?.class === 'overload' || f?.class === 'partition') assert.ok(f.atMs <= 1500 + FAULT_SHIFT_MS, s.id);
      if (f?.class === 'unobserved') assert.ok(f.expireAtMs <= 2500 + FAULT_SHIFT_MS, s.id);
      if (f?.class === 'intermediate') assert.ok(f.killAfterWrite >= 1 && f.killAfterWrite <= 12, s.id);
    }
  });

  it('keeps each list in order when interleaving, and prints one line per operation and the fault', () => {
    const merged = interleave([1, 2, 3], ['a', 'b'], mulberry32(3));
    assert.deepEqual(
      merged.filter((x) => typeof x === 'number'),
      [1, 2, 3],
    );
    assert.deepEqual(
      merged.filter((x) => typeof x === 'string'),
      ['a', 'b'],
    );
    const s = sequences(ours, 1)[0]!;
    const lines = describeSequence(s.faults);
    assert.equal(lines.length, s.faults.ops.length + 1);
    assert.match(lines[0]!, /^ 1\. create-(echo|scheduled) [es]\d/);
    assert.match(lines.at(-1)!, /^fault: /);
    assert.deepEqual(
      sequenceLines(s.faults).slice(1),
      lines.map((l) => `    ${l}`),
    );
    assert.deepEqual(sequenceLines({ class: 'partition', atMs: 0, silenceMs: 1 }), []);
    assert.match(
      describeSequence({
        class: 'generated',
        ops: [{ op: 'refused-echo', name: 'e1', field: 'spec.message', value: 'x'.repeat(4097) }],
      })[0]!,
      /\(4097 chars\)/,
    );
  });

  it('uses the names it declares', () => {
    for (const s of sequences(ours, 50))
      for (const o of s.faults.ops) assert.ok([...ECHO_NAMES, ...SCHEDULED_NAMES].includes(o.name as never), o.name);
  });
});

describe('generated oracles', () => {
  const op: RefusedOp = { op: 'refused-scheduled', name: 's1', field: 'spec.timeZone', value: 'Mars/Olympus' };
  const before = { metadata: { generation: 2 }, spec: { message: 'a', schedule: '@hourly' } };
  const invalid = {
    code: 422,
    message:
      'ScheduledEcho.mmontes.io "s1" is invalid: spec.timeZone: Invalid value: "string": unknown time zone Mars/Olympus: must be a name from the IANA time zone database',
  };

  it('is quiet on a 422 naming the field that changed nothing', () => {
    assert.equal(refusedEdit(op, { accepted: false, error: invalid }, before, structuredClone(before)), undefined);
  });

  it('fires on an edit accepted, refused without naming the field, or that changed the object', () => {
    const accepted = refusedEdit(op, { accepted: true }, before, {
      metadata: { generation: 3 },
      spec: { ...before.spec, timeZone: 'Mars/Olympus' },
    });
    assert.equal(accepted?.invariant, 'edit-refused');
    assert.match(accepted.detail, /was accepted; changed the object: generation 2 -> 3/);
    const vague = refusedEdit(op, { accepted: false, error: { code: 400, message: 'bad request' } }, before, before);
    assert.match(vague!.detail, /answered 400 "bad request", not 422 naming spec.timeZone/);
    const other = refusedEdit(op, { accepted: false, error: { ...invalid, message: 'spec.schedule: Invalid value' } }, before, before);
    assert.match(other!.detail, /not 422 naming spec.timeZone/);
  });

  it('restored: one CronJob matching the spec and a status naming it, for that ScheduledEcho alone', () => {
    // Reconciled: its status names its CronJob at its generation.
    const se: ScheduledEcho = {
      metadata: { name: 's1', namespace: 'ns', uid: 'u1', generation: 1 },
      status: { cronJobName: 's1', observedGeneration: 1 },
      spec: { message: 'tick', schedule: '*/5 * * * *' },
      apiVersion: 'mmontes.io/v1alpha1',
      kind: 'ScheduledEcho',
    };
    const other: ScheduledEcho = { ...se, metadata: { ...se.metadata, name: 's2', uid: 'u2' }, status: {} };
    const cronJob = desiredCronJob(se, 'busybox:1.37');
    const state = { echos: [], jobs: [], scheduledEchos: [se, other], cronJobs: [cronJob] };
    assert.equal(restored(state, 's1'), true, 'the other, unreconciled ScheduledEcho does not count');
    assert.equal(restored(state, 's2'), false);
    const suspended = { ...cronJob, spec: { ...cronJob.spec, suspend: true } };
    assert.equal(restored({ ...state, cronJobs: [suspended] }, 's1'), false);
    assert.equal(restored({ ...state, cronJobs: [] }, 's1'), false);
  });
});
