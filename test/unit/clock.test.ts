import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LONGEST_TIMER_MS, realClock } from '../../src/runtime/clock.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';

describe('realClock timers', () => {
  it('a timer longer than 2^31-1 ms does not fire at once (Node would treat it as 1 ms)', async () => {
    let fired = 0;
    const timers = [LONGEST_TIMER_MS + 1, 2 ** 32, 3_000_000 * 1000].map((ms) => realClock.setTimer(ms, () => fired++));
    // Node cuts an overflowing delay to 1 ms: a 1 ms timer set after them fires after any such one.
    await sleep(1);
    for (const t of timers) t.cancel();
    assert.equal(fired, 0);
  });

  it('a sleep longer than 2^31-1 ms is still cut short by its signal', async () => {
    const stop = new AbortController();
    const slept = realClock.sleep(2 ** 31, stop.signal);
    stop.abort(new Error('stop'));
    await assert.rejects(slept, /stop/);
  });
});

describe('FakeClock.runUntil', () => {
  it('fires each timer at its deadline, in order, with the work it wakes settled before the next is looked up', async () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    // A chain that needs a macrotask hop before it sets its follow-up timer, as I/O would.
    clock.setTimer(
      300,
      () => void new Promise((r) => setImmediate(r)).then(() => clock.setTimer(100, () => fired.push(`b@${clock.now()}`))),
    );
    clock.setTimer(100, () => fired.push(`a@${clock.now()}`));
    clock.setTimer(500, () => fired.push(`late@${clock.now()}`)).cancel();
    clock.setTimer(1_000, () => fired.push(`c@${clock.now()}`));
    await clock.runUntil(999, () => new Promise((r) => setImmediate(r)));
    assert.deepEqual(fired, ['a@100', 'b@400']);
    assert.equal(clock.now(), 999, 'ends at the target');
    assert.equal(clock.nextTimerAt(), 1_000);
    assert.equal(await clock.advanceToNextTimer(999), false, 'a timer after the limit does not fire');
    assert.equal(await clock.advanceToNextTimer(), true);
    assert.deepEqual(fired, ['a@100', 'b@400', 'c@1000']);
    assert.equal(clock.nextTimerAt(), undefined);
  });
});
