/**
 * What a schedule's faults did, and what the report makes of it: the 95 % upper bound printed
 * beside each rate, which schedules count (only those whose faults reached the program), the
 * write a kill followed, and the runner's notes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { binomialCdf, boundText, upperBound } from '../../scripts/lab/faults/bound.js';
import { campaignMarkdown, effective, type CampaignResult, type RunRecord } from '../../scripts/lab/faults/report.js';
import { effectSummary, hadEffect, killedAfter, sumEffects, type ScheduleEffects } from '../../scripts/lab/faults/runner/effects.js';
import { noEffects } from '../../scripts/lab/faults/proxy/types.js';
import type { Schedule } from '../../scripts/lab/faults/schedules.js';

describe('upperBound', () => {
  it('is 1 - 0.05^(1/n) for 0 of n, about 3/n', () => {
    assert.ok(Math.abs(upperBound(0, 16) - 0.1707) < 1e-4, 'the issue: 0 of 16 bounds the rate at about 17 %');
    assert.ok(Math.abs(upperBound(0, 100) - 0.0295) < 1e-4);
    assert.ok(upperBound(0, 99) <= 0.03, '99 effective schedules without a violation bound the rate at 3 % or less');
    assert.ok(upperBound(0, 98) > 0.03, 'and 98 do not');
  });

  it('is Clopper-Pearson for k of n: the p at which k or fewer failures have probability 5 %', () => {
    for (const [k, n] of [
      [1, 10],
      [3, 50],
      [57, 300],
    ] as const) {
      const p = upperBound(k, n);
      assert.ok(Math.abs(binomialCdf(k, n, p) - 0.05) < 1e-6, `${k} of ${n}: cdf at the bound ${binomialCdf(k, n, p)}`);
      assert.ok(p > k / n);
    }
    assert.ok(Math.abs(upperBound(1, 10) - 0.3942) < 1e-4, 'the tabled value for 1 of 10');
    assert.equal(upperBound(4, 4), 1);
  });

  it('refuses what is not a count, and prints a dash without trials', () => {
    assert.throws(() => upperBound(3, 2), /0 <= k <= n/);
    assert.throws(() => upperBound(0, 0), /n >= 1/);
    assert.equal(boundText(0, 0), '-');
    assert.equal(boundText(0, 16), '≤ 17.1 %');
  });
});

describe('fault effects', () => {
  const e = (over: Partial<ScheduleEffects>): ScheduleEffects => ({ ...noEffects(), ...over });

  it('names the write a kill followed and the reconciler step that makes it', () => {
    const k = killedAfter({ seq: 3, verb: 'PATCH', path: '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/e1/status', status: 200, at: 0 });
    assert.deepEqual(k, {
      seq: 3,
      verb: 'PATCH',
      resource: 'echos/status',
      name: 'e1',
      status: 200,
      site: "the Echo's status write (claim or record of a run)",
    });
    const j = killedAfter({ seq: 4, verb: 'POST', path: '/apis/batch/v1/namespaces/ns/jobs', status: 201, at: 0 });
    assert.equal(j.resource, 'jobs');
    assert.equal(j.site, "the run's Job create");
    assert.equal(j.name, undefined);
  });

  it('counts a schedule only when its faults reached the program, per class', () => {
    assert.equal(hadEffect('intermediate', e({})), false, 'k beyond the writes the program made: no kill');
    assert.equal(
      hadEffect('intermediate', e({ killedAfter: killedAfter({ seq: 1, verb: 'POST', path: '/x', status: 201, at: 0 }) })),
      true,
    );
    assert.equal(
      hadEffect('stale', e({ takeover: { behindEvents: 0, behindMs: 0, delayedWhileLeading: 0 } })),
      false,
      'took over with a current view',
    );
    assert.equal(hadEffect('stale', e({ eventsDelayed: 9 })), false, 'events delayed but no takeover');
    assert.equal(hadEffect('stale', e({ takeover: { behindEvents: 2, behindMs: 700, delayedWhileLeading: 0 } })), true);
    assert.equal(hadEffect('unobserved', e({})), false);
    assert.equal(hadEffect('unobserved', e({ eventsMerged: 1 })), true);
    assert.equal(hadEffect('restart', e({ eventsDelayed: 3 })), false);
    assert.equal(hadEffect('restart', e({ expiredByServer: 1 })), true);
    assert.equal(hadEffect('restart', e({ restartedUnder: ['r0'] })), true);
    assert.equal(hadEffect('restart', e({ restartedUnder: [], watchesReset: 5 })), false, 'a compaction whose resumed watches met no 410');
    assert.equal(hadEffect('partition', e({ held: 4 })), true);
    assert.equal(hadEffect('overload', e({ refused: 0, held: 2 })), false);
  });

  it('sums the proxies and says what happened in one line', () => {
    const sum = sumEffects([e({ eventsDropped: 1, cut: 2 }), e({ eventsDropped: 2 })]);
    assert.equal(sum.eventsDropped, 3);
    assert.equal(sum.cut, 2);
    assert.equal(effectSummary(e({})), 'no effect');
    assert.match(
      effectSummary({ ...sum, takeover: { behindEvents: 2, behindMs: 700, delayedWhileLeading: 5 } }),
      /3 events dropped, 2 cut by the server, took over 2 event\(s\) behind \(oldest 700 ms\), 5 delayed while leading/,
    );
  });
});

describe('campaignMarkdown', () => {
  const schedule = (id: string, program: string): Schedule => ({
    id,
    seed: 7,
    program,
    class: 'overload',
    workload: 'echo-basic',
    faults: { class: 'overload', status: 429, retryAfterS: 1, atMs: 0, ms: 1000, fraction: 0.5 },
  });
  const run = (id: string, refused: number, violations: number, notes: string[] = []): RunRecord => ({
    schedule: schedule(id, 'echoperator'),
    violations: Array.from({ length: violations }, () => ({ invariant: 'job-when-done' as const, detail: 'x' })),
    durationMs: 1000,
    notes,
    effects: { ...noEffects(), refused },
  });
  const result = (runs: RunRecord[]): CampaignResult => ({
    seed: 1,
    command: 'c',
    programs: ['echoperator'],
    classes: ['overload'],
    notApplicable: [],
    runs,
    mutants: [],
    date: 'd',
    machine: 'm',
    loadStart: 'l',
    loadEnd: 'l',
    durationMs: 1,
  });

  it("leaves schedules without effect out of the rate, prints its bound, the notes and every schedule's effects", () => {
    const runs = [
      run('overload.echo-basic.0', 3, 0),
      run('overload.echo-basic.1', 0, 1, ['fault skipped: no running leader to kill']),
      run('overload.echo-basic.2', 5, 1),
    ];
    assert.deepEqual(runs.map(effective), [true, false, true]);
    const md = campaignMarkdown(result(runs), undefined);
    assert.match(md, /\| overload \| 2 \(of 3\) \| \*\*1\*\* \| ≤ 97\.5 % \|/);
    assert.match(md, /fault skipped: no running leader to kill/);
    assert.match(md, /Violations in schedules whose faults had no effect .*overload\.echo-basic\.1/);
    assert.match(md, /`overload\.echo-basic\.1` seed 7: no effect \(\*\*no effect\*\*: not counted\)/);
    assert.match(md, /`overload\.echo-basic\.0` seed 7: 3 requests refused; ok/);
  });
});
