/**
 * The event-loop sampler's timer policy (every 100 ms while the loop works, doubling to 1.6 s
 * while it idles), the delay histogram it feeds (Node's monitor's samples, the skipped idle ones
 * included) and the liveness watchdog that reads its ticks, on a FakeClock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventLoopDelayRecorder } from '../../src/observability/eventloopdelay.js';
import { EventLoopSampler, type LoopSample } from '../../src/observability/loopsampler.js';
import { EventLoopWatchdog } from '../../src/observability/watchdog.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';
import { fakeLoop } from '../support/eventloop.js';

function sampled(options: { periodMs?: number; idlePeriodMs?: number } = {}) {
  const clock = new FakeClock();
  const loop = fakeLoop(clock);
  const sampler = new EventLoopSampler({ clock, loopTimes: loop.loopTimes, ...options });
  const samples: LoopSample[] = [];
  const unsubscribe = sampler.subscribe((s) => samples.push(s));
  return { clock, loop, sampler, samples, unsubscribe };
}

describe('event-loop sampler', () => {
  it('ticks every 100 ms while the loop works, doubles the period up to 1.6 s while it idles, and is back at 100 ms after work', async () => {
    const { loop, samples } = sampled();
    await loop.work(500);
    await loop.idle(100 + 200 + 400 + 800 + 1600 + 1600);
    assert.deepEqual(
      samples.map((s) => [s.at, s.periodMs, s.idle]),
      [
        [100, 100, false],
        [200, 100, false],
        [300, 100, false],
        [400, 100, false],
        [500, 100, false],
        [600, 100, true],
        [800, 200, true],
        [1200, 400, true],
        [2000, 800, true],
        [3600, 1600, true],
        [5200, 1600, true],
      ],
    );
    samples.length = 0;
    await loop.work(1600 + 200);
    assert.deepEqual(
      samples.map((s) => [s.at, s.periodMs, s.idle]),
      [
        [6800, 1600, false],
        [6900, 100, false],
        [7000, 100, false],
      ],
    );
  });

  it('reports how late a tick ran and how long the loop was busy before it', async () => {
    const { clock, loop, samples } = sampled();
    loop.block(700);
    await clock.step(0);
    assert.deepEqual(samples, [{ at: 700, periodMs: 100, lateMs: 600, busyMs: 700, idle: false }]);
  });

  it('where the runtime does not measure the loop (Deno reads 0), never counts a tick idle: the period stays 100 ms', async () => {
    const clock = new FakeClock();
    const sampler = new EventLoopSampler({ clock, loopTimes: () => ({ active: 0, idle: 0 }) });
    const samples: LoopSample[] = [];
    sampler.subscribe((s) => samples.push(s));
    await clock.step(1000);
    assert.equal(samples.length, 10);
    for (const s of samples) assert.deepEqual([s.periodMs, s.busyMs, s.idle], [100, undefined, false]);
  });

  it('runs its timer only while someone subscribes', async () => {
    const clock = new FakeClock();
    const sampler = new EventLoopSampler({ clock, loopTimes: fakeLoop(clock).loopTimes });
    assert.equal(clock.timerCount, 0);
    const first = sampler.subscribe(() => undefined);
    const second = sampler.subscribe(() => undefined);
    assert.equal(clock.timerCount, 1, 'one timer for all subscribers');
    first();
    assert.equal(clock.timerCount, 1);
    second();
    assert.equal(clock.timerCount, 0, 'the last unsubscribe cancels it');
    await clock.step(5000);
    const ticks: number[] = [];
    sampler.subscribe((s) => ticks.push(s.at));
    await clock.step(100);
    assert.deepEqual(ticks, [5100], 'starts again at the working period');
  });

  it('refuses a longest period below the working one', () => {
    assert.throws(() => new EventLoopSampler({ periodMs: 100, idlePeriodMs: 50 }), /need 0 < periodMs <= idlePeriodMs, got 100 and 50/);
  });
});

describe('event-loop delay histogram', () => {
  const sample = (periodMs: number, lateMs: number, idle: boolean): LoopSample => ({ at: 0, periodMs, lateMs, busyMs: 0, idle });
  /** Within the histogram's 3 significant digits. */
  const near = (actual: number, expected: number): void =>
    assert.ok(Math.abs(actual - expected) <= expected * 2e-3, `${actual} ~ ${expected}`);

  it("records what Node's monitor did: the time between two runs of a 100 ms timer", () => {
    const recorder = new EventLoopDelayRecorder(100);
    recorder.record(sample(100, 0, true));
    recorder.record(sample(100, 40, false));
    const stats = recorder.read();
    near(stats.min, 0.1);
    near(stats.max, 0.14);
    near(stats.mean, 0.12);
  });

  it('counts the samples an idle long period skipped as on time, and after a busy one only its own', () => {
    const idle = new EventLoopDelayRecorder(100);
    idle.record(sample(1600, 2, true));
    const i = idle.read();
    near(i.p90, 0.1);
    near(i.max, 0.102);
    near(i.mean, (15 * 100 + 102) / 16 / 1000);
    const busy = new EventLoopDelayRecorder(100);
    busy.record(sample(1600, 2, false));
    const b = busy.read();
    near(b.min, 0.102);
    near(b.p50, 0.102);
  });

  it('starts anew at each read, as prom-client reset its histogram at each scrape', () => {
    const recorder = new EventLoopDelayRecorder(100);
    recorder.record(sample(100, 300, false));
    near(recorder.read().max, 0.4);
    assert.equal(recorder.read().max, 0);
  });
});

describe('event-loop watchdog', () => {
  function watched() {
    const clock = new FakeClock();
    const loop = fakeLoop(clock);
    const sampler = new EventLoopSampler({ clock, loopTimes: loop.loopTimes });
    const watchdog = new EventLoopWatchdog({ sampler });
    watchdog.start();
    return { clock, loop, watchdog };
  }

  it('catches in full a stall that begins early in a long idle period, through the busy time (it ends the period only 3.6 s late)', async () => {
    const { clock, loop, watchdog } = watched();
    await loop.idle(100 + 200 + 400 + 800 + 1600); // the period is 1.6 s from the tick at 3100
    loop.block(5200);
    await clock.step(0);
    assert.match(String(watchdog.check()), /^event loop stalled for 5\.2 s, 0\.0 s ago \(threshold 5\.0 s, remembered for 20\.0 s\)$/);
  });

  it('does not count steady work in short callbacks as a stall, at full load, from an idle start', async () => {
    const { loop, watchdog } = watched();
    await loop.idle(10_000);
    await loop.work(30_000);
    assert.equal(watchdog.check(), true);
  });

  it('fails while timers are overdue by the threshold, before any tick could run', () => {
    const { loop, watchdog } = watched();
    loop.block(6000);
    assert.match(String(watchdog.check()), /^timers have not run for 5\.9 s \(threshold 5\.0 s\)$/);
  });

  it('stops reading ticks on stop(), and then passes', async () => {
    const { clock, loop, watchdog } = watched();
    watchdog.stop();
    assert.equal(clock.timerCount, 0, 'the sampler stopped with its last subscriber');
    loop.block(6000);
    await clock.step(0);
    assert.equal(watchdog.check(), true);
  });

  it('refuses a threshold the longest period could reach without a stall', () => {
    const sampler = new EventLoopSampler({ clock: new FakeClock() });
    assert.throws(
      () => new EventLoopWatchdog({ sampler, stallThresholdMs: 1600 }),
      /stallThresholdMs \(1600\) must exceed the sampler's longest period \(1600 ms\)/,
    );
  });
});
