import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deriveSeed, mulberry32 } from '../../scripts/lab/faults/random.js';
import {
  FAULT_CLASSES,
  jointTraits,
  makeSchedules,
  parseReplay,
  scheduleFromSeed,
  type ProgramTraits,
  type WriteCounts,
} from '../../scripts/lab/faults/schedules.js';

const ours: ProgramTraits = {
  name: 'echoperator',
  kinds: ['Echo', 'ScheduledEcho'],
  leaderElection: true,
  lease: { durationS: 2, renewS: 1.5, retryS: 0.5 },
};
const peer: ProgramTraits = { name: 'controller-runtime-naive', kinds: ['Echo'], leaderElection: false };
const writeCounts: WriteCounts = {
  echoperator: { 'echo-basic': 12, 'scheduled-basic': 5, mixed: 17 },
  'controller-runtime-naive': { 'echo-basic': 11 },
};

describe('mulberry32 and deriveSeed', () => {
  it('give the same sequence for the same seed, another for another seed', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const first = Array.from({ length: 5 }, () => a());
    assert.deepEqual(
      Array.from({ length: 5 }, () => b()),
      first,
    );
    assert.notDeepEqual(Array.from({ length: 5 }, mulberry32(43)), first);
    for (const x of first) assert.ok(x >= 0 && x < 1);
  });

  it('derives distinct, stable seeds per name', () => {
    assert.equal(deriveSeed(1, 'stale.echo-basic.0'), deriveSeed(1, 'stale.echo-basic.0'));
    assert.notEqual(deriveSeed(1, 'stale.echo-basic.0'), deriveSeed(1, 'stale.echo-basic.1'));
    assert.notEqual(deriveSeed(1, 'stale.echo-basic.0'), deriveSeed(2, 'stale.echo-basic.0'));
  });
});

describe('makeSchedules', () => {
  const all = (count: number, programs = [ours, peer]) => makeSchedules({ seed: 7, classes: FAULT_CLASSES, programs, count, writeCounts });

  it('is a function of its arguments', () => {
    assert.deepEqual(all(300), all(300));
    assert.notDeepEqual(
      makeSchedules({ seed: 8, classes: FAULT_CLASSES, programs: [ours], count: 300, writeCounts }).map((s) => s.seed),
      all(300, [ours]).map((s) => s.seed),
    );
  });

  it('makes count schedules for ours, covering every class and every write site of every workload', () => {
    const s = all(300, [ours]);
    assert.equal(s.length, 300);
    for (const c of FAULT_CLASSES)
      assert.ok(
        s.some((x) => x.class === c),
        c,
      );
    const sites = s
      .filter((x) => x.faults.class === 'intermediate')
      .map((x) => `${x.workload}#${x.faults.class === 'intermediate' ? x.faults.killAfterWrite : 0}`);
    assert.equal(new Set(sites).size, 12 + 5 + 17);
    for (const [w, k] of Object.entries(writeCounts.echoperator!))
      for (let i = 1; i <= k; i++) assert.ok(sites.includes(`${w}#${i}`), `${w} k=${i}`);
    assert.equal(new Set(s.map((x) => x.id)).size, s.length, 'ids are unique');
  });

  it('leaves out what a program cannot take: HA classes without leader election, workloads with a kind it lacks', () => {
    const s = all(300, [peer]);
    assert.ok(s.length > 0);
    assert.ok(s.every((x) => x.class !== 'stale' && x.class !== 'partition'));
    assert.ok(s.every((x) => x.workload === 'echo-basic'));
  });

  it('gives the peer the same faults as ours for the same id', () => {
    const mine = new Map(all(300, [ours]).map((x) => [x.id, x]));
    const theirs = all(300, [peer]).filter((x) => x.class !== 'intermediate' && mine.has(x.id));
    assert.ok(theirs.length > 20);
    for (const x of theirs) assert.deepEqual({ ...x, program: 'echoperator' }, mine.get(x.id), x.id);
  });

  it('with a small count, gives every class its share and spreads intermediate over the sites', () => {
    const s = all(2 * FAULT_CLASSES.length, [ours]);
    assert.equal(s.length, 2 * FAULT_CLASSES.length);
    for (const c of FAULT_CLASSES) assert.equal(s.filter((x) => x.class === c).length, 2, c);
  });

  it('refuses intermediate without a dry run count', () => {
    assert.throws(() => makeSchedules({ seed: 1, classes: ['intermediate'], programs: [ours], count: 5 }), /dry run/);
  });
});

