import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LONGEST_TIMER_MS, realClock } from '../../src/runtime/clock.js';

describe('realClock timers', () => {
  it('a timer longer than 2^31-1 ms does not fire at once (Node would treat it as 1 ms)', async () => {
    let fired = 0;
    const timers = [LONGEST_TIMER_MS + 1, 2 ** 32, 3_000_000 * 1000].map((ms) => realClock.setTimer(ms, () => fired++));
    await sleep(50);
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
