/**
 * The refusal class's pure parts: its schedules, the policy, binding and quota it puts in force,
 * which of a replica's writes count as refusals, and what counts as its effect.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  namesRefusal,
  REFUSAL_MESSAGE,
  refusalSummary,
  refusalViolations,
  refusedCreates,
} from '../../scripts/lab/faults/classes/refusal.js';
import { noEffects } from '../../scripts/lab/faults/proxy/types.js';
import { hadEffect } from '../../scripts/lab/faults/runner/effects.js';
import { refusalPolicy, refusalQuota } from '../../scripts/lab/faults/runner/refusal.js';
import { makeSchedules, parseReplay, scheduleFromSeed, type ProgramTraits } from '../../scripts/lab/faults/schedules.js';

const ours: ProgramTraits = { name: 'echoperator', kinds: ['Echo', 'ScheduledEcho'], leaderElection: true };

describe('refusal schedules', () => {
  it('are replayable, on the workloads with Echos, by each refuser, lifted well within the gates', () => {
    const s = makeSchedules({ seed: 2, classes: ['refusal'], programs: [ours], count: 60 });
    assert.deepEqual([...new Set(s.map((x) => x.workload))].sort(), ['echo-basic', 'mixed']);
    const first = s[0]!;
    const { id, seed } = parseReplay(`${first.id}:${first.seed}`);
    assert.deepEqual(scheduleFromSeed(id, seed, ours), first);
    const faults = s.flatMap((x) => (x.faults.class === 'refusal' ? [x.faults] : []));
    assert.deepEqual(new Set(faults.map((f) => f.by)), new Set(['policy', 'quota', 'both']));
    assert.ok(
      faults.every((f) => f.windowMs >= 2000 && f.windowMs <= 8000),
      'lifted well before a 20 s gate gives up',
    );
  });
});

describe('the refusal in force', () => {
  it('is a Deny policy on Job creates bound to the one namespace, and a quota of zero Jobs', () => {
    const { policy, binding } = refusalPolicy('faults-refusal-echo-basic-0') as {
      policy: { kind: string; spec: { matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] } } };
      binding: { spec: { policyName: string; validationActions: string[]; matchResources: unknown } };
    };
    assert.equal(policy.kind, 'ValidatingAdmissionPolicy');
    assert.deepEqual(policy.spec.matchConstraints.resourceRules[0], {
      apiGroups: ['batch'],
      apiVersions: ['*'],
      operations: ['CREATE'],
      resources: ['jobs'],
    });
    assert.deepEqual(binding.spec.validationActions, ['Deny']);
    assert.deepEqual(binding.spec.matchResources, {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'faults-refusal-echo-basic-0' } },
    });
    assert.deepEqual((refusalQuota() as { spec: unknown }).spec, { hard: { 'count/jobs.batch': '0' } });
  });
});

describe('refusal effects', () => {
  it('count the Job creates the server refused, 403 and 422, and nothing else', () => {
    const jobs = '/apis/batch/v1/namespaces/ns/jobs';
    const refused = refusedCreates([
      { verb: 'POST', path: jobs, status: 403 },
      { verb: 'POST', path: jobs, status: 422 },
      { verb: 'POST', path: jobs, status: 422 },
      { verb: 'POST', path: jobs, status: 201 },
      { verb: 'POST', path: jobs, status: 409 },
      { verb: 'PUT', path: '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/e1/status', status: 422 },
    ]);
    assert.deepEqual(refused, { 403: 1, 422: 2 });
    assert.equal(hadEffect('refusal', { ...noEffects(), refusal: { inForceMs: 3000, refused: {} } }), false, 'in force, nothing refused');
    assert.equal(hadEffect('refusal', { ...noEffects(), refusal: { inForceMs: 3000, refused } }), true);
    assert.equal(refusalSummary({ inForceMs: 3000, refused }), 'Job creates refused for 3000 ms: 1 x 403, 2 x 422');
  });
});

describe('a status stuck on a lifted refusal', () => {
  it("is told by the server's words for the policy and the quota, and is a status-converges violation", () => {
    assert.ok(namesRefusal(`admission webhook: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: ${REFUSAL_MESSAGE}`));
    assert.ok(
      namesRefusal(
        'jobs.batch "e1-abc" is forbidden: exceeded quota: faults-refusal, requested: count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0',
      ),
    );
    assert.ok(!namesRefusal('Job e1-abc printed the message') && !namesRefusal(undefined));
    assert.deepEqual(refusalViolations({ inForceMs: 1, refused: { 422: 1 }, reportedBy: ['e1', 'e2'] }), [], 'reported, then cleared');
    assert.deepEqual(
      refusalViolations({ inForceMs: 1, refused: { 422: 1 }, reportedBy: ['e1', 'e2'], stuck: ['e2'] }).map((v) => [
        v.invariant,
        v.detail.slice(0, 9),
      ]),
      [['status-converges', 'Echo e2: ']],
    );
    assert.match(refusalSummary({ inForceMs: 3000, refused: { 422: 2 }, reportedBy: ['e1'] })!, /reported in the status of e1$/);
  });
});
