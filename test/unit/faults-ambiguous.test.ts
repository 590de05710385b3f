/**
 * The ambiguous class's pure parts: its schedules, the proxy's choice of which committed writes
 * to hide the outcome of, and what counts as its effect.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ambiguousSummary, type AmbiguousEffects } from '../../scripts/lab/faults/classes/ambiguous.js';
import { HiddenOutcomes } from '../../scripts/lab/faults/proxy/ambiguous.js';
import { noEffects } from '../../scripts/lab/faults/proxy/types.js';
import { hadEffect } from '../../scripts/lab/faults/runner/effects.js';
import { makeSchedules, parseReplay, scheduleFromSeed, type ProgramTraits } from '../../scripts/lab/faults/schedules.js';

const peer: ProgramTraits = { name: 'controller-runtime-naive', kinds: ['Echo'], leaderElection: true };
const JOBS = '/apis/batch/v1/namespaces/ns/jobs';

describe('ambiguous schedules', () => {
  it('are replayable, on the Echo workloads a program takes, with every answer drawn', () => {
    const s = makeSchedules({ seed: 5, classes: ['ambiguous'], programs: [peer], count: 60 });
    assert.equal(s.length, 60);
    assert.ok(s.every((x) => x.workload === 'echo-basic'));
    const first = s[0]!;
    const { id, seed } = parseReplay(`${first.id}:${first.seed}`);
    assert.deepEqual(scheduleFromSeed(id, seed, peer), first);
    const faults = s.flatMap((x) => (x.faults.class === 'ambiguous' ? [x.faults] : []));
    assert.deepEqual(new Set(faults.map((f) => f.answer)), new Set(['reset', 500, 503]));
    assert.ok(faults.every((f) => f.count >= 1 && f.count <= 3 && f.skip >= 0 && f.skip <= 2));
  });
});

describe('HiddenOutcomes', () => {
  it('hides count committed writes of the target after skip of them, and nothing else', () => {
    const h = new HiddenOutcomes();
    assert.equal(h.answerFate('POST', JOBS, 201), undefined, 'off until asked');
    h.hideNext((m, p) => m === 'POST' && p === JOBS, { skip: 1, count: 2, as: 503 });
    assert.equal(h.answerFate('POST', JOBS, 409), undefined, 'a refused write committed nothing: its outcome is not ambiguous');
    assert.equal(h.answerFate('PUT', JOBS, 200), undefined, 'not the target');
    assert.equal(h.answerFate('POST', JOBS, 201), undefined, 'skipped');
    assert.ok(h.answerFate('POST', JOBS, 201) !== undefined);
    assert.ok(h.answerFate('POST', JOBS, 201) !== undefined);
    assert.equal(h.answerFate('POST', JOBS, 201), undefined, 'count reached');
    assert.deepEqual(
      h.hidden.map((x) => [x.verb, x.status, x.as]),
      [
        ['POST', 201, 503],
        ['POST', 201, 503],
      ],
    );
  });
});

describe('ambiguous effects', () => {
  it('count a schedule whose hidden outcomes exist, and name them per verb and resource', () => {
    const e: AmbiguousEffects = {
      hidden: [
        { verb: 'POST', resource: 'jobs', name: undefined, status: 201, answer: 'reset' },
        { verb: 'PUT', resource: 'echos/status', status: 200, answer: 'reset' },
        { verb: 'POST', resource: 'jobs', status: 201, answer: 500 },
      ],
    };
    assert.equal(hadEffect('ambiguous', { ...noEffects(), ambiguous: { hidden: [] } }), false);
    assert.equal(hadEffect('ambiguous', { ...noEffects(), ambiguous: e }), true);
    assert.equal(ambiguousSummary(e), 'outcome hidden (reset/500) of 2 POST jobs, 1 PUT echos/status');
    assert.equal(ambiguousSummary(undefined), undefined);
  });
});
