/**
 * Time, injectable. Every timing rule in the runtime (backoff, delays, lease expiry, watchdogs)
 * reads time and sets timers through a Clock, so tests drive a FakeClock instead of sleeping.
 */
export interface Timer {
  /** Cancels the timer; harmless when it already fired. */
  cancel(): void;
}

export interface Clock {
  /** Milliseconds on a monotonic scale (never goes back); only differences mean anything. */
  now(): number;
  /** Runs fn once after ms milliseconds. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after ms milliseconds, or at once (rejecting) when signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(abortError(signal!));
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Timers longer than this fire at once under Node's setTimeout (it treats them as 1 ms, with a
 * TimeoutOverflowWarning), so no timer is ever set longer; a deadline further away is reached by
 * re-arming.
 */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** setTimeout for any delay: beyond LONGEST_TIMER_MS it re-arms until the deadline is reached. */
export function longTimeout(ms: number, fn: () => void): Timer {
  let handle: ReturnType<typeof setTimeout>;
  const arm = (left: number): void => {
    const step = Math.min(Math.max(0, left), LONGEST_TIMER_MS);
    handle = setTimeout(() => (left > step ? arm(left - step) : fn()), step);
  };
  arm(Number.isNaN(ms) ? 0 : ms);
  return { cancel: () => clearTimeout(handle) };
}

/** The process's monotonic clock and its real timers (never overflowing: see longTimeout). */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimer: longTimeout,
  sleep(ms, signal) {
    return sleepWith(realClock, ms, signal);
  },
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. Timers fire in deadline order (ties in creation order)
 * during step(), each after its deadline has been reached.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  /** Timers not yet fired nor cancelled. */
  private pending: PendingTimer[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.pending.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of live timers: lets a test check that a part cleaned up after itself. */
  get timerCount(): number {
    return this.pending.filter((t) => !t.cancelled).length;
  }

  /**
   * Advances time by ms, firing every timer that comes due on the way, in order. Yields to the
   * microtask queue after each timer so promise chains woken by it run before the next fires.
   */
  async step(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      this.pending = this.pending.filter((t) => !t.cancelled);
      this.pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.pending[0];
      if (!next || next.at > target) break;
      this.pending.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }
}

/** Lets pending promise callbacks run; a few rounds cover chains of awaits. */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