describe('replay', () => {
  it('rebuilds a campaign schedule from its id and seed', () => {
    for (const x of all300()) assert.deepEqual(scheduleFromSeed(x.id, x.seed, ours), x);
  });

  it('parses <id>:<seed> and refuses bad input, naming the expected form', () => {
    assert.deepEqual(parseReplay('stale.echo-basic.3:123'), { id: 'stale.echo-basic.3', seed: 123 });
    assert.throws(() => parseReplay('stale.echo-basic.3'), /<id>:<seed>/);
    assert.throws(() => parseReplay('nope.echo-basic.3:1'), /class one of/);
    assert.throws(() => parseReplay('intermediate.mixed.0:1'), /k counts from 1/);
    assert.throws(() => scheduleFromSeed('partition.echo-basic.0', 1, peer), /no leader election/);
  });

  it('lags every object watch in some stale schedules and the Echo watches alone in others', () => {
    const stale = all300().flatMap((x) => (x.faults.class === 'stale' ? [x.faults.lagging] : []));
    assert.ok(stale.includes('objects') && stale.includes('echos'), stale.join(','));
  });

  it('keeps fault parameters in range', () => {
    for (const x of all300()) {
      const f = x.faults;
      if (f.class === 'stale') assert.ok(f.relativeToResync === 'below' ? f.watchDelayMs < 2000 : f.watchDelayMs > 2000);
      if (f.class === 'stale' && f.lagging === 'echos') {
        assert.notEqual(x.workload, 'scheduled-basic', 'the Echo watches alone lag only where there are Echos');
        const takeover = (ours.lease!.durationS + ours.lease!.retryS) * 1000;
        assert.ok(f.watchDelayMs > takeover, `${f.watchDelayMs} ms outlasts the takeover (${takeover} ms)`);
      }
      if (f.class === 'partition') assert.ok(f.silenceMs > ours.lease!.durationS * 1000);
      if (f.class === 'overload') assert.ok(f.fraction >= 0.3 && f.fraction <= 0.9 && [429, 503].includes(f.status));
      if (f.class === 'restart') assert.ok(f.compact || f.restartApiserver);
    }
  });
});

function all300() {
  return makeSchedules({ seed: 99, classes: FAULT_CLASSES, programs: [ours], count: 300, writeCounts });
}

describe('matched schedules', () => {
  const advised: ProgramTraits = { name: 'controller-runtime-advised', kinds: ['Echo'], leaderElection: true, lease: ours.lease! };
  const naive: ProgramTraits = { ...advised, name: 'controller-runtime-naive' };
  const counts: WriteCounts = {
    ...writeCounts,
    'controller-runtime-naive': { 'echo-basic': 9 },
    'controller-runtime-advised': { 'echo-basic': 14 },
  };
  const matched = () =>
    makeSchedules({ seed: 3, classes: FAULT_CLASSES, programs: [ours, naive, advised], count: 60, writeCounts: counts, matched: true });

  it('gives every program the same ids, with the same faults, interleaved id by id', () => {
    const s = matched();
    const names = [ours.name, naive.name, advised.name];
    assert.equal(s.length % 3, 0);
    for (let i = 0; i < s.length; i += 3) {
      assert.deepEqual(
        s.slice(i, i + 3).map((x) => x.program),
        names,
        `position ${i}`,
      );
      const [a, b, c] = s.slice(i, i + 3);
      assert.deepEqual({ ...b, program: a!.program }, a);
      assert.deepEqual({ ...c, program: a!.program }, a);
    }
  });

  it('keeps to the workloads every program handles, and kills after every k up to the largest K', () => {
    const s = matched();
    assert.ok(
      s.every((x) => x.workload === 'echo-basic'),
      'the peers handle Echos only',
    );
    const ks = new Set(s.flatMap((x) => (x.faults.class === 'intermediate' ? [x.faults.killAfterWrite] : [])));
    assert.deepEqual(
      [...ks].sort((a, b) => a - b),
      Array.from({ length: 14 }, (_, i) => i + 1),
      "k beyond a program's own K kills nothing there: no effect, not counted",
    );
    for (const c of FAULT_CLASSES)
      assert.ok(
        s.some((x) => x.class === c),
        c,
      );
  });

  it('joins the traits: shared kinds, leader election only when all have it, the longest lease', () => {
    const { traits } = jointTraits([ours, { ...naive, leaderElection: false }], counts);
    assert.deepEqual(traits.kinds, ['Echo']);
    assert.equal(traits.leaderElection, false);
    const long = { ...advised, lease: { durationS: 15, renewS: 10, retryS: 2 } };
    assert.equal(jointTraits([ours, long], counts).traits.lease?.durationS, 15);
  });
});
