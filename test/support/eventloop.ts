/**
 * An event loop on a FakeClock, for the sampler's tests: its busy and idle time (what Node's
 * eventLoopUtilization reads) follow what the test says the loop does.
 */
import type { LoopTimes } from '../../src/observability/loopsampler.js';
import type { FakeClock } from '../../src/runtime/testing/clock.js';

export interface FakeLoop {
  loopTimes: LoopTimes;
  /** The loop is busy for ms in one go: time passes and no timer runs meanwhile (a stall). */
  block(ms: number): void;
  /** The loop is busy for ms in short callbacks: timers run on time in between. */
  work(ms: number): Promise<void>;
  /** The loop waits for I/O for ms: only timers run. */
  idle(ms: number): Promise<void>;
}

export function fakeLoop(clock: FakeClock): FakeLoop {
  let busy = 0;
  return {
    loopTimes: () => ({ active: busy, idle: clock.now() - busy }),
    block(ms) {
      busy += ms;
      clock.jump(ms);
    },
    async work(ms) {
      for (let done = 0; done < ms; done += 10) {
        busy += 10;
        await clock.step(10);
      }
    },
    idle: (ms) => clock.step(ms),
  };
}
