/**
 * The campaign restarts a crashed replica as a kubelet restarts a container (CrashLoopBackOff),
 * and counts an exit before the replica was ready apart from the violations.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judge } from '../../scripts/lab/faults/judge/invariants.js';
import { MAX_BACKOFF_MS, restartDelayMs } from '../../scripts/lab/faults/runner/backoff.js';

describe('restartDelayMs', () => {
  it('restarts at once, then waits 10 s, doubling, capped at 5 minutes', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map(restartDelayMs), [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000]);
    assert.equal(restartDelayMs(40), MAX_BACKOFF_MS);
  });
});

describe('exits', () => {
  const state = { echos: [], jobs: [], scheduledEchos: [], cronJobs: [] };
  const exits = (startup: boolean) => [{ replica: 'r1', code: 1, signal: null, designed: false, startup }];

  it('an exit before the replica was ready is no violation; one after is unexpected-exit', () => {
    assert.deepEqual(judge({ trace: { namespace: 'n', exits: exits(true) }, records: [], state }), []);
    assert.deepEqual(
      judge({ trace: { namespace: 'n', exits: exits(false) }, records: [], state }).map((v) => v.invariant),
      ['unexpected-exit'],
    );
  });
});
