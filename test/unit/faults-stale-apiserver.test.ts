/**
 * The stale-apiserver class's pure parts: its schedules (an HA class on every workload, a hyphen
 * in its id, replayable from <id>:<seed>), which requests go to the lagging server, how two
 * listings are compared, and its effect.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  differing,
  STALE_APISERVER_LAGS_MS,
  staleApiserverHadEffect,
  standbyUpstream,
  type StaleApiserverEffect,
} from '../../scripts/lab/faults/classes/stale-apiserver.js';
import { noEffects } from '../../scripts/lab/faults/proxy/types.js';
import { effectSummary, hadEffect } from '../../scripts/lab/faults/runner/effects.js';
import { makeSchedules, parseReplay, scheduleFromSeed, type ProgramTraits } from '../../scripts/lab/faults/schedules.js';

const ours: ProgramTraits = {
  name: 'echoperator',
  kinds: ['Echo', 'ScheduledEcho'],
  leaderElection: true,
  lease: { durationS: 4, renewS: 3, retryS: 0.5 },
};

describe('stale-apiserver schedules', () => {
  it('play every workload of a program with leader election, and replay from <id>:<seed>', () => {
    const all = makeSchedules({ seed: 9, classes: ['stale-apiserver'], programs: [ours], count: 9 });
    assert.deepEqual([...new Set(all.map((x) => x.workload))].sort(), ['echo-basic', 'mixed', 'scheduled-basic']);
    for (const x of all) {
      assert.match(x.id, /^stale-apiserver\./);
      assert.deepEqual(parseReplay(`${x.id}:${x.seed}`), { id: x.id, seed: x.seed });
      assert.deepEqual(scheduleFromSeed(x.id, x.seed, ours), x);
      if (x.faults.class !== 'stale-apiserver') assert.fail(x.id);
      assert.ok((STALE_APISERVER_LAGS_MS[x.faults.reads] as readonly number[]).includes(x.faults.lagMs), x.id);
      assert.ok(x.faults.killLeaderAtMs >= 500 && x.faults.killLeaderAtMs <= 2500);
    }
    assert.deepEqual(new Set(all.map((x) => (x.faults.class === 'stale-apiserver' ? x.faults.reads : ''))), new Set(['all', 'echos']));
    assert.equal(
      makeSchedules({ seed: 9, classes: ['stale-apiserver'], programs: [{ ...ours, leaderElection: false }], count: 3 }).length,
      0,
    );
  });
});

describe('stale-apiserver upstream', () => {
  it('sends the standby to the second API server for everything, or for its Echo requests alone', () => {
    const f = { class: 'stale-apiserver', lagMs: 1500, killLeaderAtMs: 500 } as const;
    assert.deepEqual(standbyUpstream({ ...f, reads: 'all' }, { kubeconfig: 'k2' }), { kubeconfig: 'k2' });
    const only = standbyUpstream({ ...f, reads: 'echos' }, { kubeconfig: 'k2' }).only!;
    for (const p of ['/apis/mmontes.io/v1alpha1/namespaces/ns/echos', '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/e1/status'])
      assert.ok(only.test(p), p);
    for (const p of ['/apis/batch/v1/namespaces/ns/jobs', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/echoperator'])
      assert.ok(!only.test(p), p);
  });
});

describe('stale-apiserver effect', () => {
  it('counts objects missing on either side or at another resourceVersion', () => {
    const current = new Map([
      ['a', '10'],
      ['b', '12'],
      ['c', '13'],
    ]);
    assert.equal(differing(current, new Map(current)), 0);
    assert.equal(
      differing(
        current,
        new Map([
          ['a', '10'],
          ['b', '11'],
          ['gone', '5'],
        ]),
      ),
      3,
      'b older, c not yet there, gone still there',
    );
  });

  it('makes a schedule effective only when the second API server showed the standby something old', () => {
    const e = (objectsDiffering: number): StaleApiserverEffect => ({
      behindRevisions: objectsDiffering ? 7 : 0,
      objectsDiffering,
      samples: 4,
    });
    assert.equal(staleApiserverHadEffect(undefined), false);
    assert.equal(hadEffect('stale-apiserver', { ...noEffects(), staleApiserver: e(0) }), false);
    assert.equal(hadEffect('stale-apiserver', { ...noEffects(), staleApiserver: e(2) }), true);
    assert.match(effectSummary({ ...noEffects(), staleApiserver: e(2) }), /up to 7 revision\(s\) and 2 object\(s\) behind/);
  });
});
